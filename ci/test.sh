#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test
# (ctest, then the Python package's pytest).
# OpenCL tests run on PoCL here and fail if no OpenCL device is found; CUDA
# tests are skipped without a GPU unless PACKSCAN_REQUIRE_CUDA=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
# The Python package (python/): installed with pip and tested with pytest
# against pyarrow, polars and DuckDB.
bash ci/python.sh
