/** What a store call failed with: its StoreError code, another error as text, undefined when it succeeded. */
import { StoreError } from '../../../src/store/index.js';

export async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e instanceof StoreError ? e.code : String(e);
  }
}
