# The two commands of the README, and a plain build.
#   make demo   installs what is missing, builds, runs examples/seed_tour
#   make test   installs what is missing, builds, runs every test through ctest, then the
#               same suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#               ($(ASAN_BUILD); options and suppressions: tests/CMakeLists.txt,
#               tests/sanitizers/)
#   make asan-test  the sanitizer half of make test alone
#   make tsan   the same suite under ThreadSanitizer ($(TSAN_BUILD)). Not part of make test:
#               TSan cannot share a build with ASan, and a third build would lengthen CI for
#               the few tests that use threads (tests/test_threads.cpp); run it after
#               changing anything shared between threads.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc)
# Optimised with line tables only (-g1), so reports name lines while the build and the suite
# stay fast. Without the install test: it builds a consumer project outside the sanitizer flags.
SANITIZER_CONFIG = -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1" \
                   -DKILN_INSTALL=OFF

.PHONY: all build demo test deps configure asan-build asan-test tsan

all: build

deps:
	@bash scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/seed_tour

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) $(SANITIZER_CONFIG) -DKILN_SANITIZE=address,undefined

asan-build: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

asan-test: asan-build
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

test: build asan-build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

$(TSAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(TSAN_BUILD) $(SANITIZER_CONFIG) -DKILN_SANITIZE=thread

tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && ctest --output-on-failure -j $(JOBS)
