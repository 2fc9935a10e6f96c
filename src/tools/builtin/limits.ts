/** Defaults the built-in tools apply and their schemas describe (kept apart so neither imports the other). */
export const DEFAULT_READ_LIMIT = 2000;
export const DEFAULT_WAIT_MS = 30_000;
