// The float64 oracle: the textbook formula in double precision, written from
// the seeds (eps inside the root, no mean subtraction), nothing shared with
// the implementations under test.

export function rmsNorm64(x, weight, dim, eps) {
  const y = new Float64Array(x.length);
  for (let o = 0; o < x.length; o += dim) {
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += x[o + i] * x[o + i];
    const rms = Math.sqrt(sum / dim + eps);
    for (let i = 0; i < dim; i++) y[o + i] = (x[o + i] / rms) * (weight ? weight[i] : 1);
  }
  return y;
}

/** LayerNorm without bias, in float64 (mean subtracted, biased variance). */
export function layerNorm64(x, weight, dim, eps) {
  const y = new Float64Array(x.length);
  for (let o = 0; o < x.length; o += dim) {
    let mean = 0;
    for (let i = 0; i < dim; i++) mean += x[o + i];
    mean /= dim;
    let variance = 0;
    for (let i = 0; i < dim; i++) variance += (x[o + i] - mean) ** 2;
    variance /= dim;
    const std = Math.sqrt(variance + eps);
    for (let i = 0; i < dim; i++) y[o + i] = ((x[o + i] - mean) / std) * (weight ? weight[i] : 1);
  }
  return y;
}

/** The spacing of float32 values at the magnitude of v (subnormal spacing below 2^-126). */
export function ulp32(v) {
  const a = Math.abs(v);
  if (a < 2 ** -126) return 2 ** -149;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e -= 1;
  return 2 ** (e - 23);
}

/** Max and mean of |y - y64| in float32 ulps of y64. */
export function ulpErrors(y, y64) {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < y.length; i++) {
    const e = Math.abs(y[i] - y64[i]) / ulp32(y64[i]);
    if (e > max) max = e;
    sum += e;
  }
  return { max, mean: sum / y.length };
}
