// Reading numbers the reader typed. Errors come back as messages for the
// page to show next to the field; nothing here throws.

const FLT_MAX = 3.4028234663852886e38;
const MAX_VALUES = 64;

/**
 * Parses a row such as "2, -4, 6, -8" (commas, spaces or semicolons between
 * values) into a Float32Array.
 * @returns {{values: Float32Array} | {error: string}}
 */
export function parseRow(text, name) {
  const tokens = text.split(/[\s,;]+/).filter(Boolean);
  if (tokens.length === 0) return { error: `${name} is empty: type at least one number.` };
  if (tokens.length > MAX_VALUES) return { error: `${name} has ${tokens.length} values; this panel takes at most ${MAX_VALUES}.` };
  const values = new Float32Array(tokens.length);
  for (const [i, token] of tokens.entries()) {
    const error = numberError(token.replace('\u2212', '-'), `${name}, value ${i + 1}`);
    if (error !== undefined) return { error };
    values[i] = Number(token.replace('\u2212', '-'));
  }
  return { values };
}

/**
 * Parses one number such as eps; `min` is the smallest value allowed.
 * @returns {{value: number} | {error: string}}
 */
export function parseNumber(text, name, min = -FLT_MAX) {
  const token = text.trim().replace('\u2212', '-');
  const error = numberError(token, name);
  if (error !== undefined) return { error };
  const value = Number(token);
  if (value < min) return { error: `${name} must be at least ${min}, got ${token}.` };
  return { value };
}

function numberError(token, name) {
  // Number('') is 0 and Number('0x10') is 16: accept decimal notation only.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(token)) {
    return `${name}: “${token}” is not a number.`;
  }
  if (Math.abs(Number(token)) > FLT_MAX) return `${name}: ${token} is beyond the float32 range (±3.4e38).`;
  return undefined;
}
