# rmsnorm-wasm: build the two WebAssembly modules, test, serve the demo.
#   make test   installs what is missing (Emscripten, clang-19, npm packages), builds, runs every test
#   make demo   installs what the demo needs (Emscripten, clang-19, CMake, npm packages), builds the
#               modules and the integrated llama.cpp, serves web/ on localhost (make demo PORT=9000 for another port)
#   make build  only the modules
#   make bench  builds, then the benchmark against the peers (npm run bench)

SHELL := /bin/bash
# A recipe that fails midway leaves no half-made target behind.
.DELETE_ON_ERROR:
# Debian's emcc needs NODE_PATH to find acorn with the system Node.
export NODE_PATH := /usr/share/nodejs
EMCC ?= emcc
CC_NATIVE ?= clang
# The host builds under the sanitizers (fuzzer, known-answer harness).
HOST_CC ?= clang-14
CLANG_FORMAT ?= clang-format
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
PORT ?= 8080

# The block formats' facts where C and TypeScript state them (the enums,
# constants and size functions of src/kernels/q8_blocks.h and
# src/abi/rmsnorm_wasm.h, the C library's messages in rmsnorm_wasm.c, the
# BlockFormat union of src/index.d.ts) are written from their one table,
# src/loader/abi.js's BLOCK_FORMAT, before anything is compiled.
# (A hand edit between a file's markers is written over at the next build.)
BLOCK_FORMATS_WRITTEN := build/block-formats.stamp
BLOCK_FORMAT_FILES := src/kernels/q8_blocks.h src/abi/rmsnorm_wasm.h src/abi/rmsnorm_wasm.c src/index.d.ts
$(BLOCK_FORMATS_WRITTEN): src/loader/abi.js src/abi/block-formats.js $(BLOCK_FORMAT_FILES) | build/
	node src/abi/block-formats.js
	touch $@

# Headers, and the row-driver templates (rows.inc) each instruction set's
# file includes: a change to either rebuilds what includes it (and so does
# a change to the block formats' table).
KERNEL_HEADERS := $(wildcard src/kernels/*.h src/kernels/*/*.h src/kernels/*/*.inc src/abi/*.h) \
  $(BLOCK_FORMATS_WRITTEN)
# Each module links the exported ABI and exactly one kernel per operation.
KERNEL_DIRS := src/kernels/f32-rmsnorm src/kernels/f32-layernorm src/kernels/f32-norm-backward \
  src/kernels/f32-convert src/kernels/f32-quantize
KERNEL_SOURCES := $(wildcard $(addsuffix /*.c,$(KERNEL_DIRS)))
# The exported C ABI (src/abi/exports.c, src/loader/abi.js): the kernels the
# descriptions call (src/ops/descriptions.js, the 16-bit converters among
# them), and the allocator of the modules that own their memory.
KERNEL_EXPORTS := _rmsnorm,_rmsnorm_q8,_layernorm_f32,_rmsnorm_backward_f32,_layernorm_backward_f32,_convert_to_f32,_convert_from_f32,_quantize_q8
MODULE_EXPORTS := $(KERNEL_EXPORTS)
EXPORTS := $(MODULE_EXPORTS),_malloc,_free

# Strict IEEE float32: no FMA contraction, no fast-math (the numerics contract
# in src/kernels/rmsnorm_f32.h). A standalone module with our own loader:
# memory grows on demand up to the 4 GiB wasm32 limit.
CFLAGS := -O3 -std=c11 -Wall -Wextra -Werror -ffp-contract=off -DNDEBUG
LDFLAGS := --no-entry -sSTANDALONE_WASM -sEXPORTED_FUNCTIONS=$(EXPORTS) \
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=1MB \
  -sTOTAL_STACK=64KB -sMALLOC=emmalloc

# The imported-memory builds (bindMemory): kernels only, no allocator, no
# data segments, and a memory import without a maximum so that any
# WebAssembly.Memory can be given to them.
IMPORTED_LDFLAGS := --no-entry -sSTANDALONE_WASM -sIMPORTED_MEMORY -sEXPORTED_FUNCTIONS=$(MODULE_EXPORTS) \
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=64KB -sTOTAL_STACK=16KB

MODULES := build/rmsnorm-simd.wasm build/rmsnorm-scalar.wasm
IMPORTED_MODULES := build/rmsnorm-simd-imported.wasm build/rmsnorm-scalar-imported.wasm
# bindMemory's kernels for memory64 memories (see below).
MEMORY64_MODULES := build/rmsnorm-simd-memory64.wasm build/rmsnorm-scalar-memory64.wasm
# The C library for C engines (see below), and its wasm64 build.
C_LIBRARY := c/rmsnorm_wasm.h c/librmsnorm_wasm_simd.a c/librmsnorm_wasm_scalar.a \
  c/librmsnorm_wasm_simd64.a c/librmsnorm_wasm_scalar64.a
EMBEDDED := src/loader/modules.generated.js src/loader/modules-imported.generated.js \
  src/loader/modules-memory64.generated.js

# Both modules export the same functions, so each names its backend in a
# custom section appended to it: init({ module }) reads it back
# (WebAssembly.Module.customSections) to tell which build a precompiled
# module is. Section layout: id 0, size, name length, name, payload.
BACKEND_SECTION := rmsnorm-wasm.backend
define name_backend
	@name='$(BACKEND_SECTION)'; backend='$(1)'; \
	printf '%b%s%s' "$$(printf '\\x00\\x%02x\\x%02x' $$((1 + $${#name} + $${#backend})) $${#name})" "$$name" "$$backend" >> $@
endef

.PHONY: all build deps demo-deps test demo clean bench bench-native bench-memory64 fuzz lint-c
all: build
build: $(EMBEDDED) $(C_LIBRARY)

# Debian packages, in two sets. What the demo needs (make demo-deps):
# Emscripten builds the modules, clang-19 and lld-19 (with llvm-19's tools)
# the memory64 ones, npm the page's packages (KaTeX), CMake and Ninja the
# llama.cpp its last panel runs (src/integrations/llama.cpp/llama.mk). What the
# tests need besides (make deps): Chromium, Firefox ESR and WebKitGTK (its
# WebDriver and MiniBrowser, on an Xvfb display) run the browser tests
# (tests/helpers/engines.js); Mesa's Vulkan drivers give the browsers a
# software WebGPU adapter; SIMDe lets the same SIMD128 source build for the
# host (native benchmark, sanitizers, fuzzing), with clang and its runtimes;
# clang-format checks the C style. Each installs only what is missing.
install_missing = if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $$missing; \
	fi

demo-deps: node_modules/.package-lock.json
	@missing=""; \
	command -v $(EMCC) >/dev/null || missing="$$missing emscripten"; \
	command -v $(WASM64_CC) >/dev/null || missing="$$missing clang-19"; \
	command -v $(WASM64_LD) >/dev/null || missing="$$missing lld-19"; \
	command -v $(WASM64_AR) >/dev/null || missing="$$missing llvm-19"; \
	command -v cmake >/dev/null || missing="$$missing cmake"; \
	command -v ninja >/dev/null || missing="$$missing ninja-build"; \
	$(install_missing)

deps: demo-deps
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	[ -x /usr/bin/firefox-esr ] || missing="$$missing firefox-esr"; \
	command -v WebKitWebDriver >/dev/null || missing="$$missing webkit2gtk-driver"; \
	command -v Xvfb >/dev/null || missing="$$missing xvfb"; \
	dpkg -s mesa-vulkan-drivers >/dev/null 2>&1 || missing="$$missing mesa-vulkan-drivers"; \
	[ -f /usr/include/simde/wasm/simd128.h ] || missing="$$missing libsimde-dev"; \
	command -v $(CC_NATIVE) >/dev/null || missing="$$missing clang"; \
	command -v $(CLANG_FORMAT) >/dev/null || missing="$$missing clang-format"; \
	command -v $(HOST_CC) >/dev/null || missing="$$missing clang-14"; \
	dpkg -s libclang-rt-14-dev >/dev/null 2>&1 || missing="$$missing libclang-rt-14-dev"; \
	$(install_missing)

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# The four modules, one rule: the instruction set and the link come from the
# target (target-specific variables below).
build/rmsnorm-%.wasm: src/abi/exports.c $(KERNEL_SOURCES) $(KERNEL_HEADERS) Makefile | build/
	$(EMCC) $(CFLAGS) $(ISA_CFLAGS) $(MODULE_LDFLAGS) src/abi/exports.c $(ISA_KERNELS) -o $@
	$(MODULE_FINISH)
	$(REFUSE_SIMD)

build/rmsnorm-simd.wasm build/rmsnorm-simd-imported.wasm c/librmsnorm_wasm_simd.a: ISA := wasmsimd
build/rmsnorm-scalar.wasm build/rmsnorm-scalar-imported.wasm c/librmsnorm_wasm_scalar.a: ISA := scalar
build/rmsnorm-simd-memory64.wasm c/librmsnorm_wasm_simd64.a: ISA := wasmsimd
build/rmsnorm-scalar-memory64.wasm c/librmsnorm_wasm_scalar64.a: ISA := scalar
build/rmsnorm-simd.wasm build/rmsnorm-scalar.wasm: MODULE_LDFLAGS := $(LDFLAGS)
build/rmsnorm-simd-imported.wasm build/rmsnorm-scalar-imported.wasm: MODULE_LDFLAGS := $(IMPORTED_LDFLAGS)
build/rmsnorm-simd.wasm: MODULE_FINISH = $(call name_backend,simd)
build/rmsnorm-scalar.wasm: MODULE_FINISH = $(call name_backend,scalar)
build/rmsnorm-simd-imported.wasm build/rmsnorm-scalar-imported.wasm: \
  MODULE_FINISH = $(call imported_memory_without_maximum,$@)
ISA_CFLAGS = $(if $(filter wasmsimd,$(ISA)),-msimd128,-mno-simd128)
ISA_KERNELS = $(addsuffix /$(ISA).c,$(KERNEL_DIRS))
# The baseline must run on engines without SIMD128: refuse any v128 in it.
REFUSE_SIMD = $(if $(filter scalar,$(ISA)),@! wasm-dis $@ | grep -q v128 || { echo "$@ contains SIMD instructions"; rm -f $@; exit 1; })

# Emscripten declares the imported memory with a maximum; drop it, so that a
# memory created without one links too. Then refuse any data segment: this
# module must not own a byte of the memory it is given.
define imported_memory_without_maximum
	wasm-dis $(1) | sed -E 's/\(import "env" "memory" \(memory (\$$[^ ]+) ([0-9]+) [0-9]+\)\)/(import "env" "memory" (memory \1 \2))/' > $(1).wat
	grep -q '(import "env" "memory" (memory [^ ]* [0-9]*))' $(1).wat || { echo "$(1): unexpected memory import"; exit 1; }
	! grep -q '^ (data' $(1).wat || { echo "$(1): has data segments"; exit 1; }
	wasm-as -all $(1).wat -o $(1)
	rm -f $(1).wat
endef

# The C library for engines in C or C++ built with Emscripten
# (docs/c-library.md): the checked entry points of src/abi/rmsnorm_wasm.h and
# one instruction set's kernels as a static library, beside the header, in
# c/ (shipped in the npm package). Compiled, not linked: the engine's emcc
# links it, with the flags above kept in the objects.
EMAR ?= emar
LLVM_OBJDUMP ?= llvm-objdump-14

c/librmsnorm_wasm_%.a: src/abi/rmsnorm_wasm.c $(KERNEL_SOURCES) $(KERNEL_HEADERS) Makefile
	@mkdir -p c build/c-$*
	rm -f $@ build/c-$*/*.o
	for source in src/abi/rmsnorm_wasm.c $(ISA_KERNELS); do \
	  object=build/c-$*/$$(basename $$(dirname $$source))-$$(basename $$source .c).o; \
	  $(EMCC) $(CFLAGS) $(ISA_CFLAGS) -c $$source -o $$object || exit 1; \
	done
	$(EMAR) rcs $@ build/c-$*/*.o
	$(if $(filter scalar,$(ISA)),@! $(LLVM_OBJDUMP) -d $@ | grep -q v128 || { echo "$@ contains SIMD instructions"; rm -f $@; exit 1; })

# memory64. bindMemory on a memory64 memory (address: 'i64') runs a wasm64
# build of the same sources, made by Debian's clang-19 and wasm-ld-19 (the
# emcc here, clang 14, cannot build wasm64 SIMD): freestanding, no libc
# (src/kernels/freestanding holds the three headers the kernels use, as
# compiler builtins; -mbulk-memory makes every copy or fill an instruction),
# each kernel export taking its addresses and counts as f64
# (src/abi/exports.c). Like the wasm32 imported builds: a memory import
# without a maximum, no allocator, no data segments (checked below); a 4 KiB
# stack that stackRestore moves into the lent region. The C library's wasm64
# build is the same objects with rmsnorm_wasm.c, for C engines built for
# wasm64 with clang.
WASM64_CC ?= clang-19
WASM64_LD ?= wasm-ld-19
WASM64_AR ?= llvm-ar-19
WASM64_OBJDUMP ?= llvm-objdump-19
WASM64_OBJ2YAML ?= obj2yaml-19
CLANG_WASM_CFLAGS := -O3 -std=c11 -Wall -Wextra -Werror -ffp-contract=off -DNDEBUG \
  -ffreestanding -nostdlib -isystem src/kernels/freestanding -mbulk-memory
WASM64_CFLAGS := --target=wasm64 $(CLANG_WASM_CFLAGS)
comma := ,
WASM64_EXPORTS := $(patsubst _%,%,$(subst $(comma), ,$(MODULE_EXPORTS))) stackRestore
FREESTANDING_HEADERS := $(wildcard src/kernels/freestanding/*.h)

# The objects of `sources` in build/$(1)/ (one per source, named by its
# folder and file), compiled by clang-19 for this target's ISA, wasm64 unless
# $(3) gives other flags.
define wasm64_objects
	@mkdir -p build/$(1)
	rm -f build/$(1)/*.o
	for source in $(2); do \
	  object=build/$(1)/$$(basename $$(dirname $$source))-$$(basename $$source .c).o; \
	  $(WASM64_CC) $(or $(3),$(WASM64_CFLAGS)) $(ISA_CFLAGS) -c $$source -o $$object || exit 1; \
	done
endef
# The baseline must hold no v128 instruction, in any build.
REFUSE_SIMD64 = $(if $(filter scalar,$(ISA)),@! $(WASM64_OBJDUMP) -d $@ | grep -q v128 || { echo "$@ contains SIMD instructions"; rm -f $@; exit 1; })

build/rmsnorm-%-memory64.wasm: src/abi/exports.c $(KERNEL_SOURCES) $(KERNEL_HEADERS) $(FREESTANDING_HEADERS) Makefile | build/
	$(call wasm64_objects,memory64-$*,src/abi/exports.c $(ISA_KERNELS))
	$(WASM64_LD) -mwasm64 --no-entry --import-memory --strip-all -z stack-size=4096 \
	  $(addprefix --export=,$(WASM64_EXPORTS)) build/memory64-$*/*.o -o $@
	$(WASM64_OBJ2YAML) $@ > $@.yaml
	grep -A6 'Field: *memory' $@.yaml | grep -q 'Flags: *\[ IS_64 \]$$' || { echo "$@: the memory import is not memory64 without a maximum"; rm -f $@; exit 1; }
	! grep -q 'Type: *DATA' $@.yaml || { echo "$@: has data segments"; rm -f $@; exit 1; }
	rm -f $@.yaml
	$(REFUSE_SIMD64)

c/librmsnorm_wasm_%64.a: src/abi/rmsnorm_wasm.c $(KERNEL_SOURCES) $(KERNEL_HEADERS) $(FREESTANDING_HEADERS) Makefile
	@mkdir -p c
	$(call wasm64_objects,c64-$*,src/abi/rmsnorm_wasm.c $(ISA_KERNELS))
	rm -f $@
	$(WASM64_AR) rcs $@ build/c64-$*/*.o
	$(REFUSE_SIMD64)

c/rmsnorm_wasm.h: src/abi/rmsnorm_wasm.h $(BLOCK_FORMATS_WRITTEN)
	@mkdir -p c
	cp $< $@

# Each module embedded as base64 in a JS module (see src/loader/load.js).
define embed
	@{ echo '// Generated by `make build` from build/*.wasm: do not edit.'; \
	   printf 'export const simd = "%s";\n' "$$(base64 -w0 $(1))"; \
	   printf 'export const scalar = "%s";\n' "$$(base64 -w0 $(2))"; } > $(3)
endef

src/loader/modules.generated.js: $(MODULES)
	$(call embed,build/rmsnorm-simd.wasm,build/rmsnorm-scalar.wasm,$@)

src/loader/modules-imported.generated.js: $(IMPORTED_MODULES)
	$(call embed,build/rmsnorm-simd-imported.wasm,build/rmsnorm-scalar-imported.wasm,$@)

src/loader/modules-memory64.generated.js: $(MEMORY64_MODULES)
	$(call embed,build/rmsnorm-simd-memory64.wasm,build/rmsnorm-scalar-memory64.wasm,$@)

# Host builds of the same kernel sources (SIMD through SIMDe), under
# AddressSanitizer and UBSan with the kernels' asserts live (no -DNDEBUG):
# the known-answer harness (tests/native.test.js) and the libFuzzer target.
HOST_CFLAGS := -g -O1 -std=c11 -Wall -Wextra -Werror -ffp-contract=off \
  -fsanitize=address,undefined -fno-sanitize-recover=all
HOST_KERNELS := $(addsuffix /wasmsimd.c,$(KERNEL_DIRS)) $(addsuffix /scalar.c,$(KERNEL_DIRS))
HOST_DEPS := $(HOST_KERNELS) $(KERNEL_HEADERS) tests/fuzz/checked_kernels.h

build/known-answers-host: tests/fuzz/known_answers_host.c $(HOST_DEPS) | build/
	$(HOST_CC) $(HOST_CFLAGS) $< $(HOST_KERNELS) -lm -o $@

build/fuzz-kernels: tests/fuzz/kernels_fuzz.c $(HOST_DEPS) | build/
	$(HOST_CC) $(HOST_CFLAGS) -fsanitize=fuzzer $< $(HOST_KERNELS) -lm -o $@

# Fuzz for FUZZ_SECONDS from the committed seeds (tests/fuzz/corpus); exits
# non-zero on any finding, leaving the input in build/fuzz-artifacts/.
# Longer: make fuzz FUZZ_SECONDS=1800
FUZZ_SECONDS ?= 60
fuzz: build/fuzz-kernels
	mkdir -p build/fuzz-corpus build/fuzz-artifacts
	$< -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix=build/fuzz-artifacts/ build/fuzz-corpus tests/fuzz/corpus

build/:
	mkdir -p $@

# The benchmark's native row: the SIMD kernel source built for the host with
# SIMDe, 128-bit SSE4.2 without FMA, under the same strict float32 flags.
NATIVE_CFLAGS := -O3 -march=x86-64-v2 -std=c11 -Wall -Wextra -Werror -ffp-contract=off -DNDEBUG
NATIVE_BENCH := build/rmsnorm-native-bench
bench-native: $(NATIVE_BENCH)
$(NATIVE_BENCH): tests/bench/native/harness.c src/kernels/f32-rmsnorm/wasmsimd.c src/kernels/f32-convert/wasmsimd.c src/kernels/f32-quantize/wasmsimd.c $(KERNEL_HEADERS) | build/
	$(CC_NATIVE) $(NATIVE_CFLAGS) tests/bench/native/harness.c src/kernels/f32-rmsnorm/wasmsimd.c src/kernels/f32-convert/wasmsimd.c src/kernels/f32-quantize/wasmsimd.c -lm -o $@

# Every input of the vector float16/bfloat16 conversions, and of the SIMD
# array converters, against the scalar ones
# (tests/fuzz/conversions_exhaustive.c), optimized: 2^32 inputs.
build/conversions-exhaustive: tests/fuzz/conversions_exhaustive.c src/kernels/f32-convert/wasmsimd.c \
  $(KERNEL_HEADERS) | build/
	$(CC_NATIVE) $(NATIVE_CFLAGS) $< src/kernels/f32-convert/wasmsimd.c -lm -o $@

# The benchmark's llama.cpp-style row (tests/bench/llamacpp/): built as wllama
# builds ggml, -O3 -msimd128 with the compiler's default float flags.
LLAMACPP_BENCH := build/llamacpp-rmsnorm.wasm
$(LLAMACPP_BENCH): tests/bench/llamacpp/rms_norm.c | build/
	$(EMCC) -O3 -msimd128 -std=c11 -Wall -Wextra -Werror -DNDEBUG --no-entry -sSTANDALONE_WASM \
	  -sEXPORTED_FUNCTIONS=_llamacpp_rms_norm_mul_fused,_llamacpp_rms_norm_then_mul,_malloc,_free \
	  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB $< -o $@

# The ggml block benchmark's floor row (tests/bench/q8-floor/): less work
# than ggml's q8_0 rule, under the same strict float flags as the modules.
Q8_FLOOR_BENCH := build/q8-floor.wasm
$(Q8_FLOOR_BENCH): tests/bench/q8-floor/q8_0_floor.c | build/
	$(EMCC) $(CFLAGS) -msimd128 --no-entry -sSTANDALONE_WASM \
	  -sEXPORTED_FUNCTIONS=_q8_0_floor,_malloc,_free \
	  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB $< -o $@

bench: deps build bench-native $(LLAMACPP_BENCH) $(Q8_FLOOR_BENCH) llama-cpp
	node tests/bench/run.js
	node tests/bench/threads.js
	node tests/bench/llama-cpp.js

# What memory64 costs against wasm32 (tests/bench/memory64.js, in Chromium
# and Firefox): beside the shipped modules, the wasm32 kernels built by the
# same clang-19 and wasm-ld-19 as the memory64 ones, so that one ratio
# separates the address size from the compiler.
CLANG19_WASM32_BENCH := build/rmsnorm-simd-wasm32-clang19.wasm
$(CLANG19_WASM32_BENCH): ISA := wasmsimd
$(CLANG19_WASM32_BENCH): src/abi/exports.c $(KERNEL_SOURCES) $(KERNEL_HEADERS) $(FREESTANDING_HEADERS) Makefile | build/
	$(call wasm64_objects,wasm32-clang19,src/abi/exports.c $(ISA_KERNELS),--target=wasm32 $(CLANG_WASM_CFLAGS))
	$(WASM64_LD) --no-entry --import-memory --strip-all -z stack-size=4096 \
	  $(addprefix --export=,$(WASM64_EXPORTS)) build/wasm32-clang19/*.o -o $@
bench-memory64: build $(CLANG19_WASM32_BENCH)
	node tests/bench/memory64.js

# llama.cpp built stock and on the package, its runner, its norm benchmark and
# the models (docs/llama.cpp.md).
include src/integrations/llama.cpp/llama.mk
# Its GGUF models, and ggml's own reference quantizers built natively.
include src/integrations/llama.cpp/models.mk
.PHONY: llama-cpp
llama-cpp: $(LLAMA_ENGINES) $(LLAMA_NORM_BENCHES) models

# The bounded fuzz run first, so that the test runner's summary closes the output.
test: deps build bench-native $(LLAMACPP_BENCH) $(Q8_FLOOR_BENCH) build/known-answers-host build/conversions-exhaustive \
  llama-cpp
	npm run --silent lint
	$(MAKE) --no-print-directory fuzz
	build/conversions-exhaustive
	npm test

# The C sources and headers in the style of .clang-format (Debian's
# clang-format, installed by `make deps`); `clang-format -i` applies it.
C_STYLED := $(shell find src tests \( -name '*.[ch]' -o -name '*.inc' \) -not -path '*/node_modules/*')
lint-c:
	$(CLANG_FORMAT) --dry-run -Werror $(C_STYLED)

# The tutorial's last panel also runs the tiny Llama in the integrated
# llama.cpp: its page build and the F32 GGUF, nothing else of llama-cpp.
DEMO_LLAMA := build/llama-run-integrated.mjs build/models/tiny-llama-f32.gguf
demo: demo-deps build $(DEMO_LLAMA)
	node web/serve.js $(PORT)

clean:
	rm -rf build c $(EMBEDDED)
