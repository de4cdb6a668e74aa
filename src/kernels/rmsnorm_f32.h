/*
 * float32 RMSNorm kernels: y = x / sqrt(mean(x^2) + eps) * w, row by row.
 *
 * THE NUMERICS CONTRACT
 * =====================
 * Every implementation in this package (the SIMD128 kernel, the scalar
 * kernel and the JS reference in src/reference/rmsnorm.js) follows this
 * order exactly, so that all three return the same bits. Every operation
 * below is one IEEE-754 binary32 operation, rounded to nearest-even: no
 * FMA contraction, no fast-math, no flush-to-zero. It is the operation
 * order of PyTorch's F.rms_norm and of the seed book chapter's listing.
 *
 * 1. Sum of squares, S. A row of `dim` values is cut into blocks of
 *    RMSNORM_BLOCK (256) values; the last block may be shorter.
 *    Inside a block, value i goes to lane (i mod 16) of 16 lanes, and each
 *    lane runs   acc = acc + x*x   (square rounded, then sum rounded),
 *    starting from +0, in index order. A short block behaves as if padded
 *    with zeros, which leaves every lane unchanged (acc + +0 == acc).
 *    The 16 lanes L0..L15 fold to the block sum as
 *        v_j = (L_j + L_{j+4}) + (L_{j+8} + L_{j+12})   for j = 0..3
 *        block = (v_0 + v_2) + (v_1 + v_3)
 *    Block sums B_0..B_{n-1} are added pairwise: sum(B[0..n)) is B_0 when
 *    n == 1, otherwise sum(B[0..p)) + sum(B[p..n)) with p the largest power
 *    of two below n. (The kernels get the same tree with a binary-counter
 *    stack; the reference recurses.) Why blocks and pairs: a plain 16-lane
 *    running sum measures 0.78 ulp mean error at dim 16384, this one 0.54.
 * 2. ms  = S / (float)dim            (dim rounded to float32 first)
 * 3. inv = 1 / sqrt(ms + eps)         (three roundings: add, sqrt, divide)
 * 4. y_i = (x_i * inv) * w_i          (without a weight: y_i = x_i * inv)
 *
 * 5. rstd = inv                       (the per-row statistic the backward
 *                                      pass reads; see norm_backward_f32.h)
 *
 * Rows whose S is outside [RMSNORM_TINY_SUM, FLT_MAX] take the rescue path
 * (see rmsnorm_f32_rows.h): if the row is finite and not all zero, it is
 * redone on z_i = x_i * 2^k, where 2^k brings max|x| into [1, 2) (k clamped
 * to [-126, 126]), with eps_z = (eps * 2^k) * 2^k; the output is then
 * y_i = ((x_i * 2^k) * inv_z) * w_i and rstd = inv_z * 2^k. Scaling by a power of two is exact, so
 * the rescued row is what the formula gives in unbounded-range arithmetic:
 * values near 3.4e38, 1e-30 or subnormals still come out with RMS 1.
 * If eps_z overflows, eps dominates the row so completely that the plain
 * result is already right, and the plain result is kept. Rows with a NaN or
 * an infinity, and all-zero rows, keep the plain result: with eps = 0 an
 * all-zero row gives NaN (0 * 1/sqrt(0)), as the formula says; a NaN makes
 * its row NaN; an infinity gives NaN at its own position and +-0 elsewhere.
 *
 * NaN results: WebAssembly leaves the sign and payload of a NaN to the
 * engine, so "the same bits" means the same bits for every non-NaN value
 * (+0 and -0 differ) and a NaN wherever the other side has a NaN.
 *
 * Aliasing: y may equal x (in place); any other overlap of y with x or w
 * is not allowed. x, w and y need no particular alignment.
 */
#ifndef RMSNORM_F32_H
#define RMSNORM_F32_H

#include <stddef.h>

#define RMSNORM_LANES 16
#define RMSNORM_BLOCK 256
/* Below this sum of squares, float32 squares may have underflowed enough to
 * matter; 2^-64 leaves dim * 2^-150 of underflow error far below an ulp. */
#define RMSNORM_TINY_SUM 0x1p-64f

/* w may be NULL (no affine weight). rows may be 0; dim must be >= 1. */
void rmsnorm_f32__scalar(const float* x, const float* w, float* y,
                         size_t rows, size_t dim, float eps);
void rmsnorm_f32__wasmsimd_u16_acc4(const float* x, const float* w, float* y,
                                    size_t rows, size_t dim, float eps);
/* Step 5 alone: rstd[r] for each of the rows, as the forward pass computes it. */
void rmsnorm_rstd_f32__scalar(const float* x, float* rstd, size_t rows, size_t dim, float eps);
void rmsnorm_rstd_f32__wasmsimd_u16_acc4(const float* x, float* rstd, size_t rows, size_t dim,
                                         float eps);

#endif
