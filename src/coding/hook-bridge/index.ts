export { HOOK_POINTS, HookConfigError, parseHookConfig, readHookConfig } from './config.js';
export type { HookConfig, HookConfigCode, HookDialect, HookPoint } from './config.js';
export { HOOK_PLUGIN_NAME, hookBridge } from './plugin.js';
export type { HookBridgeOptions } from './plugin.js';
export { mergeOutcomes, readOutcome } from './outcome.js';
export type { HookVerdict, HookFailureCode, HookOutcome } from './outcome.js';
export { loadHookConfigs, PROJECT_HOOK_FILES, userHookFiles } from './discover.js';
export type { HookFile, LoadedHooks } from './discover.js';
