# strata: `make demo` and `make test` work on a fresh Debian 12 machine.
#   make demo            install missing packages, build, run the demo
#   make test            install, build, run every test (ctest: unit + lit)
#   make test SANITIZE=1 the same in build-sanitize/ with ASan + UBSan
#   make bench           install, build (Release), run the benchmarks
#   make fuzz            build, run the fuzzers for FUZZ_SECONDS (default 600)
JOBS ?= $(shell nproc)
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD_DIR ?= build-sanitize
CMAKE_FLAGS += -DSTRATA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
else
BUILD_DIR ?= build
CMAKE_FLAGS += -DCMAKE_BUILD_TYPE=Release
endif
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_FLAGS += -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
endif

.PHONY: all deps configure build demo test bench fuzz clean

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

FUZZ_SECONDS ?= 600
fuzz: configure
	JOBS=$(JOBS) ./tests/fuzz/run.sh $(BUILD_DIR) $(FUZZ_SECONDS)

clean:
	rm -rf build build-sanitize
