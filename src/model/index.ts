export * from './json.js';
export * from './message.js';
export * from './history.js';
export * from './usage.js';
export * from './stream.js';
export * from './failure.js';
export * from './request.js';
export * from './coded-error.js';
