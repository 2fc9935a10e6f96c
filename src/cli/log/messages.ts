/**
 * `dsh log messages <file> [--at SEQ]`: the model-visible history as derived from the log
 * through seq SEQ inclusive (the end of the log by default), by the same per-event projection
 * the harness uses. `--json` prints the exact message objects.
 */
import { deriveEventMessage, deriveMessagesFrom, stringifyJson, type SessionEvent } from '../../session/index.js';
import type { ContentBlock, Message } from '../../model/message.js';
import { CliError, EXIT_OK } from '../errors.js';
import { blockLine, DEFAULT_WIDTHS, formatImageRef, formatSource } from '../format.js';
import type { Io, Output } from '../output.js';
import { loadNotices, readLog } from '../read-log.js';
import { block, oneLine, plural, safeJson, truncate } from '../text.js';

export interface MessagesOptions {
  at?: number;
  json?: boolean;
  brief?: boolean;
}

/** Which event each derived message is the payload of (projection returns the payload itself). */
function messageSeqs(events: readonly SessionEvent[], through: number): Map<Message, number> {
  const seqs = new Map<Message, number>();
  for (let i = 0; i <= through; i++) {
    const m = deriveEventMessage(events[i]!);
    if (m) seqs.set(m, i);
  }
  return seqs;
}

function indented(text: string, indent: string): string[] {
  return block(text)
    .split('\n')
    .map((l) => (l.length ? indent + l : ''));
}

/** Tool results nest blocks; past this depth the text view stops indenting and says so. */
const MAX_NESTING = 32;

/** A block's lines, nested results indented under their result; iterative (logs nest freely). */
function blockLines(root: ContentBlock, indent: string): string[] {
  const out: string[] = [];
  const stack: { b: ContentBlock; depth: number }[] = [{ b: root, depth: 0 }];
  while (stack.length > 0) {
    const { b, depth } = stack.pop()!;
    const at = indent + '  '.repeat(depth);
    switch (b.type) {
      case 'text':
      case 'reasoning':
        out.push(`${at}${b.type}:`, ...indented(b.text, `${at}  `));
        break;
      case 'tool-call':
        out.push(`${at}tool-call ${oneLine(b.name)} [${oneLine(b.id)}] arguments:`, ...indented(b.arguments, `${at}  `));
        break;
      case 'tool-result':
        out.push(`${at}tool-result [${oneLine(b.toolCallId)}] ${b.isError ? 'isError: true' : 'ok'}`);
        if (b.content.length > 0 && depth + 1 > MAX_NESTING) {
          out.push(`${at}  … blocks nested deeper than ${MAX_NESTING} levels are not shown (--json shows them)`);
          break;
        }
        for (let i = b.content.length - 1; i >= 0; i--) stack.push({ b: b.content[i]!, depth: depth + 1 });
        break;
      case 'image':
        out.push(`${at}${formatImageRef(b.attachment)}`);
        break;
      default:
        out.push(`${at}${oneLine(String((b as { type: unknown }).type))} block: ${oneLine(truncate(stringifyJson(b), 2000))}`);
    }
  }
  return out;
}

function describeAt(e: SessionEvent, end: boolean): string {
  const d = e.data as { turn?: unknown; step?: unknown } | null;
  const where = typeof d?.turn === 'number' ? `, turn ${d.turn}${typeof d.step === 'number' ? ` step ${d.step}` : ''}` : '';
  return `seq ${e.seq} (${oneLine(e.type)}${where}${end ? ', end of log' : ''})`;
}

function renderHuman(
  messages: readonly Message[],
  seqs: Map<Message, number>,
  at: SessionEvent,
  end: boolean,
  brief: boolean,
  out: Output,
): void {
  out.line(out.style('bold', `history as of ${describeAt(at, end)}: ${plural(messages.length, 'message')}`));
  messages.forEach((m, i) => {
    const seq = seqs.get(m);
    out.line();
    out.line(
      out.style('bold', `[${i}] ${m.role}`) +
        ` · ${formatSource(m.source)} · ${oneLine(m.id)}${seq !== undefined ? out.style('dim', ` · seq ${seq}`) : ''}`,
    );
    for (const b of m.content) {
      if (brief) out.line(`    ${blockLine(b, DEFAULT_WIDTHS)}`);
      else for (const l of blockLines(b, '    ')) out.line(l);
    }
  });
}

export async function runMessages(path: string, opts: MessagesOptions, io: Io): Promise<number> {
  if (opts.json && opts.brief)
    throw new CliError('USAGE', '--json prints the exact message objects and --brief a short text view; give one of them');
  const log = await readLog(path);
  for (const n of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${n}`);
  const events = log.session.events;
  // The end-of-seed marker the loader appends is not part of the file and changes no history.
  const last = log.eventCount + log.repaired.length - 1;
  const at = opts.at ?? last;
  if (at > last) {
    const range = last < 0 ? 'it has no events' : `its seqs are 0…${last}`;
    throw new CliError('SEQ_OUT_OF_RANGE', `--at ${at} is outside the log: ${range}`, { file: log.file });
  }
  const messages = at < 0 ? [] : deriveMessagesFrom(events, at);
  if (opts.json) {
    io.out.line(safeJson(messages, 2));
    return EXIT_OK;
  }
  if (at < 0) {
    io.out.line('history: the log has no events, so no messages');
    return EXIT_OK;
  }
  renderHuman(messages, messageSeqs(events, at), events[at]!, at === last, opts.brief === true, io.out);
  return EXIT_OK;
}
