// norm-bench.cpp: the norm op alone inside the engine, linked to each
// ggml-cpu build (stock or integrated; llama.mk). Two ggml graphs on one
// thread, as llama.cpp's graph holds them, and a third to tell their costs
// apart:
//   norm     mul(rms_norm(x), w), float32 out (ggml-cpu fuses RMS_NORM + MUL)
//   q8_0     the same cast to q8_0 for a mul_mat: stock ggml runs the norm,
//            then its wasm quantize_row_q8_0 (mul_mat's from_float); the
//            integrated build runs the three nodes as one call of the package
//   convert  x cast to q8_0 alone: the engine's from_float (stock: ggml's
//            truncating wasm code; integrated: the package's quantizer)
// Prints one JSON object: per shape and graph the median microseconds of an
// op (a compute's time ÷ kOpsPerGraph) over `repeats` batches (bench_clock.h:
// CPU time in Node), and for the q8_0 graph how many fused norm-to-q8 ops the
// integrated ggml-cpu ran (null: the stock one has none).
//
//   norm-bench [rows]x[dim] ... [--repeats N]

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_clock.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

// Defined by the integrated ggml-cpu only (llama.patch): weak, so that the
// stock build links with its address null.
extern "C" __attribute__((weak)) int64_t rmsnorm_wasm_fused_q8_ops;

namespace {

int64_t fused_q8_ops() { return &rmsnorm_wasm_fused_q8_ops ? rmsnorm_wasm_fused_q8_ops : -1; }

// Each graph holds its op this many times, as a model's graph holds a norm
// per layer or two: a compute's own cost (ggml's disposable threadpool, the
// node loop) is shared among its ops as in a decode step, not charged whole
// to one op.
constexpr int kOpsPerGraph = 8;

double now_us() { return bench_clock_us(); }

// The median time of one op of `graph`, over `repeats` batches of computes
// lasting about 20 ms of the clock each, after a warm-up.
double median_us(ggml_cgraph* graph, int repeats) {
  ggml_cplan plan = ggml_graph_plan(graph, 1, nullptr);
  std::vector<uint8_t> work(plan.work_size);
  plan.work_data = work.data();
  // V8 compiles wasm in a baseline tier first and optimizes hot functions
  // later: 200 ms of calls before anything is timed.
  for (const double t0 = now_us(); now_us() - t0 < 200000;) ggml_graph_compute(graph, &plan);
  int calls = 1;
  for (;;) {
    const double t0 = now_us();
    for (int i = 0; i < calls; i++) ggml_graph_compute(graph, &plan);
    if (now_us() - t0 > 20000 || calls >= 1 << 20) break;
    calls *= 2;
  }
  std::vector<double> times;
  for (int r = 0; r < repeats; r++) {
    const double t0 = now_us();
    for (int i = 0; i < calls; i++) ggml_graph_compute(graph, &plan);
    times.push_back((now_us() - t0) / calls);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2] / kOpsPerGraph;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 9;
  std::vector<std::pair<int, int>> shapes;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc) {
      repeats = atoi(argv[++i]);
    } else {
      int rows, dim;
      if (sscanf(arg.c_str(), "%dx%d", &rows, &dim) != 2 || rows < 1 || dim < 32 || dim % 32) {
        fprintf(stderr, "norm-bench: shapes are ROWSxDIM with DIM a multiple of 32, got %s\n", arg.c_str());
        return 1;
      }
      shapes.emplace_back(rows, dim);
    }
  }
  printf("{\"engine\":\"%s\",\"shapes\":[", RUN_ENGINE);
  for (size_t s = 0; s < shapes.size(); s++) {
    const auto [rows, dim] = shapes[s];
    // The tensors' data in a CPU backend buffer, as llama.cpp allocates its
    // weights and activations (32-byte aligned), not in the context itself,
    // which packs them 4-byte aligned on wasm32 (GGML_MEM_ALIGN).
    ggml_init_params params = {3 * ggml_graph_overhead() + (size_t(1) << 16), nullptr, true};
    ggml_context* ctx = ggml_init(params);
    ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, dim, rows);
    ggml_tensor* w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, dim);
    // Values of a residual stream's order of magnitude, from a fixed LCG.
    unsigned state = 12345;
    auto next = [&state] {
      state = state * 1664525u + 1013904223u;
      return (state >> 8) / float(1 << 24) * 4.0f - 2.0f;
    };
    ggml_cgraph* norm_graph = ggml_new_graph(ctx);
    ggml_cgraph* q8_graph = ggml_new_graph(ctx);
    ggml_cgraph* convert_graph = ggml_new_graph(ctx);
    for (int op = 0; op < kOpsPerGraph; op++) {
      ggml_build_forward_expand(norm_graph, ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w));
      ggml_build_forward_expand(q8_graph, ggml_cast(ctx, ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w), GGML_TYPE_Q8_0));
      ggml_build_forward_expand(convert_graph, ggml_cast(ctx, x, GGML_TYPE_Q8_0));
    }
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    for (int64_t i = 0; i < ggml_nelements(x); i++) static_cast<float*>(x->data)[i] = next();
    for (int64_t i = 0; i < dim; i++) static_cast<float*>(w->data)[i] = next();
    const double norm_us = median_us(norm_graph, repeats);
    const int64_t fused_before = fused_q8_ops();
    const double q8_us = median_us(q8_graph, repeats);
    const std::string fused = fused_before < 0 ? "null" : std::to_string(fused_q8_ops() - fused_before);
    const double convert_us = median_us(convert_graph, repeats);
    printf("%s{\"rows\":%d,\"dim\":%d,\"norm_us\":%.4f,\"q8_0_us\":%.4f,\"convert_us\":%.4f,\"fused_q8_ops\":%s}",
           s ? "," : "", rows, dim, norm_us, q8_us, convert_us, fused.c_str());
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
  }
  printf("]}\n");
  return 0;
}
