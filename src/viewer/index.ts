/**
 * The viewer layer: a local, read-only web page over one session log (docs/viewer.md). It sits
 * above the session and store layers; the `dsh view` command is a thin wrapper over
 * `startViewer`.
 */
export { startViewer, SECURITY_HEADERS, type Viewer, type ViewerOptions } from './server.js';
export { ViewerError, type ViewerErrorCode } from './errors.js';
export type { ViewerSource } from './source/open.js';
export type { FollowState } from './source/source.js';
