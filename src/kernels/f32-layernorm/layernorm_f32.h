/*
 * float32 LayerNorm kernels: y = (x - mean) / sqrt(var + eps) * w + b, row by
 * row, with the biased variance (divide by dim), as PyTorch nn.LayerNorm and
 * ONNX LayerNormalization define it.
 *
 * THE NUMERICS CONTRACT (LayerNorm)
 * =================================
 * The rules of ../f32-rmsnorm/rmsnorm_f32.h hold here too (binary32 round-to-nearest-even
 * for every operation, no FMA, no fast-math, no flush-to-zero; NaN results
 * compared as "a NaN"; y may equal x, or share no byte with x's values). Every blocked sum
 * below is RMSNorm's step 1 applied to another term t_i: the same 256-value
 * blocks, 16 lanes, fold and pairwise cascade (../common.h). The SIMD128
 * kernel, the scalar kernel and the JS reference (src/reference/layernorm.js)
 * follow this order exactly.
 *
 * The mean is carried in two float32 parts, so that rows with a large common
 * offset (1e4 + N(0,1)) are normalized as accurately as centred ones: a mean
 * rounded to float32 alone would shift every deviation by up to half an ulp
 * of the offset (PyTorch's float32 LayerNorm errs that way: CHANGELOG).
 *
 * 1. S1      = blocked sum of x_i
 * 2. mean_hi = S1 / (float)dim
 * 3. e_i     = x_i - mean_hi; in one pass, E1 = blocked sum of e_i and
 *    E2 = blocked sum of e_i * e_i (square rounded, then added), each in its
 *    own 16 lanes.
 * 4. mean_lo = E1 / (float)dim        (what mean_hi missed)
 *    var     = E2 / (float)dim - mean_lo * mean_lo, then 0 if negative
 *              (the corrected two-pass formula: sum((e - mean_lo)^2) / dim
 *              = E2 / dim - mean_lo^2 exactly; mean_lo^2 is tiny next to var
 *              unless the row is constant, where rounding may dip below 0)
 * 5. rstd    = 1 / sqrt(var + eps)    (three roundings: add, sqrt, divide)
 * 6. y_i     = (((x_i - mean_hi) - mean_lo) * rstd) * w_i + b_i
 *              (without a weight, no multiply; without a bias, no add)
 * 7. The per-row statistics the backward pass reads (../f32-norm-backward/norm_backward_f32.h):
 *    mean = mean_hi + mean_lo, and rstd.
 *
 * Rescue path, as for RMSNorm (../f32-rmsnorm/rmsnorm_f32.h): a row whose S1 is not finite,
 * or whose E2 is outside [RMSNORM_TINY_SUM, FLT_MAX] (or NaN), or whose
 * var + eps overflows (rstd = 0), is redone on
 * z_i = x_i * 2^k with the same 2^k rule and eps_z = (eps * 2^k) * 2^k, if
 * the row is finite and not all zero and eps_z is finite; otherwise it keeps
 * the plain result. Steps 1-6 then run on z_i in place of x_i (x_i * 2^k is
 * computed where x_i is read), and step 7 gives mean = (mean_hi + mean_lo) / 2^k
 * and rstd = rstd_z * 2^k. A constant row has E2 = 0 and takes this path too
 * (it gives the plain result's y: 0 * rstd, then w and b).
 */
#ifndef LAYERNORM_F32_H
#define LAYERNORM_F32_H

#include <stddef.h>

/* x and y hold `rows` rows of dim values, each row starting `stride`
 * elements (stride >= dim) after the one before; the gaps between rows are
 * never read or written. w, b may be NULL (no weight, no bias). y may be
 * NULL: then only the statistics are computed. mean and rstd (rows floats
 * each, packed) may be NULL: then they are not stored. rows may be 0; dim
 * must be >= 1. */
void rmsnorm_wasm_f32_layernorm_ukernel__scalar(const float* x, const float* w, const float* b,
                                                float* y, float* mean, float* rstd, size_t rows,
                                                size_t dim, size_t stride, float eps);
void rmsnorm_wasm_f32_layernorm_ukernel__wasmsimd(const float* x, const float* w, const float* b,
                                                  float* y, float* mean, float* rstd, size_t rows,
                                                  size_t dim, size_t stride, float eps);

#endif
