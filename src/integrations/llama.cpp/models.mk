# The GGUF models the llama.cpp engines run, and ggml's own quantizers built
# natively from the same pinned source (included by the top Makefile, beside
# llama.mk, which fetches and checks the source into $(LLAMA_SOURCE) and
# names $(LLAMA_DIR)).
#   build/ggml-native/            ggml-base for the host, from the pinned source
#   build/ggml-quantize           ggml_quantize.c linked to it: ggml's reference quantizers as a filter
#   build/models/*.gguf           the tiny Llama (F32, BF16, Q8_0) and the wide one (Q8_0, Q4_K)

GGML_NATIVE_BUILD := build/ggml-native
GGML_QUANTIZE := build/ggml-quantize
TINY_MODELS := $(foreach format,f32 bf16 q8_0,build/models/tiny-llama-$(format).gguf)
WIDE_MODELS := $(foreach format,q8_0 q4_k,build/models/wide-llama-$(format).gguf)
MODELS := $(TINY_MODELS) $(WIDE_MODELS)

.PHONY: models
models: $(MODELS)

# Only the ggml-base target (ggml.c, ggml-quants.c, gguf.cpp: no CPU backend),
# by the clang the host builds use, no -march, and no contraction: each
# float32 operation of ggml's reference quantizers rounded as the C is
# written (a compiler may fuse q8_K's iscale*x + 12582912.f into an FMA
# where the target has one, as arm64 does). Kept off the CPUs the tests
# share: one job, niced.
CXX_NATIVE ?= clang++
GGML_NATIVE_CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=$(CC_NATIVE) \
  -DCMAKE_CXX_COMPILER=$(CXX_NATIVE) -DCMAKE_C_FLAGS=-ffp-contract=off \
  -DCMAKE_CXX_FLAGS=-ffp-contract=off -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_COMMON=OFF
$(GGML_NATIVE_BUILD)/ggml/src/libggml-base.a: $(LLAMA_SOURCE)/.pinned $(LLAMA_DIR)/models.mk
	rm -rf $(GGML_NATIVE_BUILD)
	cmake -S $(LLAMA_SOURCE) -B $(GGML_NATIVE_BUILD) $(GGML_NATIVE_CMAKE_FLAGS) > $(GGML_NATIVE_BUILD).cmake.log 2>&1 \
	  || { cat $(GGML_NATIVE_BUILD).cmake.log; exit 1; }
	nice -n 10 ninja -C $(GGML_NATIVE_BUILD) -j1 ggml-base

$(GGML_QUANTIZE): $(LLAMA_DIR)/ggml_quantize.c $(GGML_NATIVE_BUILD)/ggml/src/libggml-base.a
	$(CC_NATIVE) -O2 -std=c11 -Wall -Wextra -Werror -I $(LLAMA_SOURCE)/ggml/src \
	  -I $(LLAMA_SOURCE)/ggml/include $< $(GGML_NATIVE_BUILD)/ggml/src/libggml-base.a -lstdc++ -lm -lpthread -o $@

# The tiny Llama from the tutorial's weights; its Q8_0 blocks are the
# package's quantize (tests/ggml-reference.test.js holds them to ggml's).
build/models/tiny-llama-%.gguf: $(LLAMA_DIR)/models.js $(LLAMA_DIR)/gguf.js web/model/weights.json \
  web/model/weights.bin $(EMBEDDED)
	@mkdir -p build/models
	node $(LLAMA_DIR)/models.js tiny $* $@

# The wide Llama's weights are generated (seeded); its Q4_K blocks are ggml's.
build/models/wide-llama-%.gguf: $(LLAMA_DIR)/models.js $(LLAMA_DIR)/gguf.js $(EMBEDDED) $(GGML_QUANTIZE)
	@mkdir -p build/models
	node $(LLAMA_DIR)/models.js wide $* $@ --ggml-quantize $(GGML_QUANTIZE)
