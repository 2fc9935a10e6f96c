export * from './types.js';
export * from './registry.js';
export * from './hooks.js';
export * from './pipeline.js';
