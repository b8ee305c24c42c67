# The two commands of the README, `make run` and `make test`, plus the other
# developer targets. Every target installs what is missing first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
BENCH_BUILD?= build-release
JOBS       ?= $(shell nproc)
# CI builds warning-free or not at all.
WERROR     ?= $(if $(CI),ON,OFF)
CMAKE_ARGS ?=

FUSESCOPE  = $(BUILD)/app/fusescope
HAVE_DISPLAY = $(or $(DISPLAY),$(WAYLAND_DISPLAY))

.PHONY: all deps build run test test-asan bench package format clean

all: build

deps:
	@packaging/install-deps.sh

# Line tables only (-g1): backtraces keep function names and lines, and the
# build compiles about a quarter faster than with -g (core/ops/reduction.cpp
# 103 -> 78 s; `make test` from a clean clone 29 min 52 s -> 21 min 39 s on a
# 2-core Zen 3).
DEBUG_FLAGS = -O2 -g1 -DNDEBUG

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUSESCOPE_WERROR=$(WERROR) \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(DEBUG_FLAGS)" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(DEBUG_FLAGS)" $(CMAKE_ARGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
ifneq ($(HAVE_DISPLAY),)
	$(FUSESCOPE)
else
	@echo "No display: running the demo headless (report, and every view rendered into $(BUILD)/screenshots)"
	$(FUSESCOPE) demo --headless --out $(BUILD)/screenshots
endif

test: build
	cd $(BUILD) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DFUSESCOPE_SANITIZE=address,undefined -DFUSESCOPE_WERROR=$(WERROR) $(CMAKE_ARGS)

test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && QT_QPA_PLATFORM=offscreen \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

$(BENCH_BUILD)/build.ninja: | deps
	cmake -S . -B $(BENCH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

bench: deps $(BENCH_BUILD)/build.ninja
	cmake --build $(BENCH_BUILD) -j $(JOBS)
	cmake --build $(BENCH_BUILD) --target run-benchmarks

package: build
	cd $(BUILD) && cpack

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(BENCH_BUILD)
