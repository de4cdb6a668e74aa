/*
 * RMSNorm kernels computing in float32: y = x / sqrt(mean(x^2) + eps) * w,
 * row by row, on float32, bfloat16 or float16 storage.
 *
 * THE NUMERICS CONTRACT
 * =====================
 * Every implementation in this package (the SIMD128 kernel, the scalar
 * kernel and the JS reference in src/reference/rmsnorm.js) follows this
 * order exactly, so that all three return the same bits. Every operation
 * below is one IEEE-754 binary32 operation, rounded to nearest-even: no
 * FMA contraction, no fast-math, no flush-to-zero. It is the operation
 * order of PyTorch's F.rms_norm: x * (1 / sqrt(mean(x^2) + eps)), then * w.
 *
 * 0. Storage. x, the residual and y share one storage type: float32,
 *    bfloat16 or float16. 16-bit values are widened to float32 (exactly)
 *    before any arithmetic; "round(v)" below means rounding a float32 to the
 *    storage type (round to nearest even, see ../float16.h; identity for
 *    float32). Computing in float32 is load-bearing: done in 16-bit
 *    throughout, a fifth or more of the outputs would differ.
 *    With a residual (addRmsNorm), first r_i = round(x_i + r_i) is stored back
 *    to the residual, and the row normalized is that rounded r.
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
 *    stack; the reference recurses.) Why blocks and pairs: on long rows they
 *    err less than a plain 16-lane running sum (figures in the CHANGELOG).
 * 2. ms  = S / (float)dim            (dim rounded to float32 first)
 * 3. inv = 1 / sqrt(ms + eps)         (three roundings: add, sqrt, divide)
 * 4. v_i = x_i * inv. The weight applied is w'_i = w_i (widened if 16-bit),
 *    or w'_i = weight_offset + w_i (one float32 add) when weight_offset is
 *    not zero (Gemma stores w - 1 and uses offset 1; an offset of +-0 means
 *    no add, so a -0 weight keeps its sign). Then, by cast mode:
 *      gemma:  y_i = round(v_i * w'_i)          one rounding to storage
 *      llama:  y_i = round(round(v_i) * w'_i)   normalized value rounded to
 *                                               storage first, as Llama does
 *      no weight: y_i = round(v_i)
 *    For float32 storage round() is the identity, so both modes are
 *    y_i = (x_i * inv) * w'_i.
 * 5. rstd = inv: the per-row statistic the backward pass reads
 *    (../f32-norm-backward/norm_backward_f32.h); the kernel writes it on
 *    request, from the same sums as y, so the two always agree.
 *
 * Rows whose S is outside [RMSNORM_TINY_SUM, FLT_MAX], or whose ms + eps
 * overflows (inv = 0: eps near FLT_MAX beside a large row), take the rescue path
 * (rescue_of in ../common.h): if the row is finite and not all zero, it is
 * redone on z_i = x_i * 2^k, where 2^k brings max|x| into [1, 2) (k clamped
 * to [-126, 126]), with eps_z = (eps * 2^k) * 2^k; the output then uses
 * v_i = (x_i * 2^k) * inv_z in step 4 and rstd = inv_z * 2^k in step 5 (which
 * overflows to +Inf if 1/rms is beyond float32, e.g. subnormal rows with
 * eps = 0; y is right all the same). Scaling by a power of two is exact, so
 * the rescued row is what the formula gives in unbounded-range arithmetic:
 * values near 3.4e38, 1e-30 or subnormals still come out with RMS 1.
 * If eps_z overflows, eps dominates the row so completely that the plain
 * result is already right, and the plain result is kept. Rows with a NaN or
 * an infinity, and all-zero rows, keep the plain result: with eps = 0 an
 * all-zero row gives NaN (0 * 1/sqrt(0)), as the formula says; a NaN makes
 * its row NaN; an infinity gives NaN at its own position and +-0 elsewhere.
 *
 * NaN results: WebAssembly leaves the sign and payload of a float32 NaN to
 * the engine, so for float32 outputs "the same bits" means the same bits for
 * every non-NaN value (+0 and -0 differ) and a NaN wherever the other side
 * has a NaN. 16-bit outputs are the same bits, NaNs included: round() writes
 * every NaN as one pattern, bfloat16 0x7FC0 and float16 0x7E00 (../float16.h).
 *
 * Aliasing: y may equal x (in place); otherwise no value of y shares a byte
 * with a value of x, the residual or w, and rstd overlaps nothing. The rule
 * is on values, not spans: rows of y may sit in the gaps between rows of x
 * (and of the residual). No alignment is required. Writes go row by row: row
 * r's residual (the add), then rstd[r], then row r of y.
 */
#ifndef RMSNORM_F32_H
#define RMSNORM_F32_H

#include <stddef.h>

#include "../common.h"
#include "../float16.h"

/* weight_dtype when there is no weight (w == NULL). */
#define RMSNORM_NO_WEIGHT (-1)
/* Zero is Llama's, the default of every API (src/loader/abi.js). */
enum rmsnorm_cast { RMSNORM_CAST_LLAMA = 0, RMSNORM_CAST_GEMMA = 1 };

/*
 * x, residual and y hold `rows` rows of `dim` values of `dtype` (enum
 * rmsnorm_dtype), each row starting `stride` elements (stride >= dim) after
 * the one before; only the dim values of each row are read or written, never
 * the gaps between rows (they may hold another tensor, another array of the
 * call included). residual is NULL for plain RMSNorm, else updated in place
 * (addRmsNorm).
 * w holds dim values of weight_dtype, or is NULL (weight_dtype ignored).
 * rstd is NULL, or receives rows floats (packed): step 5 for each row normalized (x,
 * or the updated residual), written before that row of y. y may be NULL:
 * then only rstd is written (and the residual updated, if any).
 * rows may be 0; dim must be >= 1; eps finite and >= 0.
 */
void rmsnorm_wasm_f32_rmsnorm_ukernel__scalar(const void* x, void* residual, const void* w, void* y,
                                              float* rstd, size_t rows, size_t dim, size_t stride,
                                              float eps, int dtype, int weight_dtype, int cast_mode,
                                              float weight_offset);
void rmsnorm_wasm_f32_rmsnorm_ukernel__wasmsimd(const void* x, void* residual, const void* w,
                                                void* y, float* rstd, size_t rows, size_t dim,
                                                size_t stride, float eps, int dtype,
                                                int weight_dtype, int cast_mode,
                                                float weight_offset);

/*
 * Block outputs: the same call (x, residual, w, rstd as above), but y
 * receives each row quantized to ggml blocks of `format` (enum
 * rmsnorm_q8_format, ../q8_blocks.h, whose rule the blocks follow): the
 * values quantized are exactly those the call above would store in y,
 * widened to float32 (for 16-bit storage: after the storage rounding).
 * dim is a multiple of the block's values (32, or 256 for q8_K); y is not
 * NULL and holds rows * (dim / values) blocks, rows packed whatever the
 * stride; it shares no byte with x, the residual, w or rstd.
 */
void rmsnorm_wasm_f32_rmsnorm_q8_ukernel__scalar(const void* x, void* residual, const void* w,
                                                 void* y, float* rstd, size_t rows, size_t dim,
                                                 size_t stride, float eps, int dtype,
                                                 int weight_dtype, int cast_mode,
                                                 float weight_offset, int format);
void rmsnorm_wasm_f32_rmsnorm_q8_ukernel__wasmsimd(const void* x, void* residual, const void* w,
                                                   void* y, float* rstd, size_t rows, size_t dim,
                                                   size_t stride, float eps, int dtype,
                                                   int weight_dtype, int cast_mode,
                                                   float weight_offset, int format);

#endif
