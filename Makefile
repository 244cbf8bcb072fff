# The two commands of the README, and a plain build.
#   make demo   installs what is missing, builds, runs examples/seed_tour
#   make test   installs what is missing, builds, runs every test through ctest
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all build demo test deps configure

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

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
