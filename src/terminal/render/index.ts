/**
 * Pure terminal renderers: each takes what the log recorded (or figures folded from it), a width
 * and a colour flag, and returns lines that fit the width, with ANSI styles when colour is on.
 * They draw nothing themselves, so any terminal library (or a plain stream) can show them: the
 * chat screen (`src/terminal/chat`) and `dsh run`'s progress on stderr both do.
 */
export * from './style.js';
export * from './width.js';
export * from './units.js';
export * from './status.js';
export * from './highlight.js';
export * from './markdown.js';
export * from './reasoning.js';
export * from './tools.js';
