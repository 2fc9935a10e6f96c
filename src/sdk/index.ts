export { SdkServer, type SdkHost, type SdkServerOptions, type SdkSession } from './server.js';
export {
  SDK_ERROR_CODES,
  SDK_METHODS,
  SdkError,
  type SdkErrorName,
  type SdkMethod,
  type InitializeParams as SdkInitializeParams,
  type PromptParams as SdkPromptParams,
  type PromptBlock as SdkPromptBlock,
} from './protocol.js';
export { readLines, MAX_LINE_BYTES, type Line } from './lines.js';
