/**
 * Numbers that JSON text cannot hand to JavaScript exactly. `JSON.parse` rounds silently: an
 * integer past 2^53 becomes its nearest double (`9007199254740993` → …992), a tiny value
 * underflows to 0 (`1e-400`), a huge one overflows to Infinity (`1e400`), and `-0` parses as -0,
 * which is written back as 0. The log is lossless on load as on append, so such a token is
 * found in the line's text and refused with its JSON path, never loaded rounded.
 *
 * Cost: a line is tokenised only when a cheap pre-check finds what could be such a token (see
 * SUSPECT); anything else cannot lose precision (15 significant digits always survive a double).
 * The pattern can also match inside a string ("ratio:1e5"): then the scan runs and finds
 * nothing, costing time, never a false refusal.
 */

/**
 * A number token starts right after `:`, `,` or `[` (and optional whitespace). Flagged: one with
 * 16 or more digits, one with an exponent, one that starts `-0` and is not followed by a non-zero
 * digit at once (`-0.5` is flagged too; the scan clears it). Ids with hex digits (`3e8f…`) sit
 * inside strings and do not start after those characters, so ordinary lines are not flagged.
 */
const SUSPECT = /[:,[]\s*-?[\d.]{16}|[:,[]\s*-?[\d.]+[eE]|[:,[]\s*-0[^1-9]/;

export interface LossyNumber {
  /** JSON path of the number, e.g. `$.data.content[0].n`. */
  path: string;
  /** The token as written (cut to 40 characters). */
  token: string;
  /** What `JSON.parse` makes of it, in words. */
  why: string;
}

/** The first number in `text` (one valid JSON value) that does not survive parsing exactly. */
export function lossyNumber(text: string): LossyNumber | undefined {
  if (!SUSPECT.test(text)) return undefined;
  return scan(text);
}

/** Why a JSON number token does not come through `JSON.parse` exactly, or undefined if it does. */
export function numberProblem(token: string): string | undefined {
  const v = Number(token);
  if (v === Infinity || v === -Infinity) return `it is too large for a double and reads back as ${v}`;
  if (v === 0) {
    if (token.charCodeAt(0) === 45) return '-0 reads back as 0 once written (-0 is not lossless JSON)';
    return /[1-9]/.test(mantissa(token)) ? 'it is too small for a double and reads back as 0 (underflow)' : undefined;
  }
  // Up to 15 significant digits and no exponent: always exact.
  if (token.length <= 15 && !/[eE]/.test(token)) return undefined;
  return decimal(token) === decimal(String(v)) ? undefined : `a double cannot hold it exactly; it reads back as ${String(v)}`;
}

function mantissa(token: string): string {
  const e = token.search(/[eE]/);
  return e < 0 ? token : token.slice(0, e);
}

/** Canonical decimal form of a number's text: sign, significant digits, exponent. */
function decimal(s: string): string {
  let sign = '';
  let t = s;
  if (t.charCodeAt(0) === 45) {
    sign = '-';
    t = t.slice(1);
  }
  const e = t.search(/[eE]/);
  let exp = 0;
  let m = t;
  if (e >= 0) {
    exp = Number(t.slice(e + 1));
    m = t.slice(0, e);
  }
  const dot = m.indexOf('.');
  let digits = m;
  if (dot >= 0) {
    digits = m.slice(0, dot) + m.slice(dot + 1);
    exp -= m.length - dot - 1;
  }
  let a = 0;
  while (a < digits.length - 1 && digits.charCodeAt(a) === 48) a++;
  let b = digits.length;
  while (b > a + 1 && digits.charCodeAt(b - 1) === 48) {
    b--;
    exp++;
  }
  digits = digits.slice(a, b);
  if (digits === '0') return '0';
  return `${sign}${digits}e${exp}`;
}

const IDENT = /^[A-Za-z_$][\w$]*$/;

interface Frame {
  arr: boolean;
  index: number;
  key: string | undefined;
}

function pathOf(stack: readonly Frame[]): string {
  let p = '$';
  for (const f of stack) {
    if (f.arr) p += `[${f.index}]`;
    else if (f.key !== undefined) p += IDENT.test(f.key) ? `.${f.key}` : `[${JSON.stringify(f.key.length > 40 ? `${f.key.slice(0, 40)}…` : f.key)}]`;
  }
  return p;
}

/** Tokenise `text` (valid JSON) and check every number token, tracking where it sits. */
function scan(text: string): LossyNumber | undefined {
  const stack: Frame[] = [];
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // a string: find its closing quote (a backslash escapes the next character)
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) return undefined; // not valid JSON after all: nothing to say about numbers
        let bs = 0;
        for (let k = q - 1; k > i && text.charCodeAt(k) === 92; k--) bs++;
        j = q + 1;
        if (bs % 2 === 0) break;
      }
      if (expectKey) {
        const top = stack[stack.length - 1]!;
        try {
          top.key = JSON.parse(text.slice(i, j)) as string;
        } catch {
          top.key = text.slice(i + 1, j - 1);
        }
        expectKey = false;
      }
      i = j;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) j++;
        else break;
      }
      const token = text.slice(i, j);
      const why = numberProblem(token);
      if (why !== undefined) return { path: pathOf(stack), token: token.length > 40 ? `${token.slice(0, 40)}…` : token, why };
      i = j;
      continue;
    }
    switch (c) {
      case 123: // {
        stack.push({ arr: false, index: 0, key: undefined });
        expectKey = true;
        break;
      case 91: // [
        stack.push({ arr: true, index: 0, key: undefined });
        break;
      case 125: // }
      case 93: // ]
        stack.pop();
        expectKey = false;
        break;
      case 44: {
        // ,
        const top = stack[stack.length - 1];
        if (top?.arr) top.index++;
        else expectKey = true;
        break;
      }
      default:
        break;
    }
    i++;
  }
  return undefined;
}
