export * from './config.js';
export { configShape, ConfigSchema } from './schema.js';
