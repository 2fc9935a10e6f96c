/**
 * A bracketed paste reaches the prompt as it was pasted (issue 15 review 4, R4-12). pi-tui's
 * editor turns a pasted tab into four spaces and drops every other control byte, so a pasted
 * Makefile recipe or a TSV row lost its tabs, and a byte a user pasted to show the model was gone
 * without a word. A paste holding a tab or a control byte is kept whole instead, as one of the
 * editor's paste markers (`[paste #1 12 chars]`, what pi-tui shows for a long paste): the editor
 * never draws a raw tab or control byte (a terminal would act on it), and the prompt sent is the
 * text pasted, line ends made LF. The transcript shows it made safe like any prompt (a tab as
 * spaces, a control byte as its escape); the log records it as it was.
 */
import type { Editor } from '@mariozechner/pi-tui';

/** A tab, or a C0/C1 control other than a line end. */
const KEPT_ONLY_AS_MARKER = /[\t\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/;

/** What the editor has inside, to reach it (its fields are private to TypeScript, not to JavaScript). */
interface EditorInside {
  handlePaste(text: string): void;
  pastes: Map<number, string>;
  pasteCounter: number;
  historyIndex: number;
  lastAction: unknown;
  cancelAutocomplete(): void;
  pushUndoSnapshot(): void;
  insertTextAtCursorInternal(text: string): void;
}

/** Makes `editor` keep a paste that holds a tab or a control byte exactly. */
export function keepPastedText(editor: Editor): void {
  const inside = editor as unknown as EditorInside;
  const own = inside.handlePaste.bind(editor);
  inside.handlePaste = (pasted: string): void => {
    // Some terminals send a control byte inside a paste as CSI-u Ctrl+letter (`\e[106;5u`).
    const text = pasted
      .replace(/\x1b\[(\d+);5u/g, (m, code: string) => {
        const cp = Number(code);
        return cp >= 97 && cp <= 122 ? String.fromCharCode(cp - 96) : cp >= 65 && cp <= 90 ? String.fromCharCode(cp - 64) : m;
      })
      .replace(/\r\n?/g, '\n');
    if (!KEPT_ONLY_AS_MARKER.test(text)) return own(pasted);
    inside.cancelAutocomplete();
    inside.historyIndex = -1;
    inside.lastAction = null;
    inside.pushUndoSnapshot();
    const id = ++inside.pasteCounter;
    inside.pastes.set(id, text);
    const lines = text.split('\n').length;
    inside.insertTextAtCursorInternal(lines > 1 ? `[paste #${id} +${lines} lines]` : `[paste #${id} ${text.length} chars]`);
  };
}
