// run.cpp: the runner the tests and the benchmark drive, linked to each
// llama.cpp build (stock or integrated; src/integrations/llama.cpp/llama.mk).
// It loads a GGUF whose tokenizer is "none" (the tokens are ids), runs each
// prompt from an empty KV cache on one thread, decodes greedily and prints
// one JSON object on stdout.
//
//   run <model.gguf> <prompts> [--max-len N] [--max-new N] [--stop ID] [--capture MODE] [--bench N]
//
// prompts   token ids, comma-separated, prompts separated by ';' ("0,6;0,2,13")
// --max-len greedy decoding stops when the sequence holds N tokens (default: the context)
// --max-new ... or when it has appended N tokens (default: no limit); 0: the
//           prompt's logits only, each position's (a sequence teacher-forced)
// --stop    ... or when it would append this token (default: none)
// --capture none (default) | norms | fused: through the eval callback, every
//           RMS_NORM (+MUL) node's input and float32 output with the engine's
//           own q8 conversion of that output (what mul_mat's from_float makes
//           of it), and every q8 tensor a CPY writes for mul_mat. "norms" stops
//           the graph after each norm's MUL so that its float32 output exists;
//           "fused" lets the norm, its MUL and the q8 CPY run as one op.
//           Every mode but none also lists each MUL_MAT with its weight's type,
//           that type's vec_dot_type and the type of the src1 it is given
//           (ggml-cpu converts src1 with from_float unless the two are equal).
// --bench N each prompt's prefill and N single-token decode steps, timed:
//           no logits printed, the best of 3 runs of each (bench_clock.h:
//           CPU time in Node, performance.now() in a page)
//
// Each prompt's result holds "fused_q8_ops": how many times the integrated
// ggml-cpu ran its fused RMS_NORM+MUL+CPY-to-q8 op for that prompt (a
// counter llama.patch keeps), null in the stock engine, which has none.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_clock.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "llama.h"

// Defined by the integrated ggml-cpu only (llama.patch): weak, so that the
// stock engine links with its address null.
extern "C" __attribute__((weak)) int64_t rmsnorm_wasm_fused_q8_ops;

namespace {

enum class capture_mode { none, norms, fused };

std::string base64(const void* data, size_t n) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += digits[v >> 18 & 63];
    out += digits[v >> 12 & 63];
    out += i + 1 < n ? digits[v >> 6 & 63] : '=';
    out += i + 2 < n ? digits[v & 63] : '=';
  }
  return out;
}

// The bytes of a tensor's values, row by row (ggml views have strides).
std::vector<char> tensor_bytes(const ggml_tensor* t) {
  const size_t row = ggml_row_size(t->type, t->ne[0]);
  std::vector<char> out;
  out.reserve(row * ggml_nrows(t));
  for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
      for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
        const char* p = static_cast<const char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
        out.insert(out.end(), p, p + row);
      }
  return out;
}

bool is_q8(ggml_type type) {
  return type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K;
}

// A MUL whose operand is an RMS_NORM: a norm with its weight.
const ggml_tensor* norm_of(const ggml_tensor* t) {
  if (t->op != GGML_OP_MUL) return nullptr;
  for (int i = 0; i < 2; i++)
    if (t->src[i] && t->src[i]->op == GGML_OP_RMS_NORM) return t->src[i];
  return nullptr;
}

// A MUL_MAT node as the graph holds it: its weight's type, the vec_dot_type
// ggml-cpu multiplies that type with, and src1's type, and whether src1 is a
// norm's output or a cast of one.
std::string mul_mat_event(const ggml_tensor* t) {
  const ggml_tensor* src1 = t->src[1];
  const bool of_norm = norm_of(src1) || (src1->op == GGML_OP_CPY && norm_of(src1->src[0]));
  return std::string("{\"kind\":\"mul_mat\",\"name\":\"") + t->name + "\",\"weight\":\"" + t->src[0]->name +
         "\",\"weight_type\":\"" + ggml_type_name(t->src[0]->type) + "\",\"vec_dot_type\":\"" +
         ggml_type_name(ggml_get_type_traits_cpu(t->src[0]->type)->vec_dot_type) + "\",\"src1_type\":\"" +
         ggml_type_name(src1->type) + "\",\"of_norm\":" + (of_norm ? "true" : "false") + "}";
}

struct capture {
  capture_mode mode = capture_mode::none;
  // The float32 values of the tensors that feed norms, copied when they were
  // computed: a norm may run in place over its input.
  std::map<const ggml_tensor*, std::vector<char>> inputs;
  std::string json;  // the events of the current prompt, comma-separated
};

void add_event(capture* c, const std::string& event) {
  if (!c->json.empty()) c->json += ",";
  c->json += event;
}

// The engine's own conversion of float32 rows to `type`: the from_float that
// ggml-cpu's mul_mat applies to an F32 src1.
std::vector<char> engine_quantize(const std::vector<char>& f32, int64_t dim, ggml_type type) {
  const int64_t rows = f32.size() / sizeof(float) / dim;
  std::vector<char> out(ggml_row_size(type, dim) * rows);
  for (int64_t r = 0; r < rows; r++)
    ggml_get_type_traits_cpu(type)->from_float(reinterpret_cast<const float*>(f32.data()) + r * dim,
                                               out.data() + r * ggml_row_size(type, dim), dim);
  return out;
}

bool on_eval(ggml_tensor* t, bool ask, void* user_data) {
  capture* c = static_cast<capture*>(user_data);
  const ggml_tensor* norm = norm_of(t);
  const bool feeds_norms = t->op == GGML_OP_ADD || t->op == GGML_OP_GET_ROWS;
  const bool q8_copy = t->op == GGML_OP_CPY && is_q8(t->type);
  if (ask) {
    // Asked once per node and graph compute, before it runs: the graph's shape.
    if (t->op == GGML_OP_MUL_MAT) add_event(c, mul_mat_event(t));
    return feeds_norms || q8_copy || (norm && c->mode == capture_mode::norms);
  }
  if (feeds_norms && t->type == GGML_TYPE_F32) c->inputs[t] = tensor_bytes(t);
  if (norm) {
    const ggml_tensor* x = norm->src[0];
    const ggml_tensor* w = t->src[0] == norm ? t->src[1] : t->src[0];
    const auto input = c->inputs.count(x) ? c->inputs[x] : tensor_bytes(x);
    const auto output = tensor_bytes(t);
    float eps;
    memcpy(&eps, norm->op_params, sizeof eps);
    char head[256];
    snprintf(head, sizeof head, "{\"kind\":\"norm\",\"name\":\"%s\",\"dim\":%lld,\"rows\":%lld,\"eps\":%.9g",
             t->name, (long long)t->ne[0], (long long)ggml_nrows(t), eps);
    std::string event = head;
    event += ",\"x\":\"" + base64(input.data(), input.size()) + "\"";
    event += ",\"weight\":\"" + base64(tensor_bytes(w).data(), ggml_nbytes(w)) + "\"";
    event += ",\"y\":\"" + base64(output.data(), output.size()) + "\"";
    if (t->ne[0] % 32 == 0) {
      const auto q8 = engine_quantize(output, t->ne[0], GGML_TYPE_Q8_0);
      event += ",\"q8_0\":\"" + base64(q8.data(), q8.size()) + "\"";
    }
    add_event(c, event + "}");
  }
  if (q8_copy) {
    const auto bytes = tensor_bytes(t);
    add_event(c, std::string("{\"kind\":\"q8\",\"name\":\"") + t->name + "\",\"type\":\"" +
                     ggml_type_name(t->type) + "\",\"dim\":" + std::to_string(t->ne[0]) + ",\"of\":\"" + t->src[0]->name +
                     "\",\"bytes\":\"" +
                     base64(bytes.data(), bytes.size()) + "\"}");
  }
  return true;
}

void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

[[noreturn]] void fail(const char* what) {
  fprintf(stderr, "run: %s\n", what);
  exit(1);
}

std::vector<std::vector<llama_token>> parse_prompts(const char* text) {
  std::vector<std::vector<llama_token>> prompts(1);
  for (const char* p = text; *p;) {
    if (*p == ';') {
      prompts.emplace_back();
      p++;
    } else if (*p == ',') {
      p++;
    } else {
      char* end;
      prompts.back().push_back(static_cast<llama_token>(strtol(p, &end, 10)));
      if (end == p) fail("prompts are token ids: \"0,6;0,2,13\"");
      p = end;
    }
  }
  for (const auto& prompt : prompts)
    if (prompt.empty()) fail("an empty prompt");
  return prompts;
}

// Decodes tokens at positions from `pos`, logits for each when `all_logits`
// (else the last only).
void decode(llama_context* ctx, const std::vector<llama_token>& tokens, int pos, bool all_logits) {
  llama_batch batch = llama_batch_init(tokens.size(), 0, 1);
  batch.n_tokens = tokens.size();
  for (size_t i = 0; i < tokens.size(); i++) {
    batch.token[i] = tokens[i];
    batch.pos[i] = pos + i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = all_logits || i + 1 == tokens.size();
  }
  if (llama_decode(ctx, batch) != 0) fail("llama_decode failed");
  llama_batch_free(batch);
}

llama_token argmax(const float* logits, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (logits[i] > logits[best]) best = i;
  return best;
}

std::string logits_json(const float* logits, int n) {
  std::string out = "[";
  char number[32];
  for (int i = 0; i < n; i++) {
    snprintf(number, sizeof number, "%s%.9g", i ? "," : "", logits[i]);
    out += number;
  }
  return out + "]";
}

int64_t fused_q8_ops() { return &rmsnorm_wasm_fused_q8_ops ? rmsnorm_wasm_fused_q8_ops : -1; }

// The JSON of the fused ops run since `before` (fused_q8_ops()'s value then).
std::string fused_q8_ops_json(int64_t before) {
  return before < 0 ? "null" : std::to_string(fused_q8_ops() - before);
}

double now_ms() { return bench_clock_us() / 1000; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) fail("usage: run <model.gguf> <prompts> [--max-len N] [--max-new N] [--stop ID] [--capture MODE] [--bench N]");
  capture cap;
  int max_len = 0, max_new = -1, stop = -1, bench = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--max-len") max_len = atoi(value.c_str());
    else if (flag == "--max-new") max_new = atoi(value.c_str());
    else if (flag == "--stop") stop = atoi(value.c_str());
    else if (flag == "--bench") bench = atoi(value.c_str());
    else if (flag == "--capture" && value == "norms") cap.mode = capture_mode::norms;
    else if (flag == "--capture" && value == "fused") cap.mode = capture_mode::fused;
    else if (!(flag == "--capture" && value == "none")) fail(("unknown option " + flag + " " + value).c_str());
  }
  const auto prompts = parse_prompts(argv[2]);

  llama_log_set(quiet_log, nullptr);
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) fail("cannot load the model");
  llama_context_params params = llama_context_default_params();
  params.n_threads = 1;
  params.n_threads_batch = 1;
  params.no_perf = true;
  if (cap.mode != capture_mode::none) {
    params.cb_eval = on_eval;
    params.cb_eval_user_data = &cap;
  }
  llama_context* ctx = llama_init_from_model(model, params);
  if (!ctx) fail("cannot create the context");
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  if (max_len <= 0) max_len = llama_n_ctx(ctx);

  printf("{\"engine\":\"%s\",\"results\":[", RUN_ENGINE);
  for (size_t p = 0; p < prompts.size(); p++) {
    const auto& prompt = prompts[p];
    const int64_t fused_before = fused_q8_ops();
    if (bench > 0) {
      double prefill = 1e300, step = 1e300;
      for (int run = 0; run < 3; run++) {
        llama_memory_clear(llama_get_memory(ctx), true);
        const double t0 = now_ms();
        decode(ctx, prompt, 0, false);
        const double t1 = now_ms();
        for (int i = 0; i < bench; i++)
          decode(ctx, {argmax(llama_get_logits_ith(ctx, -1), n_vocab)}, prompt.size() + i, false);
        const double t2 = now_ms();
        prefill = std::min(prefill, t1 - t0);
        step = std::min(step, (t2 - t1) / bench);
      }
      printf("%s{\"tokens\":%zu,\"prefill_ms\":%.4f,\"decode_ms_per_token\":%.4f,\"fused_q8_ops\":%s}", p ? "," : "",
             prompt.size(), prefill, step, fused_q8_ops_json(fused_before).c_str());
      continue;
    }
    llama_memory_clear(llama_get_memory(ctx), true);
    cap.json.clear();
    cap.inputs.clear();
    std::vector<llama_token> tokens = prompt;
    std::string logits = "[";
    decode(ctx, prompt, 0, true);
    for (size_t i = 0; i < prompt.size(); i++)
      logits += (i ? "," : "") + logits_json(llama_get_logits_ith(ctx, i), n_vocab);
    std::vector<llama_token> continuation;
    // Whether the sequence is as long as the options let it be: no more logits are needed.
    const auto full = [&] { return (int)tokens.size() >= max_len || (int)continuation.size() == max_new; };
    while (!full()) {
      const llama_token next = argmax(llama_get_logits_ith(ctx, -1), n_vocab);
      if (next == stop) break;
      continuation.push_back(next);
      tokens.push_back(next);
      if (full()) break;
      decode(ctx, {next}, tokens.size() - 1, false);
      logits += "," + logits_json(llama_get_logits_ith(ctx, -1), n_vocab);
    }
    std::string ids;
    for (size_t i = 0; i < continuation.size(); i++) ids += (i ? "," : "") + std::to_string(continuation[i]);
    printf("%s{\"tokens\":%zu,\"continuation\":[%s],\"fused_q8_ops\":%s,\"logits\":%s]", p ? "," : "", prompt.size(),
           ids.c_str(), fused_q8_ops_json(fused_before).c_str(), logits.c_str());
    if (cap.mode != capture_mode::none) printf(",\"captures\":[%s]", cap.json.c_str());
    printf("}");
  }
  printf("]}\n");
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
