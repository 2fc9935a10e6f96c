/**
 * `dsh log export --format markdown|html`: a session as a transcript to share. One pure pass over
 * the events builds a list of sections (turns, then the messages they committed, with each tool
 * call beside its result); two renderers print it. Every message the log committed is shown, also
 * the ones compaction later replaced (a transcript tells what happened, not what the model sees
 * now: `--format openai|anthropic` give that). Log text is untrusted: Markdown puts it in code
 * fences longer than any backtick run inside, HTML escapes it, and both show the terminal's unsafe
 * characters as escapes.
 */
import { deriveEventMessage } from '../../session/index.js';
import type { SessionEvent } from '../../session/index.js';
import type { ContentBlock, Message } from '../../model/message.js';
import { escapeUnsafe, foldSpaces } from '../../model/unsafe-chars.js';
import { formatImageRef, formatSource, formatTurnEnd, formatUsage } from '../format.js';
import { isoTime } from '../text.js';

export type Part =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'image'; ref: string }
  | { kind: 'call'; id: string; name: string; args: string }
  | { kind: 'result'; callId: string; text: string; error: boolean };

export interface Entry {
  seq: number;
  time: number;
  /** `user`, `assistant`, `tool`, `system`, or the plugin that wrote a context message. */
  who: string;
  /** The source in words (`model deepseek/deepseek-chat`, `plugin @dsh/compaction · notice`). */
  source: string;
  parts: Part[];
  /** Tokens, for a model message. */
  usage?: string;
}

export interface Section {
  /** The turn number, or undefined for what stands outside any turn (a seed, a header). */
  turn: number | undefined;
  entries: Entry[];
  /** How the turn ended, in words; undefined while it is open. */
  end?: string;
}

export interface Transcript {
  sessionId: string;
  title?: string;
  started: number | undefined;
  sections: Section[];
}

function parts(content: readonly ContentBlock[]): Part[] {
  const out: Part[] = [];
  for (const b of content) {
    switch (b.type) {
      case 'text':
        out.push({ kind: 'text', text: b.text });
        break;
      case 'reasoning':
        out.push({ kind: 'reasoning', text: b.text });
        break;
      case 'image':
        out.push({ kind: 'image', ref: formatImageRef(b.attachment) });
        break;
      case 'tool-call':
        out.push({ kind: 'call', id: b.id, name: b.name, args: b.arguments });
        break;
      case 'tool-result':
        out.push({ kind: 'result', callId: b.toolCallId, text: resultText(b.content), error: b.isError === true });
        break;
    }
  }
  return out;
}

function resultText(content: readonly ContentBlock[]): string {
  return content
    .map((b) => (b.type === 'text' || b.type === 'reasoning' ? b.text : b.type === 'image' ? formatImageRef(b.attachment) : `[${b.type}]`))
    .join('\n');
}

function who(m: Message): string {
  const src = m.source as { kind?: unknown; plugin?: unknown } | undefined;
  if (m.role === 'user' && src?.kind === 'tool') return 'tool';
  if (src?.kind === 'plugin' && typeof src.plugin === 'string') return src.plugin;
  return m.role;
}

export function buildTranscript(sessionId: string, events: readonly SessionEvent[]): Transcript {
  const t: Transcript = { sessionId, started: events[0]?.time, sections: [] };
  let open: Section | undefined;
  const section = (turn: number | undefined): Section => {
    if (open && open.turn === turn && open.end === undefined) return open;
    open = { turn, entries: [] };
    t.sections.push(open);
    return open;
  };
  for (const e of events) {
    if (e.type === 'turn/start') {
      open = undefined;
      section(e.data.turn);
      continue;
    }
    if (e.type === 'turn/end') {
      const s = open?.turn === e.data.turn ? open : section(e.data.turn);
      s.end = formatTurnEnd(e.data.reason);
      open = undefined;
      continue;
    }
    if (e.type === 'session/title' && typeof (e.data as { title?: unknown }).title === 'string') {
      t.title = (e.data as { title: string }).title;
      continue;
    }
    const m = e.type === 'assistant/chunk' ? null : deriveEventMessage(e);
    if (!m) continue;
    const entry: Entry = { seq: e.seq, time: e.time, who: who(m), source: formatSource(m.source), parts: parts(m.content) };
    if (e.type === 'assistant/message' && e.data.usage) entry.usage = formatUsage(e.data.usage);
    section(open?.turn).entries.push(entry);
  }
  return t;
}

// ---------------------------------------------------------------- rendering

/** Text with the unsafe characters as visible escapes (newlines and tabs kept). */
const visible = escapeUnsafe;

/** A fence longer than every backtick run in the text, so nothing inside can close it. */
function fence(text: string, info = ''): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const f = '`'.repeat(Math.max(3, longest + 1));
  return `${f}${info}\n${visible(text)}\n${f}`;
}

/**
 * One line of untrusted text inside a Markdown line (never at its start): the characters that open
 * inline markup (emphasis, code, links, HTML, tables, strike) are escaped.
 */
function mdInline(s: string): string {
  return visible(foldSpaces(s)).replace(/[\\`*_[\]<>|~&]/g, (c) => `\\${c}`);
}

function argsText(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args; // what the model wrote, as it wrote it
  }
}

function turnTitle(s: Section): string {
  return s.turn === undefined ? 'Before the first turn' : `Turn ${s.turn}`;
}

export function toMarkdown(t: Transcript): string {
  const out: string[] = [`# ${t.title !== undefined ? mdInline(t.title) : `Session ${mdInline(t.sessionId)}`}`, ''];
  out.push(`Session \`${visible(t.sessionId).replace(/`/g, '')}\`${t.started !== undefined ? `, started ${isoTime(t.started)}` : ''}.`, '');
  for (const s of t.sections) {
    out.push(`## ${turnTitle(s)}`, '');
    for (const e of s.entries) {
      out.push(`### ${mdInline(e.who)} · seq ${e.seq}`, '', `*${mdInline(e.source)}${e.usage ? ` · ${mdInline(e.usage)}` : ''}*`, '');
      for (const p of e.parts) {
        switch (p.kind) {
          case 'text':
            out.push(fence(p.text, 'text'), '');
            break;
          case 'reasoning':
            out.push('Reasoning:', '', fence(p.text, 'text'), '');
            break;
          case 'image':
            out.push(mdInline(p.ref), '');
            break;
          case 'call':
            out.push(`Tool call **${mdInline(p.name)}** (${mdInline(p.id)}):`, '', fence(argsText(p.args), 'json'), '');
            break;
          case 'result':
            out.push(`Result of ${mdInline(p.callId)}${p.error ? ' (error)' : ''}:`, '', fence(p.text, 'text'), '');
            break;
        }
      }
    }
    out.push(
      s.end !== undefined ? `*Turn ended: ${mdInline(s.end)}*` : s.turn === undefined ? '' : '*The turn has no end in the log.*',
      '',
    );
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function h(s: string): string {
  return visible(s).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

const STYLE = `body{font:14px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.6em;border-radius:4px}
.meta{color:#666;font-size:90%}.reasoning pre{background:#f3f0fa}.error pre{background:#fbeaea}
section{border-top:1px solid #ddd;margin-top:1.5em}article{margin:1em 0}`;

export function toHtml(t: Transcript): string {
  const title = t.title ?? `Session ${t.sessionId}`;
  const out: string[] = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // A shared transcript runs nothing and loads nothing: log text stays text.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${h(title)}</title><style>${STYLE}</style></head><body>`,
    `<h1>${h(title)}</h1>`,
    `<p class="meta">Session <code>${h(t.sessionId)}</code>${t.started !== undefined ? `, started ${h(isoTime(t.started))}` : ''}</p>`,
  ];
  for (const s of t.sections) {
    out.push(`<section><h2>${h(turnTitle(s))}</h2>`);
    for (const e of s.entries) {
      out.push(`<article id="seq-${e.seq}"><h3>${h(e.who)} <span class="meta">· seq ${e.seq}</span></h3>`);
      out.push(`<p class="meta">${h(e.source)}${e.usage ? ` · ${h(e.usage)}` : ''}</p>`);
      for (const p of e.parts) {
        switch (p.kind) {
          case 'text':
            out.push(`<pre>${h(p.text)}</pre>`);
            break;
          case 'reasoning':
            out.push(`<details class="reasoning"><summary>Reasoning</summary><pre>${h(p.text)}</pre></details>`);
            break;
          case 'image':
            out.push(`<p>${h(p.ref)}</p>`);
            break;
          case 'call':
            out.push(`<p>Tool call <strong>${h(p.name)}</strong> <code>${h(p.id)}</code></p><pre>${h(argsText(p.args))}</pre>`);
            break;
          case 'result':
            out.push(
              `<div class="${p.error ? 'error' : 'result'}"><p>Result of <code>${h(p.callId)}</code>${p.error ? ' (error)' : ''}` +
                `</p><pre>${h(p.text)}</pre></div>`,
            );
            break;
        }
      }
      out.push('</article>');
    }
    if (s.end !== undefined) out.push(`<p class="meta">Turn ended: ${h(s.end)}</p>`);
    else if (s.turn !== undefined) out.push('<p class="meta">The turn has no end in the log.</p>');
    out.push('</section>');
  }
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}
