/*
 * rmsnorm_wasm.h: the C API of rmsnorm-wasm, for engines written in C or C++
 * and built with Emscripten. Link one of the two static libraries of the npm
 * package (folder c/, docs/c-library.md):
 *
 *   c/librmsnorm_wasm_simd.a    SIMD128 kernels (build with -msimd128)
 *   c/librmsnorm_wasm_scalar.a  scalar kernels, for engines without SIMD128
 *
 * Both return the same bits as each other and as the package's JS API and JS
 * reference, for every non-NaN value; 16-bit NaN outputs are the fixed
 * patterns below, float32 NaN outputs have the sign and payload the engine
 * gives them.
 *
 * NUMERICS
 * Every operation is IEEE-754 binary32, rounded to nearest-even, in one fixed
 * order: no FMA, no fast-math, no flush-to-zero. RMSNorm is
 *     y_i = round(x_i * inv * w'_i),  inv = 1 / sqrt(S / dim + eps)
 * with S the sum of x_i^2 over 256-value blocks of 16 lanes, block sums added
 * pairwise; rows whose S overflows or underflows are redone exactly on x
 * scaled by a power of two. 16-bit storage is widened to float32 exactly and
 * rounded back once, to nearest even (overflow to +-Inf; bfloat16 NaN
 * 0x7FC0, float16 NaN 0x7E00). The full contract, step by step, is the
 * comment of src/kernels/f32-rmsnorm/rmsnorm_f32.h in the repository (and
 * f32-layernorm/layernorm_f32.h, f32-norm-backward/norm_backward_f32.h).
 *
 * ROWS AND ROW STRIDE
 * The per-row arrays (x, residual, y; dy, x, dx) hold `rows` rows of `dim`
 * values. In the one-shot entry points they are packed (row r starts at
 * element r * dim); the prepared calls below take a `row_stride` >= dim:
 * row r starts at element r * row_stride, and only the dim values of each
 * row are read or written, never the elements between rows (they may hold
 * another tensor: the heads of a fused QKV buffer, a ggml view). Such an
 * array spans (rows - 1) * row_stride + dim elements. The statistics (rstd,
 * mean: one float a row) and the once-arrays (weight, bias, dweight, dbias)
 * are always packed.
 *
 * ARGUMENTS
 * Every entry point returning rmsnorm_wasm_status checks its arguments first
 * and, if one is wrong, returns a nonzero status without reading or writing
 * any array: one status per cause, and rmsnorm_wasm_status_string(status)
 * says how to fix it. The checks are the JS API's, in this order: dtype
 * and weight_dtype known (ERROR_DTYPE), cast_mode known (ERROR_CAST_MODE),
 * block format known (ERROR_FORMAT), weight_offset finite
 * (ERROR_WEIGHT_OFFSET); dim >= 1 (ERROR_DIM); row_stride >= dim
 * (ERROR_STRIDE); the rows' span, (rows - 1) * row_stride + dim values
 * (dim for one row, whatever its row_stride: one row has no next row),
 * fits in size_t bytes (ERROR_SIZE);
 * for a block output, dim a multiple of the block size (ERROR_BLOCK); eps
 * finite and >= 0, -0 counting as 0 (ERROR_EPS); with rows == 0 nothing is
 * touched and the call succeeds; every array the operation needs is non-NULL
 * (ERROR_NULL); every array's size in bytes fits in size_t (ERROR_SIZE);
 * every array lies below the end of the address space, pointer + size
 * without overflow: an array may end exactly at 2^32 in wasm32
 * (ERROR_RANGE); the aliasing rules below (ERROR_OVERLAP). What cannot be
 * checked is the caller's promise: every non-NULL pointer addresses as many
 * elements as stated, with at least the element's alignment (4 bytes for
 * float32, 2 for 16-bit; nothing more is needed).
 *
 * PREPARED CALLS
 * rmsnorm_wasm_prepare_<operation>(&call, ...) makes every check above once
 * and fills a rmsnorm_wasm_call; rmsnorm_wasm_run(&call) then runs it, as
 * many times as wanted, with no check at all (an engine's decode loop: the
 * same tensors every token, their contents changing in place). The one-shot
 * entry points are a prepare with row_stride = dim and a run. A call whose
 * prepare failed is set to do nothing, so running it anyway touches no
 * array. What a run cannot see is the caller's promise that the arrays are
 * still where they were prepared, as large.
 *
 * WHAT IS WRITTEN
 * On a nonzero status, nothing: no array is read or written. With rows == 0,
 * nothing either (status OK). Otherwise:
 *   - outputs (y, rstd, mean, dx) are overwritten, every value of every row,
 *     whatever they held: no need to clear them;
 *   - the residual of the fused add is read, then overwritten with
 *     round(x + residual);
 *   - dweight and dbias ACCUMULATE: each value gets the call's sum added to
 *     what it holds, row after row. Clear them (memset 0) before the first
 *     call of a pass; calls over chunks of rows, in order, continue the same
 *     sums and give the bits of one call over all the rows;
 *   - inputs (x, weight, bias, dy, the statistics given to a backward pass)
 *     are only read; an output passed as NULL is not computed.
 *
 * ALIASING
 * An output may be the very same array as the one input named for it (y and
 * x: in place; dx and dy, with the same row stride); otherwise no output may
 * share a single byte with the values of any other array of the call, input
 * or output. The rule is on values: rows of an output may lie in the gaps
 * between another array's rows (y's rows interleaved with x's in one
 * buffer), and a statistic or a weight in a gap. Inputs may overlap each
 * other. The residual of the fused add is both input and output: it may
 * share a byte with no other array's values.
 *
 * Thread safety: the functions keep no state; calls on disjoint arrays may
 * run concurrently, prepared ones too (a rmsnorm_wasm_call is only read by
 * rmsnorm_wasm_run).
 */
#ifndef RMSNORM_WASM_H
#define RMSNORM_WASM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types. bfloat16 and float16 values are uint16_t bit patterns. */
typedef enum rmsnorm_wasm_dtype {
  RMSNORM_WASM_FLOAT32 = 0,
  RMSNORM_WASM_BFLOAT16 = 1,
  RMSNORM_WASM_FLOAT16 = 2,
} rmsnorm_wasm_dtype;

/* Where a 16-bit result rounds (the same computation for float32):
 * LLAMA   y_i = round(round(x_i * inv) * w'_i)   as Llama does (the JS default)
 * GEMMA   y_i = round(x_i * inv * w'_i)          one rounding
 * Zero is LLAMA, so that a zero-initialized argument means the JS default. */
typedef enum rmsnorm_wasm_cast_mode {
  RMSNORM_WASM_CAST_LLAMA = 0,
  RMSNORM_WASM_CAST_GEMMA = 1,
} rmsnorm_wasm_cast_mode;

typedef enum rmsnorm_wasm_status {
  RMSNORM_WASM_OK = 0,
  RMSNORM_WASM_ERROR_NULL = 1,      /* a required array is NULL */
  RMSNORM_WASM_ERROR_DIM = 2,       /* dim == 0, or heads == 0 */
  RMSNORM_WASM_ERROR_EPS = 3,       /* eps negative, infinite or NaN */
  RMSNORM_WASM_ERROR_DTYPE = 4,     /* unknown dtype or weight_dtype; a converter's not 16-bit */
  RMSNORM_WASM_ERROR_OVERLAP = 5,   /* arrays overlap against the aliasing rules */
  RMSNORM_WASM_ERROR_RANGE = 6,     /* an array's pointer + size runs past the address space */
  RMSNORM_WASM_ERROR_STRIDE = 7,    /* a stride below dim; heads past the next token */
  RMSNORM_WASM_ERROR_BLOCK = 8,     /* dim not a multiple of the block format's block size */
  RMSNORM_WASM_ERROR_CAST_MODE = 9, /* unknown cast mode */
  RMSNORM_WASM_ERROR_FORMAT = 10,   /* unknown block format (0 too, where one is required) */
  RMSNORM_WASM_ERROR_WEIGHT_OFFSET = 11, /* weight_offset infinite or NaN */
  RMSNORM_WASM_ERROR_SIZE = 12,          /* an array's size in bytes overflows size_t */
} rmsnorm_wasm_status;

/* Block formats: written by src/abi/block-formats.js from src/loader/abi.js. */
/* ggml's 8-bit block formats (ggml-common.h), which a norm's output may
 * take instead of its storage dtype (rmsnorm_wasm_rmsnorm_q8), a block
 * holding the values given, in the bytes given:
 *   Q8_0  block_q8_0 { ggml_half d; int8_t qs[32]; }                   32 values  34 bytes
 *   Q8_1  block_q8_1 { ggml_half d; ggml_half s; int8_t qs[32]; }      32 values  36 bytes
 *   Q8_K  block_q8_K { float d; int8_t qs[256]; int16_t bsums[16]; }  256 values 292 bytes */
typedef enum rmsnorm_wasm_block_format {
  RMSNORM_WASM_Q8_0 = 1,
  RMSNORM_WASM_Q8_1 = 2,
  RMSNORM_WASM_Q8_K = 3,
} rmsnorm_wasm_block_format;
/* End of the written block formats. */

/* A short English description of a status ("ok", "dim must be >= 1 ...");
 * never NULL. */
const char* rmsnorm_wasm_status_string(rmsnorm_wasm_status status);

/*
 * float32 RMSNorm, the common case: y = x / sqrt(mean(x^2) + eps) * weight
 * over each of `rows` rows of `dim` values (row-major). weight holds dim
 * values, or is NULL for no weight. y may equal x.
 *
 * rmsnorm_wasm_rmsnorm with float32 storage and weight, the default cast
 * mode and no weight offset, no residual, no rstd: the same checks and the
 * same status (on error, y keeps its contents).
 */
rmsnorm_wasm_status rmsnorm_wasm_f32(const float* x, const float* weight, float* y, size_t rows,
                                     size_t dim, float eps);

/*
 * RMSNorm in general, or with `residual` the fused residual add + RMSNorm:
 *   residual_i = round(x_i + residual_i)  (stored back), then y = RMSNorm(residual).
 *
 * x, residual, y  rows * dim values of `dtype`; residual NULL for plain RMSNorm.
 * weight          dim values of `weight_dtype` (any dtype with any storage
 *                 dtype: the bits are those of the weight widened to float32
 *                 first), or NULL for no weight (weight_dtype is then ignored).
 * weight_offset   added to each weight in float32 before it is applied
 *                 (Gemma stores w - 1: offset 1); 0 or -0 for none.
 * rstd            NULL, or rows floats receiving each row's 1/sqrt(mean + eps)
 *                 of the row normalized (x, or the updated residual): the
 *                 statistic the backward pass reads, from the same sums as y.
 * y may equal x; nothing else may overlap y, residual or rstd.
 */
rmsnorm_wasm_status rmsnorm_wasm_rmsnorm(const void* x, void* residual, const void* weight, void* y,
                                         float* rstd, size_t rows, size_t dim, float eps,
                                         rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset);

/*
 * rmsnorm_wasm_rmsnorm with each row of y quantized, in the same pass, to
 * ggml blocks of `format`: what ggml's quantize_row_q8_0_ref,
 * quantize_row_q8_1_ref or quantize_row_q8_K_ref writes for the values
 * rmsnorm_wasm_rmsnorm stores in y (widened to float32 for 16-bit
 * storage), byte for byte: ggml's mul_mat src1 in its vec_dot_type. Where
 * ggml's C is undefined (a NaN or an out-of-range float converted to
 * int8: blocks with an infinity or a NaN, or tiny enough that 1/d
 * overflows) NaN converts to 0 and the rest saturates to [-128, 127]; a
 * zero q8_K block gets zero bsums (ggml leaves them). The rule in full:
 * src/kernels/q8_blocks.h in the repository.
 * out  rows * rmsnorm_wasm_block_row_bytes(format, dim) bytes: the rows'
 *      blocks, packed (also with a row stride); it may overlap nothing.
 * Checks: as rmsnorm_wasm_rmsnorm's, format known among them
 * (ERROR_FORMAT, 0 included), then after the shape dim a multiple of the
 * format's values a block (ERROR_BLOCK); out is the array y was.
 */
rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_q8(const void* x, void* residual, const void* weight,
                                            void* out, float* rstd, size_t rows, size_t dim,
                                            float eps, rmsnorm_wasm_dtype dtype,
                                            rmsnorm_wasm_dtype weight_dtype,
                                            rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                            rmsnorm_wasm_block_format format);

/* The bytes a row of dim values takes as blocks of `format`: dim / values
 * blocks of its bytes (the table above); 0 if dim is not a multiple of its
 * values or format is unknown. */
size_t rmsnorm_wasm_block_row_bytes(rmsnorm_wasm_block_format format, size_t dim);

/*
 * The quantizer alone, for activations no norm writes (an attention output
 * before its projection; ggml's from_float for a vec_dot_type of q8_0, q8_1
 * or q8_K): `rows` rows of `dim` float32 values at x, each row to
 * rmsnorm_wasm_block_row_bytes(format, dim) bytes of ggml blocks, packed,
 * at `blocks`: byte for byte what ggml's quantize_row_q8_0_ref,
 * quantize_row_q8_1_ref or quantize_row_q8_K_ref writes for the row, by
 * the rule of rmsnorm_wasm_rmsnorm_q8 (NaN to 0 and saturation where ggml's
 * C is undefined), and the JS API's quantize(). blocks may overlap nothing.
 * Checks, in the order above: format known (ERROR_FORMAT); dim >= 1
 * (ERROR_DIM); x's span fits size_t bytes (ERROR_SIZE); dim a multiple of
 * the format's values a block (ERROR_BLOCK); with rows == 0 nothing is
 * touched (OK); x and blocks non-NULL (ERROR_NULL); sizes, range, overlap.
 */
rmsnorm_wasm_status rmsnorm_wasm_quantize(const float* x, void* blocks, size_t rows, size_t dim,
                                          rmsnorm_wasm_block_format format);

/*
 * Blocks back to float32, as ggml's dequantize_row_q8_0 and
 * dequantize_row_q8_K (and the JS API's dequantize(), q8_1 alike): each
 * value y_j = (float) qs_j * d, one float32 product, with d the block's
 * float16 d widened exactly (q8_0, q8_1) or its float32 d (q8_K). `rows`
 * rows of rmsnorm_wasm_block_row_bytes(format, dim) bytes at `blocks` to
 * rows of dim float32 values at y; y may overlap nothing. The error
 * against the values quantized: docs/numerics.md. Checks as
 * rmsnorm_wasm_quantize's, y in x's place.
 */
rmsnorm_wasm_status rmsnorm_wasm_dequantize(const void* blocks, float* y, size_t rows, size_t dim,
                                            rmsnorm_wasm_block_format format);

/* Only the per-row rstd of RMSNorm (rows floats), to the bit what
 * rmsnorm_wasm_rmsnorm's rstd gets. rstd may not overlap x. */
rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_rstd(const void* x, float* rstd, size_t rows, size_t dim,
                                              float eps, rmsnorm_wasm_dtype dtype);

/*
 * float32 LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias, biased
 * variance, as PyTorch's nn.LayerNorm (eps is usually 1e-5 here).
 * weight, bias: dim values each, or NULL. y: rows * dim values, or NULL for
 * the statistics alone. mean, rstd: NULL, or rows values receiving each
 * row's mean and 1/sqrt(var + eps) for the backward pass. y may equal x.
 */
rmsnorm_wasm_status rmsnorm_wasm_layernorm_f32(const float* x, const float* weight,
                                               const float* bias, float* y, float* mean,
                                               float* rstd, size_t rows, size_t dim, float eps);

/*
 * float32 backward pass of RMSNorm. dy, x: rows * dim values; rstd: rows
 * values from the forward pass (rmsnorm_wasm_rmsnorm's rstd, or
 * rmsnorm_wasm_rmsnorm_rstd). dx receives rows * dim values and may equal
 * dy. weight: dim values or NULL. dweight: NULL exactly when weight is; else
 * dim running sums that this call ADDS to, in row order (clear them before
 * the first call; calls over chunks of rows continue the same sums).
 */
rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_backward_f32(const float* dy, const float* x,
                                                      const float* weight, const float* rstd,
                                                      float* dx, float* dweight, size_t rows,
                                                      size_t dim);

/*
 * float32 backward pass of LayerNorm: as above, with the forward's mean and
 * rstd (rows values each), and dbias: NULL, or dim running sums of dy that
 * this call adds to, as dweight.
 */
rmsnorm_wasm_status rmsnorm_wasm_layernorm_backward_f32(const float* dy, const float* x,
                                                        const float* weight, const float* mean,
                                                        const float* rstd, float* dx,
                                                        float* dweight, float* dbias, size_t rows,
                                                        size_t dim);

/*
 * Prepared calls (PREPARED CALLS above): one prepare per operation, each with
 * the one-shot function's parameters plus row_stride after dim, and one run.
 * The struct is the caller's memory (on the stack, in a layer's state);
 * its fields are the library's: fill it with a prepare, read it with run.
 */
typedef struct rmsnorm_wasm_call {
  int op;
  const void* arrays[8];
  size_t rows, dim, row_stride, heads, head_stride;
  float eps, weight_offset;
  int dtype, weight_dtype, cast_mode, block_format;
} rmsnorm_wasm_call;

/* Runs a prepared call: the kernel of its operation on its arrays, no
 * check. */
void rmsnorm_wasm_run(const rmsnorm_wasm_call* call);

/* rmsnorm_wasm_rmsnorm's call with rows row_stride apart (x, residual and y
 * share it; y == x in place is the same array with the same stride). A
 * residual (fused add) is updated in place when the call runs, each run. */
rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* y,
    float* rstd, size_t rows, size_t dim, size_t row_stride, float eps, rmsnorm_wasm_dtype dtype,
    rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode, float weight_offset);

/* rmsnorm_wasm_rmsnorm_q8's call with x and residual rows row_stride apart;
 * out's rows of blocks stay packed. */
rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_q8(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* out,
    float* rstd, size_t rows, size_t dim, size_t row_stride, float eps, rmsnorm_wasm_dtype dtype,
    rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
    rmsnorm_wasm_block_format format);

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_rstd(rmsnorm_wasm_call* call, const void* x,
                                                      float* rstd, size_t rows, size_t dim,
                                                      size_t row_stride, float eps,
                                                      rmsnorm_wasm_dtype dtype);

/*
 * rmsnorm_wasm_prepare_rmsnorm over `tokens` tokens of `heads` rows each
 * (QK-norm: every head of q, or of k, of every token of a fused QKV buffer
 * in one call): row (t, h) of x, residual and y starts at element
 * t * row_stride + h * head_stride, and rstd (NULL, or tokens * heads
 * floats) holds row (t, h)'s at t * heads + h. Each row is normalized
 * alone: the bits of one rmsnorm_wasm_prepare_rmsnorm call per head, on
 * x + h * head_stride with rows = tokens and the same row_stride. Checks,
 * in the order above: heads == 0 is ERROR_DIM beside dim == 0;
 * head_stride < dim, and with tokens >= 2 a token's span
 * (heads - 1) * head_stride + dim beyond row_stride (its heads would run
 * into the next token's), are ERROR_STRIDE; the arrays span
 * (tokens - 1) * row_stride + that span. The aliasing rules apply to the
 * rows themselves, head by head.
 */
rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_heads(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* y,
    float* rstd, size_t tokens, size_t heads, size_t dim, size_t head_stride, size_t row_stride,
    float eps, rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
    rmsnorm_wasm_cast_mode cast_mode, float weight_offset);

/* rmsnorm_wasm_quantize's and rmsnorm_wasm_dequantize's calls with the
 * float32 rows (x, or y) row_stride values apart (a ggml view, src1 rows
 * with a stride); the rows of blocks stay packed. */
rmsnorm_wasm_status rmsnorm_wasm_prepare_quantize(rmsnorm_wasm_call* call, const float* x,
                                                  void* blocks, size_t rows, size_t dim,
                                                  size_t row_stride,
                                                  rmsnorm_wasm_block_format format);
rmsnorm_wasm_status rmsnorm_wasm_prepare_dequantize(rmsnorm_wasm_call* call, const void* blocks,
                                                    float* y, size_t rows, size_t dim,
                                                    size_t row_stride,
                                                    rmsnorm_wasm_block_format format);

/* rmsnorm_wasm_prepare_rmsnorm_heads with each row quantized to ggml
 * blocks of `format`, as rmsnorm_wasm_rmsnorm_q8 (QK-norm, or a per-head
 * norm, feeding a q8 mul_mat): out holds tokens * heads rows of
 * rmsnorm_wasm_block_row_bytes(format, dim) bytes, packed, row (t, h)'s at
 * row t * heads + h (rstd's index); it may overlap nothing. The bits of one
 * rmsnorm_wasm_prepare_rmsnorm_q8 call per head. Checks: the heads
 * call's, format known among the options (ERROR_FORMAT) and, after the
 * shape, dim a multiple of the block size (ERROR_BLOCK). */
rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_heads_q8(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* out,
    float* rstd, size_t tokens, size_t heads, size_t dim, size_t head_stride, size_t row_stride,
    float eps, rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
    rmsnorm_wasm_cast_mode cast_mode, float weight_offset, rmsnorm_wasm_block_format format);

rmsnorm_wasm_status rmsnorm_wasm_prepare_layernorm_f32(rmsnorm_wasm_call* call, const float* x,
                                                       const float* weight, const float* bias,
                                                       float* y, float* mean, float* rstd,
                                                       size_t rows, size_t dim, size_t row_stride,
                                                       float eps);

/* dy, x and dx share the row stride. dweight and dbias accumulate on every
 * run. */
rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_backward_f32(
    rmsnorm_wasm_call* call, const float* dy, const float* x, const float* weight,
    const float* rstd, float* dx, float* dweight, size_t rows, size_t dim, size_t row_stride);

rmsnorm_wasm_status rmsnorm_wasm_prepare_layernorm_backward_f32(
    rmsnorm_wasm_call* call, const float* dy, const float* x, const float* weight,
    const float* mean, const float* rstd, float* dx, float* dweight, float* dbias, size_t rows,
    size_t dim, size_t row_stride);

/*
 * The contract's 16-bit conversions over whole arrays (weights stored as
 * bfloat16 or float16, say), the same bits as the kernels' own and the JS
 * API's. dtype is RMSNORM_WASM_BFLOAT16 or RMSNORM_WASM_FLOAT16.
 *   rmsnorm_wasm_to_f32    n patterns widened to float32, exactly (a NaN
 *                          keeps its sign and payload)
 *   rmsnorm_wasm_from_f32  n float32 values rounded to nearest even;
 *                          overflow to +-Inf; every NaN becomes the format's
 *                          one pattern (bfloat16 0x7FC0, float16 0x7E00);
 *                          float16 keeps subnormals
 * Checks, in order: dtype 16-bit (ERROR_DTYPE); n == 0 touches nothing (OK);
 * src and dst non-NULL (ERROR_NULL); n values fit size_t bytes (ERROR_SIZE);
 * below the end of the address space (ERROR_RANGE); src and dst share no
 * byte (ERROR_OVERLAP).
 */
rmsnorm_wasm_status rmsnorm_wasm_to_f32(const uint16_t* src, float* dst, size_t n,
                                        rmsnorm_wasm_dtype dtype);
rmsnorm_wasm_status rmsnorm_wasm_from_f32(const float* src, uint16_t* dst, size_t n,
                                          rmsnorm_wasm_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
