#!/usr/bin/env bash
# Configures and builds packscan with warnings as errors into ${BUILD_DIR:-build}.
# The CUDA backend is compiled wherever nvcc is found (PACKSCAN_WITH_CUDA=AUTO).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# Where no GPU could run them (`nvidia-smi -L` lists none), the CUDA kernels
# are compiled once, to PTX for compute_90 (CUDA_ARCHS, default 90-virtual):
# nvcc's front end and NVVM still compile every kernel and its host code, and
# the thrust consumer and the CUDA host tests build as elsewhere. ptxas, about
# half of each architecture's compile time, makes machine code no test could
# run here; the GPU machine's build does it (ci/gpu.sh: sm_90, every kernel).
# CUDA_ARCHS=default keeps the library's default architectures. Nor does
# NVVM optimize that PTX (`-Xcicc -O0`): its optimizer is four fifths of the
# kernels' compile time, and every error and warning of the front end is
# still reported. CUDA_FLAGS replaces those flags.
cuda_archs=()
if ! { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  archs=${CUDA_ARCHS:-90-virtual}
  [ "$archs" = default ] || cuda_archs=(-DCMAKE_CUDA_ARCHITECTURES="$archs")
  cuda_archs+=(-DCMAKE_CUDA_FLAGS="${CUDA_FLAGS--Xcicc -O0}")
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPACKSCAN_WERROR=ON "${cuda_archs[@]}" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
