/*
 * float32 backward passes of RMSNorm and LayerNorm: given dy (the gradient
 * of the loss with respect to y), the gradients with respect to x, the weight
 * and the bias.
 *
 * THE NUMERICS CONTRACT (backward)
 * ================================
 * The rules of ../f32-rmsnorm/rmsnorm_f32.h hold (binary32 round-to-nearest-even for every
 * operation, no FMA, no fast-math, no flush-to-zero; NaN results compared as
 * "a NaN"). Blocked sums are RMSNorm's step 1 on another term (256-value
 * blocks, 16 lanes, fixed fold, pairwise cascade: ../common.h). The
 * SIMD128 kernel, the scalar kernel and the JS reference
 * (src/reference/backward.js) follow this order exactly.
 *
 * Each row reads its forward statistics: rstd for RMSNorm (../f32-rmsnorm/rmsnorm_f32.h,
 * step 5), mean and rstd for LayerNorm (../f32-layernorm/layernorm_f32.h, step 7). The caller
 * passes the ones the forward call returned, or recomputes them with the same
 * kernels, which gives the same bits. With g_i = dy_i * w_i (g_i = dy_i
 * without a weight):
 *
 * RMSNorm, from dx = r * (g - xhat * mean(g * xhat)):
 *   1. xhat_i = x_i * rstd
 *   2. C = blocked sum of g_i * xhat_i;  c = C / (float)dim
 *   3. dx_i = (g_i - xhat_i * c) * rstd
 *
 * LayerNorm, from dx = r * (g - mean(g) - xhat * mean(g * xhat)):
 *   1. xhat_i = (x_i - mean) * rstd
 *   2. in one pass, G = blocked sum of g_i and C = blocked sum of
 *      g_i * xhat_i (each in its own 16 lanes); a = G / dim, c = C / dim
 *   3. dx_i = ((g_i - a) - xhat_i * c) * rstd
 *
 * Parameter gradients, both operations: dw_i = sum over rows of
 * dy_i * xhat_i and (LayerNorm) db_i = sum over rows of dy_i, added in row
 * order to the running float32 value, which starts at +0:
 *     dw_i = ((0 + dy_0i * xhat_0i) + dy_1i * xhat_1i) + ...
 * One fixed order, whatever the number of rows per call or per chunk: the
 * kernels add into dw and db, and a caller that runs the rows in chunks keeps
 * the running sums between them.
 *
 * There is no rescue path: the statistics already carry the row's scale
 * (the forward pass rescued them), and the products above stay in range for
 * any dy that is not itself near float32's limits. A NaN or infinity in dy,
 * x or the statistics spreads as the formula says.
 *
 * Aliasing: dx may equal dy; otherwise no output shares a byte with the
 * values of another array (rows of dx in the gaps of dy's rows are fine).
 */
#ifndef NORM_BACKWARD_F32_H
#define NORM_BACKWARD_F32_H

#include <stddef.h>

/* dy, x and dx hold `rows` rows of dim values, each row starting `stride`
 * elements (stride >= dim) after the one before; the gaps between rows are
 * never read or written. w may be NULL (then dw must be NULL too; otherwise
 * dw holds dim running sums). rstd holds rows floats (packed). rows may be
 * 0; dim must be >= 1. */
void rmsnorm_wasm_f32_rmsnorm_backward_ukernel__scalar(const float* dy, const float* x,
                                                       const float* w, const float* rstd, float* dx,
                                                       float* dw, size_t rows, size_t dim,
                                                       size_t stride);
void rmsnorm_wasm_f32_rmsnorm_backward_ukernel__wasmsimd(const float* dy, const float* x,
                                                         const float* w, const float* rstd,
                                                         float* dx, float* dw, size_t rows,
                                                         size_t dim, size_t stride);

/* As above, plus mean (rows floats) and db (NULL, or dim running sums). */
void rmsnorm_wasm_f32_layernorm_backward_ukernel__scalar(const float* dy, const float* x,
                                                         const float* w, const float* mean,
                                                         const float* rstd, float* dx, float* dw,
                                                         float* db, size_t rows, size_t dim,
                                                         size_t stride);
void rmsnorm_wasm_f32_layernorm_backward_ukernel__wasmsimd(const float* dy, const float* x,
                                                           const float* w, const float* mean,
                                                           const float* rstd, float* dx, float* dw,
                                                           float* db, size_t rows, size_t dim,
                                                           size_t stride);

#endif
