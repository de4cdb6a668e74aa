/* A C engine's first program against the installed package's C library
 * (node_modules/rmsnorm-wasm/c/): the README's worked example, and the
 * status of a call it must refuse. */
#include <stdio.h>

#include "rmsnorm_wasm.h"

int main(void) {
  const float x[4] = {2, -4, 6, -8}, weight[4] = {1.5f, 0.5f, 1, 2};
  float y[4];
  rmsnorm_wasm_status status = rmsnorm_wasm_f32(x, weight, y, 1, 4, 1e-6f);
  printf("%d %.4f %.4f %.4f %.4f\n", (int) status, y[0], y[1], y[2], y[3]);
  status = rmsnorm_wasm_f32(x, weight, y, 1, 0, 1e-6f);
  printf("%s: %s\n", status == RMSNORM_WASM_ERROR_DIM ? "dim refused" : "dim not refused",
         rmsnorm_wasm_status_string(status));
  return 0;
}
