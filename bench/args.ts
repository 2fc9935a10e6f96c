/**
 * Command-line arguments of the bench scripts: `-h`/`--help` prints the script's usage and exits
 * 0; an unknown option or a malformed number is one line on stderr, the usage, and exit 2, never a
 * stack trace or a run with NaN repetitions.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parse `process.argv` against `options` (plus `--help`), or print `usage` and exit. */
export function benchArgs<T extends Options>(usage: string, options: T) {
  const text = usage.endsWith('\n') ? usage : `${usage}\n`;
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }).values;
  } catch (e) {
    fail(text, (e as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(text);
    process.exit(0);
  }
  return { values: values as ReturnType<typeof parseArgs<{ options: T }>>['values'], usage: text };
}

/** A count option (`--reps 5`): a positive integer, or `fallback` when absent. */
export function count(usage: string, name: string, value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) fail(usage, `--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

/** A positive decimal option (`--mb-per-session 1.5`), or `fallback` when absent. */
export function amount(usage: string, name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : NaN;
  if (!(n > 0)) fail(usage, `--${name} must be a positive number, got ${JSON.stringify(value)}`);
  return n;
}

/** A comma-separated choice among `allowed` (`--only startup,listing`); undefined when absent. */
export function choices(usage: string, name: string, value: string | undefined, allowed: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  const picked = value.split(',');
  for (const p of picked) if (!allowed.includes(p)) fail(usage, `--${name} ${JSON.stringify(p)}: one of ${allowed.join(', ')}`);
  return picked;
}

/** A list of counts (`--sessions 1000,10000`). */
export function countList(usage: string, name: string, value: string | undefined, fallback: string): number[] {
  return (value ?? fallback).split(',').map((v) => count(usage, name, v, 0));
}

function fail(usage: string, message: string): never {
  process.stderr.write(`${message}\n\n${usage}`);
  process.exit(2);
}
