// RMSNorm as llama.cpp's CPU backend computes it, which is what wllama runs in
// the browser (ggml built by emcc -O3 -msimd128). Written for this benchmark
// from the description of ggml's algorithm, not from its source:
//   - the squares x*x (float products) are summed one after another into a
//     single double accumulator, so the loop stays scalar;
//   - scale = 1 / sqrt(sum/dim + eps), the mean and the root in float32;
//   - fused (ggml since 2026): y = (x * scale) * w in one pass;
//   - unfused (before): y = x copied, y *= scale, then the weight multiplied
//     in a separate pass over the whole tensor (a second graph node).
// Built by the Makefile (build/llamacpp-rmsnorm.wasm) with the compiler's
// default floating-point flags, as wllama builds ggml.
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

static float row_scale(const float* x, size_t dim, float eps) {
  double sum = 0.0;
  for (size_t i = 0; i < dim; i++) sum += (double) (x[i] * x[i]);
  const float mean = (float) (sum / (double) dim);
  return 1.0f / sqrtf(mean + eps);
}

// y = rmsNorm(x) * w, row by row, in one pass per row.
void llamacpp_rms_norm_mul_fused(const float* x, const float* w, float* y, size_t rows, size_t dim,
                                 float eps) {
  assert(dim > 0);
  for (size_t r = 0; r < rows; r++) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float scale = row_scale(xr, dim, eps);
    for (size_t i = 0; i < dim; i++) yr[i] = xr[i] * scale * w[i];
  }
}

// The same result in three passes: copy, scale, then the weight multiply as
// its own operation over every row.
void llamacpp_rms_norm_then_mul(const float* x, const float* w, float* y, size_t rows, size_t dim,
                                float eps) {
  assert(dim > 0);
  for (size_t r = 0; r < rows; r++) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    const float scale = row_scale(xr, dim, eps);
    memcpy(yr, xr, dim * sizeof(float));
    for (size_t i = 0; i < dim; i++) yr[i] *= scale;
  }
  for (size_t r = 0; r < rows; r++) {
    float* yr = y + r * dim;
    for (size_t i = 0; i < dim; i++) yr[i] *= w[i];
  }
}
