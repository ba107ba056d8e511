# strata: `make demo` and `make test` work on a fresh Debian 12 machine.
#   make demo            install missing packages, build, run the demo
#   make test            install, build, run every test (ctest: unit + lit)
#   make test SANITIZE=1 the same in build-sanitize/ with ASan + UBSan and
#                        assertions on
#   make bench           install, build (Release), run the benchmarks
#   make fuzz            build, run the fuzzers for FUZZ_SECONDS (default 600)
#   make test-tsan       the 8-thread test, the distributed collectives and DDP
#                        hooks under ThreadSanitizer (build-tsan/)
#   make gpu-bundle      gpu-bundle/: what tests/gpu/run.sh --bundle runs on a
#                        GPU machine without LLVM/MLIR (build-bundle/)
JOBS ?= $(shell nproc)
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD_DIR ?= build-sanitize
# -O1 -g1 (line tables): what ASan's reports need, built in about half the
# time of RelWithDebInfo's -O2 -g (CI runs both builds). No NDEBUG: this
# build runs the full suite with assertions on (strata's and those inline in
# LLVM's and MLIR's headers, such as cast<>'s type checks).
CMAKE_FLAGS += -DSTRATA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
else
BUILD_DIR ?= build
CMAKE_FLAGS += -DCMAKE_BUILD_TYPE=Release
endif
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_FLAGS += -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
endif

.PHONY: all deps configure build demo test test-tsan bench fuzz gpu-bundle clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS); fi

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./examples/demo.sh $(BUILD_DIR)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	./benchmarks/run.sh $(BUILD_DIR)

# ThreadSanitizer: builds only the concurrency test and what it links.
TSAN_DIR ?= build-tsan
test-tsan: deps
	@if [ ! -f $(TSAN_DIR)/build.ninja ]; then \
	  cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DSTRATA_TSAN=ON $(if $(CCACHE),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
	cmake --build $(TSAN_DIR) -j $(JOBS) --target strata-unit-threads \
	  strata-launch strata-dist-collectives strata-dist-ddp-overlap
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/unit/dsl/tsan.supp" \
	  STRATA_NUM_THREADS=2 $(TSAN_DIR)/bin/strata-unit-threads
	# strata::distributed's worker, inline and waiting threads (3 ranks).
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/unit/dsl/tsan.supp" \
	  STRATA_NUM_THREADS=2 $(TSAN_DIR)/bin/strata-launch --nproc-per-node 3 \
	  $(TSAN_DIR)/bin/strata-dist-collectives
	# DDP's buckets started from gradient hooks inside backward (2 ranks).
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/unit/dsl/tsan.supp" \
	  STRATA_NUM_THREADS=2 $(TSAN_DIR)/bin/strata-launch --nproc-per-node 2 \
	  $(TSAN_DIR)/bin/strata-dist-ddp-overlap

FUZZ_SECONDS ?= 600
fuzz: configure
	JOBS=$(JOBS) ./tests/fuzz/run.sh $(BUILD_DIR) $(FUZZ_SECONDS)

# LLVM, MLIR, fmt, GoogleTest and libstdc++ linked statically into one
# binary, compiled with clang-16 like Debian's LLVM (tests/gpu/make-bundle.sh).
gpu-bundle:
	@./scripts/install-deps.sh clang-16
	JOBS=$(JOBS) ./tests/gpu/make-bundle.sh gpu-bundle

clean:
	rm -rf build build-sanitize build-tsan build-bundle gpu-bundle
