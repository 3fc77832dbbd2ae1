#!/usr/bin/env bash
# Configures and builds packscan with warnings as errors into ${BUILD_DIR:-build}.
# The CUDA backend is compiled wherever nvcc is found (PACKSCAN_WITH_CUDA=AUTO).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACKSCAN_WERROR=ON ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
