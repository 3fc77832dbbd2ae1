#!/usr/bin/env bash
# The README's main job: installs what is missing, builds the packscan command
# and runs `packscan demo` (a generated lineitem-like table, a few queries,
# counts and rows/s) on the default backend. Extra arguments go to
# `packscan demo`.
#
# Only what the demo runs is built, in its own directory (${DEMO_BUILD_DIR:-build-demo}):
# the command, without tests or benchmarks. The CUDA backend is compiled only
# where `nvidia-smi -L` lists a GPU that could run it: compiling its kernels takes
# many minutes on a small machine, for a backend the demo could not use there.
# ci/test.sh still compiles CUDA wherever nvcc is found. PACKSCAN_WITH_CUDA=ON|OFF
# overrides the choice.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
DIR=${DEMO_BUILD_DIR:-build-demo}
cuda=${PACKSCAN_WITH_CUDA:-}
if [ -z "$cuda" ]; then
  cuda=OFF
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    cuda=AUTO
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
      export PATH=/usr/local/cuda/bin:$PATH
    fi
  fi
fi
echo "ci/demo.sh: building the packscan command in $DIR (CUDA backend: $cuda)"
cmake -S . -B "$DIR" -DCMAKE_BUILD_TYPE=Release -DPACKSCAN_WERROR=ON -DPACKSCAN_WITH_CUDA="$cuda" \
  -DPACKSCAN_BUILD_TESTS=OFF -DPACKSCAN_BUILD_BENCH=OFF ${CMAKE_ARGS:-} >/dev/null
cmake --build "$DIR" -j "$(nproc)" --target packscan_cli
"$DIR/tools/packscan" demo "$@"
