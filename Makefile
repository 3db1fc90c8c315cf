# memfit: `make demo` and `make test` work on a fresh Debian 12 machine of this
# image: they install what is missing (Debian's LLVM/MLIR 22, a .venv on
# Python >= 3.12 with jax 0.12, memfit built into it) and skip what is done.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
APT_PACKAGES := libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libzstd-dev
PY_PACKAGES := jax==0.12.0.1 jaxlib==0.12.0.1 numpy nanobind==3.1.0 scikit-build-core \
  pytest hypothesis lit ortools matplotlib mctx==0.0.71 optax==0.2.8 tqdm==4.70.1 flax==0.12.12 \
  iree-base-compiler==3.13.0 iree-base-runtime==3.13.0
SOURCES := $(shell find lib include python/bindings tools cmake test/lib -type f 2>/dev/null) CMakeLists.txt pyproject.toml
LLVM_BIN := /usr/lib/llvm-22/bin

.PHONY: all deps build demo test lit pytest clean bench bench-deps wheel wheel-smoke lit-asan

all: build

# Debian packages (root on this image; apt-get update once first).
.stamp-apt:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi
	@touch $@

# A Python >= 3.12 for jax 0.12: pyenv's 3.12.1 on this image, else python3.12.
$(PY):
	@py=""; \
	if command -v pyenv >/dev/null 2>&1 && PYENV_VERSION=3.12.1 pyenv which python3 >/dev/null 2>&1; then \
	  py="$$(PYENV_VERSION=3.12.1 pyenv which python3)"; \
	elif command -v python3.12 >/dev/null 2>&1; then py=python3.12; \
	elif command -v python3.13 >/dev/null 2>&1; then py=python3.13; \
	else echo "memfit needs Python >= 3.12 (jax 0.12); none found" >&2; exit 1; fi; \
	echo "creating $(VENV) with $$py"; "$$py" -m venv $(VENV)

# Re-run when the package list changes (pip skips what is installed).
.stamp-pydeps: $(PY) Makefile
	$(PIP) install -q $(PY_PACKAGES)
	@touch $@

deps: .stamp-apt .stamp-pydeps

# memfit itself: the C++ library, memfit._core, memfit-opt and the plugin.
.stamp-build: .stamp-apt .stamp-pydeps $(SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps -e . \
	  -Cbuild-dir=build/cmake -Ceditable.rebuild=false
	@touch $@

build: .stamp-build

demo: build
	$(VENV)/bin/memfit demo

lit: build
	PATH="$(CURDIR)/$(VENV)/bin:$(LLVM_BIN):$$PATH" $(VENV)/bin/lit -sv test/lit

pytest: build
	$(PY) -m pytest -q test/python

test: build
	PATH="$(CURDIR)/$(VENV)/bin:$(LLVM_BIN):$$PATH" $(VENV)/bin/lit -sv test/lit
	$(PY) -m pytest -q test/python
	$(MAKE) --no-print-directory wheel-smoke

# The wheel as a user installs it. `pip wheel` reuses the editable build's
# CMake tree (build/cmake), so nothing is compiled twice; the wheel goes into
# a fresh venv with only its declared dependencies (no extras), and runs from
# a temporary directory, where neither the source tree nor the editable
# install can be imported.
WHEEL_DIR := build/wheel
WHEEL_VENV := build/wheel-venv
wheel: build
	rm -rf $(WHEEL_DIR)
	$(PIP) wheel -q --no-deps --no-build-isolation -w $(WHEEL_DIR) . -Cbuild-dir=build/cmake

wheel-smoke: wheel
	rm -rf $(WHEEL_VENV)
	"$$($(PY) -c 'import sys; print(sys._base_executable)')" -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q $(WHEEL_DIR)/memfit-*.whl
	tmp="$$(mktemp -d)" && cd "$$tmp" && \
	  $(CURDIR)/$(WHEEL_VENV)/bin/memfit demo && \
	  $(CURDIR)/$(WHEEL_VENV)/bin/python $(CURDIR)/test/wheel/smoke.py $(CURDIR)/$(WHEEL_DIR)/memfit-*.whl; \
	  rc=$$?; rm -rf "$$tmp"; exit $$rc

# Every bench_*.py at its full size, each writing bench/results/<bench>.txt
# (hours; bench/README.md lists them and the other scripts).
bench: build
	@for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b --write || exit 1; done

# Optional contenders of bench/bench_race.py (the tests never import them).
BENCH_PACKAGES := pykeops==2.3 faiss-cpu==1.15.1
bench-deps: $(PY)
	$(PIP) install -q $(BENCH_PACKAGES)

# The lit suite against a memfit-opt built with AddressSanitizer (its own
# build tree, build/asan; about 10 minutes on 2 cores): use-after-frees in
# the IR rewrites corrupt the heap only sometimes, so a green `make lit` does
# not rule them out. Not part of `make test`, to keep it within its budget.
ASAN_DIR := build/asan
lit-asan: .stamp-apt .stamp-pydeps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY) \
	  -Dnanobind_DIR=$$($(PY) -m nanobind --cmake_dir) >/dev/null
	cmake --build $(ASAN_DIR) --target memfit-opt
	mkdir -p $(ASAN_DIR)/path && ln -sf ../memfit-opt $(ASAN_DIR)/path/memfit-opt
	ASAN_OPTIONS=detect_leaks=0 PATH="$(CURDIR)/$(ASAN_DIR)/path:$(CURDIR)/$(VENV)/bin:$(LLVM_BIN):$$PATH" \
	  $(VENV)/bin/lit -sv test/lit

clean:
	rm -rf build .stamp-build
