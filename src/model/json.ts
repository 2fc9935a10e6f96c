/**
 * JSON value vocabulary. Everything the log stores is a `JsonValue`; `Session.append` enforces it
 * at runtime (see `session/json.ts`), these types enforce it at compile time where they can.
 */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonArray | JsonObject;
export type JsonArray = readonly JsonValue[];
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** Recursively read-only view of a value; what frozen log data looks like to its readers. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;
