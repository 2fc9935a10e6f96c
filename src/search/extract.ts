/**
 * What search indexes of an event: the text a person would look for. One document per kind:
 *
 *   prompt     a user's message (source `user`)
 *   context    other input the model saw (plugin messages: instructions, summaries, snapshots)
 *   answer     the text of an assistant message
 *   reasoning  its reasoning
 *   call       a tool call: its name and raw arguments
 *   result     a tool result's text (and its error code)
 *   title      a recorded session title
 *
 * Stream chunks are not indexed: their text is in the message they assembled (a stream that never
 * assembled one, an attempt that failed, is not searchable, as in the viewer).
 */
export type DocKind = 'prompt' | 'context' | 'answer' | 'reasoning' | 'call' | 'result' | 'title';

export interface Doc {
  kind: DocKind;
  text: string;
}

type O = Record<string, unknown>;
const isObj = (v: unknown): v is O => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Text blocks, nested tool-result blocks included, walked without recursion. */
function blockText(content: unknown, kinds: ReadonlySet<string>): string {
  const out: string[] = [];
  const stack: unknown[] = [content];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    if (!isObj(v)) continue;
    if (typeof v.text === 'string' && kinds.has(v.type as string)) out.push(v.text);
    else if (v.type === 'tool-result') stack.push(v.content);
  }
  return out.join('\n');
}

const TEXT = new Set(['text']);
const REASONING = new Set(['reasoning']);

/** The documents of one event (`type` and its `data`), in a fixed order. */
export function docsOf(type: string, data: unknown): Doc[] {
  if (!isObj(data)) return [];
  switch (type) {
    case 'user/message': {
      const text = blockText(data.content, TEXT);
      const src = isObj(data.source) ? data.source.kind : undefined;
      return text ? [{ kind: src === 'user' ? 'prompt' : 'context', text }] : [];
    }
    case 'assistant/message': {
      const m = isObj(data.message) ? data.message : undefined;
      if (!m) return [];
      const out: Doc[] = [];
      const text = blockText(m.content, TEXT);
      if (text) out.push({ kind: 'answer', text });
      const reasoning = blockText(m.content, REASONING);
      if (reasoning) out.push({ kind: 'reasoning', text: reasoning });
      return out;
    }
    case 'tool/call': {
      const name = typeof data.name === 'string' ? data.name : '';
      const args = typeof data.arguments === 'string' ? data.arguments : '';
      return name || args ? [{ kind: 'call', text: `${name} ${args}` }] : [];
    }
    case 'tool/result': {
      const m = isObj(data.message) ? data.message : undefined;
      const text = m ? blockText(m.content, TEXT) : '';
      const code = isObj(data.error) && typeof data.error.code === 'string' ? data.error.code : '';
      const all = code ? `${text}\n${code}` : text;
      return all ? [{ kind: 'result', text: all }] : [];
    }
    case 'session/title':
      return typeof data.title === 'string' && data.title ? [{ kind: 'title', text: data.title }] : [];
    default:
      return [];
  }
}

/** Event types that can hold documents, and `turn/start` (it sets the turn of what follows). */
export const INDEXED_TYPES: ReadonlySet<string> = new Set([
  'user/message',
  'assistant/message',
  'tool/call',
  'tool/result',
  'session/title',
  'turn/start',
]);

/**
 * The type of a stored line without parsing it, when dsh wrote it (`{"type":"…",` first): most
 * lines of a log are stream chunks, and skipping them unparsed is most of indexing's speed.
 * Undefined when the line does not start that way (then it is parsed to find out).
 */
export function lineType(line: string): string | undefined {
  if (!line.startsWith('{"type":"')) return undefined;
  const end = line.indexOf('"', 9);
  return end < 0 ? undefined : line.slice(9, end);
}
