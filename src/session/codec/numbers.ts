/**
 * Numbers that JSON text cannot hand to JavaScript exactly. `JSON.parse` rounds silently: an
 * integer past 2^53 becomes its nearest double (`9007199254740993` → …992), a tiny value
 * underflows to 0 (`1e-400`), a huge one overflows to Infinity (`1e400`), and `-0` parses as -0,
 * which is written back as 0. The log is lossless on load as on append, so such a token is
 * found in the line's text and refused with its JSON path, never loaded rounded.
 *
 * Cost: a line is tokenised only when a cheap pre-check (`mayHoldLossyNumber`) finds what could
 * be such a token; the pre-check may fire on look-alikes inside strings (then the scan runs and
 * finds nothing, costing time, never a false refusal) but never misses a lossy token.
 */

/**
 * Why the pre-check is enough. A token with at most 15 significant digits whose value is a
 * normal double comes back exactly (a double carries 15.95 decimal digits, so the shortest
 * spelling of the value is the token's value again). So a lossy token has one of:
 *  - 16 or more digits in its mantissa: then the text holds a run of 16 or more characters from
 *    [0-9.] (the mantissa `\d+(\.\d+)?` is contiguous). Any 16 consecutive positions hold
 *    exactly one position ≡ 15 (mod 16), so looking at every 16th character and measuring the run
 *    around each digit or dot found there finds every such run: 1/16 of the line is read.
 *  - a value out of the normal range (overflow to Infinity, underflow to 0, a subnormal) with a
 *    short mantissa: that needs an exponent of three or more digits (|e| ≥ 293): `[eE][-+]?\d{3}`.
 *  - the value -0 with a short spelling: `-0`, `-0.0…`, `-0e…`, followed by what ends a token
 *    (whitespace, `,`, `]`, `}` or the end), so a uuid's `-0a1b` or a date's `-01` does not fire.
 * The two patterns start with a literal, which V8 searches for far faster than a pattern that
 * starts with a character class (the digit-run test as a regex cost 60% of JSON.parse's time).
 */
const BIG_EXPONENT = /[eE][-+]?\d{3}/;
const NEGATIVE_ZERO = /-0(?:\.0+)?(?:[eE][-+]?\d+)?(?:[\s,\]}]|$)/;

/** Is there a run of 16 or more characters from [0-9.] in `text`? */
function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  for (let p = 15; p < n; p += 16) {
    const c = text.charCodeAt(p);
    if (!((c >= 48 && c <= 57) || c === 46)) continue;
    let a = p;
    while (a > 0) {
      const d = text.charCodeAt(a - 1);
      if ((d >= 48 && d <= 57) || d === 46) a--;
      else break;
    }
    let b = p + 1;
    while (b < n && b - a < 16) {
      const d = text.charCodeAt(b);
      if ((d >= 48 && d <= 57) || d === 46) b++;
      else break;
    }
    if (b - a >= 16) return true;
  }
  return false;
}

/** Could `text` hold a number token that does not survive `JSON.parse` exactly? (No false negatives.) */
export function mayHoldLossyNumber(text: string): boolean {
  return hasLongDigitRun(text) || BIG_EXPONENT.test(text) || (text.includes('-0') && NEGATIVE_ZERO.test(text));
}

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
  if (!mayHoldLossyNumber(text)) return undefined;
  return scan(text);
}

/** `lossyNumber` without the pre-check: every line tokenised (the reference the tests hold it to). */
export function lossyNumberScan(text: string): LossyNumber | undefined {
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
    else if (f.key !== undefined)
      p += IDENT.test(f.key) ? `.${f.key}` : `[${JSON.stringify(f.key.length > 40 ? `${f.key.slice(0, 40)}…` : f.key)}]`;
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
