/* An inference engine's C side, reduced to what binding it needs: its own
 * allocator (malloc for its tensors, aligned_alloc for the scratch region
 * bindMemory asks for) and its own RMSNorm call through the C library
 * (c/rmsnorm_wasm.h), so that the test can hold the JS binding on the
 * engine's memory to the bits of the C call in the same module. */
#include <stddef.h>

#include "rmsnorm_wasm.h"

/* What the engine calls on every token: the C library's float32 entry point. */
void engine_rmsnorm(const float* x, const float* weight, float* y, size_t rows, size_t dim,
                    float eps) {
  rmsnorm_wasm_f32(x, weight, y, rows, dim, eps);
}

int main(void) {
  return 0;
}
