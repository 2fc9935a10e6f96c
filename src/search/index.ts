/** Full-text search across sessions (SQLite FTS5, loaded only when a search runs). See docs/cli.md. */
export { search, refresh, ftsQuery, snippet, type SearchOptions, type SearchHit, type SearchResult, type RefreshStats } from './search.js';
export { docsOf, type Doc, type DocKind } from './extract.js';
export { SearchError, type SearchErrorCode } from './errors.js';
