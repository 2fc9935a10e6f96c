export { createCodingAgent, type CodingAgent, type CodingAgentOptions } from './agent.js';
export * from './hook-bridge/index.js';
export { CODING_SYSTEM_PROMPT, MINIMAL_SYSTEM_PROMPT } from './prompt.js';
export { recordedPreset } from './agent.js';
export {
  runtimeContext,
  workspaceInstructions,
  defaultContextSections,
  gitBranch,
  lastSnapshot,
  RUNTIME_CONTEXT_PLUGIN,
  INSTRUCTIONS_PLUGIN,
  type ContextSection,
} from './context.js';
