/**
 * `dsh log call <log> <call-id>`: one tool call's round trip: the message that issued it and the
 * chunks that carried it, the call, hooks and approvals, the result, and the times between them.
 * An id used in several steps prints each round trip.
 */
import { callOf, type CallRoundTrip } from '../../query/index.js';
import { EXIT_OK } from '../errors.js';
import { argsPreview, formatImageRef } from '../format.js';
import type { Io, Output } from '../output.js';
import { loadNotices, readLog, type CliLog } from '../read-log.js';
import { fields } from '../table.js';
import { oneLine, preview, safeJson } from '../text.js';
import { query } from './context.js';
import { ms, seqList } from './figures.js';

export interface CallOptions {
  json?: boolean;
  full?: boolean;
}

function resultText(log: CliLog, seq: number, max: number | undefined): string {
  const e = log.session.at(seq);
  const block = (e?.data as { message?: { content?: { content?: unknown }[] } } | undefined)?.message?.content?.[0];
  const parts: string[] = [];
  for (const b of Array.isArray(block?.content) ? block.content : []) {
    const o = (b ?? {}) as Record<string, unknown>;
    if ((o.type === 'text' || o.type === 'reasoning') && typeof o.text === 'string') parts.push(o.text);
    else if (o.type === 'image') parts.push(formatImageRef(o.attachment));
  }
  return preview(parts.join(' '), max);
}

function tripLines(t: CallRoundTrip, log: CliLog, full: boolean, out: Output): string[] {
  const width = full ? undefined : 100;
  const rows: [string, string][] = [];
  if (t.issuedBy) {
    const i = t.issuedBy;
    rows.push([
      'issued by',
      `#${i.message.seq} assistant/message, block ${i.block}${i.chunks.length ? ` · chunks ${seqList(i.chunks)}` : ' · no chunks cited'}`,
    ]);
  } else rows.push(['issued by', out.style('yellow', 'no assistant/message in its step names this call')]);
  if (t.call) {
    rows.push(['call', `#${t.call.seq} tool/call`]);
    rows.push(['arguments', argsPreview(t.call.arguments, width)]);
  } else if (t.issuedBy) rows.push(['arguments', argsPreview(t.issuedBy.arguments, width)]);
  if (!t.call)
    rows.push([
      'call',
      out.style('yellow', t.state === 'not-started' ? 'none: the call was never started (its result says so)' : 'none recorded'),
    ]);
  for (const h of t.hooks) {
    const seqs = [h.invoked?.seq, h.result?.seq].filter((s): s is number => s !== undefined);
    const point = oneLine(h.invoked?.point ?? h.result?.point ?? '?');
    const handler = oneLine(h.invoked?.handlerId ?? h.result?.handlerId ?? '?');
    const r = h.result;
    const outcome = r
      ? ` → ${oneLine(r.decision ?? '?')}` +
        `${r.exitCode !== undefined ? ` (exit ${r.exitCode}${r.durationMs !== undefined ? `, ${ms(r.durationMs)}` : ''})` : ''}` +
        `${r.summary ? `: ${preview(r.summary, width)}` : ''}`
      : ' (no result)';
    rows.push([
      'hook',
      `${seqList(seqs)} ${point} ${handler}${outcome}` +
        `${h.attribution === 'overlapping' ? out.style('dim', ' (other calls were in flight)') : ''}`,
    ]);
  }
  for (const a of t.approvals) {
    const decided = a.decided ? ` → ${oneLine(a.decided.outcome ?? '?')} (#${a.decided.seq})` : ' → no decision recorded';
    rows.push(['approval', `#${a.asked.seq} asked${a.asked.reason ? `: ${preview(a.asked.reason, width)}` : ''}${decided}`]);
  }
  if (t.result) {
    const r = t.result;
    const status = r.isError ? out.style('red', `error${r.error?.code ? ` ${oneLine(r.error.code)}` : ''}`) : out.style('green', 'ok');
    rows.push(['result', `#${r.event.seq} tool/result ${status}: ${resultText(log, r.event.seq, width)}`]);
    for (const x of r.replacedBy) rows.push(['replaced by', `#${x.seq} ${oneLine(x.type)}`]);
  } else rows.push(['result', out.style('yellow', 'none: unanswered')]);
  const tm = t.timings;
  const times = [
    tm.argumentsStreamMs !== undefined ? `arguments streamed in ${ms(tm.argumentsStreamMs)}` : undefined,
    tm.dispatchMs !== undefined ? `dispatched after ${ms(tm.dispatchMs)}` : undefined,
    tm.durationMs !== undefined ? `ran ${ms(tm.durationMs)}` : undefined,
    tm.totalMs !== undefined ? `total ${ms(tm.totalMs)}` : undefined,
  ].filter((x) => x !== undefined);
  rows.push(['times', times.length ? times.join(' · ') : '-']);
  return fields(rows, out, '  ');
}

export async function runCall(path: string, callId: string, opts: CallOptions, io: Io): Promise<number> {
  const log = await readLog(path);
  for (const l of loadNotices(log)) io.err.line(`${io.err.style('yellow', 'warning')}: ${l}`);
  // The file's events only, as stats and the viewer read them: crash repair's closers (an
  // invented TOOL_OUTCOME_UNKNOWN result for each call in flight) are no answer to the call.
  const s = log.session;
  const written = log.eventCount;
  const file = {
    id: s.id,
    header: s.header,
    length: () => written,
    at: (seq: number) => s.at(seq)!,
    since: (from: number) => s.since(from),
  };
  const trips = query(log.file, () => callOf(file, callId));
  if (opts.json) {
    io.out.line(safeJson({ file: log.file, sessionId: log.header.id, callId, roundTrips: trips }, 2));
    return EXIT_OK;
  }
  const o = io.out;
  trips.forEach((t, i) => {
    if (i > 0) o.line();
    const where = t.turn !== undefined ? ` · turn ${t.turn}${t.step !== undefined ? ` step ${t.step}` : ''}` : '';
    const tone = t.state === 'answered' ? (t.result?.isError ? 'red' : 'green') : 'yellow';
    const of = trips.length > 1 ? ` (round trip ${i + 1} of ${trips.length})` : '';
    o.line(`${o.style('bold', `call ${oneLine(t.callId)}`)} · ${oneLine(t.name ?? '?')}${where} · ${o.style(tone, t.state)}${of}`);
    for (const l of tripLines(t, log, opts.full === true, o)) o.line(l);
  });
  return EXIT_OK;
}
