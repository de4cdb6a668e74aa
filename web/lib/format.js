// How the page writes numbers: never more digits than the value carries
// (no 0.30000000000000004), plain notation for everyday sizes, and the
// special values spelled out.

function special(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '-∞';
  return undefined;
}

/** The shortest decimal that reads back as the same float32: what the kernel really returned. */
export function float32String(v) {
  const s = special(v);
  if (s !== undefined) return s;
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(v.toPrecision(digits));
    if (Math.fround(candidate) === v) return String(candidate);
  }
  return String(Number(v.toPrecision(9))); // 9 significant digits always round-trip a float32
}

/**
 * `digits` significant digits, trailing zeros dropped: 5.477226, 0.1825742;
 * scientific notation outside 1e-4 … 1e6: 1e-6, 2.16e8.
 */
export function significant(v, digits = 4) {
  const s = special(v);
  if (s !== undefined) return s;
  const rounded = Number(v.toPrecision(digits));
  const a = Math.abs(rounded);
  if (a !== 0 && (a < 1e-4 || a >= 1e6)) {
    return rounded.toExponential(digits - 1).replace(/\.?0+e/, 'e').replace('e+', 'e');
  }
  return String(rounded);
}

/** Two decimals for everyday sizes (the blog's 0.55, -0.37, 1.10, -2.92), three significant digits otherwise. */
export function short(v) {
  const s = special(v);
  if (s !== undefined) return s;
  if (v === 0) return '0';
  const a = Math.abs(v);
  return a >= 0.01 && a < 1e5 ? v.toFixed(2) : v.toPrecision(3).replace('e+', 'e');
}

/** Microseconds with sensible precision: 0.42 µs, 12.3 µs, 1,234 µs. */
export function micros(us) {
  if (us < 10) return `${us.toFixed(2)} µs`;
  if (us < 100) return `${us.toFixed(1)} µs`;
  return `${Math.round(us).toLocaleString('en-US')} µs`;
}

/**
 * Each part's share of their sum as a percentage, written so that the
 * shares add up to 100 as shown: one number of decimals for all, enough
 * for two significant digits of the smallest share, and each rounded
 * down, then the leftover hundredths (or tenths…) given to the parts that
 * lost the most (largest remainder). [0.0048, 0.9952] → ['0.48%', '99.52%'].
 */
export function percentages(parts) {
  const total = parts.reduce((sum, p) => sum + p, 0);
  const percent = parts.map((p) => (100 * p) / total);
  const smallest = Math.min(...percent.filter((p) => p > 0));
  const decimals = Math.min(4, Math.max(0, 1 - Math.floor(Math.log10(smallest))));
  const unit = 10 ** decimals;
  const units = percent.map((p) => Math.floor(p * unit));
  const left = 100 * unit - units.reduce((sum, u) => sum + u, 0);
  const byRemainder = percent.map((p, i) => i).sort((a, b) => (percent[b] * unit - units[b]) - (percent[a] * unit - units[a]));
  for (let k = 0; k < left; k++) units[byRemainder[k % units.length]] += 1;
  return units.map((u) => `${(u / unit).toFixed(decimals)}%`);
}
