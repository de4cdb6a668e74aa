// Float64 gradients of RMSNorm and LayerNorm for the backward tests: the
// analytic formulas, written from the definitions (nothing shared with the
// implementations under test), and central finite differences of the float64
// forward passes, which check the analytic formulas in turn.

/** loss = Σ dy_i·y_i of one row in float64; mean subtracted when `centred` (LayerNorm). */
function rowLoss64(dy, x, w, b, eps, centred) {
  const n = x.length;
  let mean = 0;
  if (centred) {
    for (let i = 0; i < n; i++) mean += x[i];
    mean /= n;
  }
  let ms = 0;
  for (let i = 0; i < n; i++) ms += (x[i] - mean) ** 2;
  const r = 1 / Math.sqrt(ms / n + eps);
  let loss = 0;
  for (let i = 0; i < n; i++) loss += dy[i] * ((x[i] - mean) * r * (w ? w[i] : 1) + (b ? b[i] : 0));
  return loss;
}

function rowOf(a, r, dim) {
  return Array.from(a.subarray(r * dim, (r + 1) * dim));
}

/**
 * Analytic gradients in float64. With r = 1/sqrt(var + eps), xhat = (x - mean)·r
 * and g = dy·w: dx = r·(g − mean(g) − xhat·mean(g·xhat)) for LayerNorm,
 * dx = r·(g − xhat·mean(g·xhat)) for RMSNorm (mean 0, no mean(g) term);
 * dweight = Σ_rows dy·xhat, dbias = Σ_rows dy.
 */
export function gradients64(dy, x, w, dim, eps, centred) {
  const rows = x.length / dim;
  const dx = new Float64Array(x.length);
  const dweight = new Float64Array(dim);
  const dbias = new Float64Array(dim);
  for (let r = 0; r < rows; r++) {
    const xr = rowOf(x, r, dim);
    const mean = centred ? xr.reduce((s, v) => s + v, 0) / dim : 0;
    const rstd = 1 / Math.sqrt(xr.reduce((s, v) => s + (v - mean) ** 2, 0) / dim + eps);
    const xhat = xr.map((v) => (v - mean) * rstd);
    const g = xhat.map((_, i) => dy[r * dim + i] * (w ? w[i] : 1));
    const meanG = centred ? g.reduce((s, v) => s + v, 0) / dim : 0;
    const meanGxhat = g.reduce((s, v, i) => s + v * xhat[i], 0) / dim;
    for (let i = 0; i < dim; i++) {
      dx[r * dim + i] = rstd * (g[i] - meanG - xhat[i] * meanGxhat);
      dweight[i] += dy[r * dim + i] * xhat[i];
      dbias[i] += dy[r * dim + i];
    }
  }
  return { dx, dweight, dbias };
}

/** The central difference of f at a[i] with step h (a[i] restored afterwards). */
function centralDifference(a, i, h, f) {
  const saved = a[i];
  a[i] = saved + h;
  const up = f();
  a[i] = saved - h;
  const down = f();
  a[i] = saved;
  return (up - down) / (2 * h);
}

/**
 * Central finite differences of loss = Σ dy·y in float64, step h: the
 * gradient with respect to every x_i, w_i and b_i.
 */
export function finiteDifferences64(dy, x, w, b, dim, eps, centred, h = 1e-4) {
  const rows = x.length / dim;
  const w64 = w ? Float64Array.from(w) : null;
  const b64 = b ? Float64Array.from(b) : null;
  const dx = new Float64Array(x.length);
  const dweight = new Float64Array(dim);
  const dbias = new Float64Array(dim);
  for (let r = 0; r < rows; r++) {
    const x64 = Float64Array.from(x.subarray(r * dim, (r + 1) * dim));
    const dyRow = Float64Array.from(dy.subarray(r * dim, (r + 1) * dim));
    const loss = () => rowLoss64(dyRow, x64, w64, b64, eps, centred);
    for (let i = 0; i < dim; i++) {
      dx[r * dim + i] = centralDifference(x64, i, h, loss);
      if (w64) dweight[i] += centralDifference(w64, i, h, loss);
      if (b64) dbias[i] += centralDifference(b64, i, h, loss);
    }
  }
  return { dx, dweight, dbias };
}

/** max |a − ref| / max |ref|: the normwise error the backward tests bound. */
export function relativeMaxError(a, ref) {
  let maxDiff = 0;
  let maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    maxDiff = Math.max(maxDiff, Math.abs(a[i] - ref[i]));
    maxRef = Math.max(maxRef, Math.abs(ref[i]));
  }
  return maxDiff / maxRef;
}
