#!/usr/bin/env bash
# packscan.spark on a local Spark: pip-installs python/ and pyspark with the
# test's dependencies (pytest, pyarrow, pandas, duckdb), then runs
# python/tests/test_spark.py (Spark in local mode, local[2]). Not part of CI:
# pyspark is a few hundred MB. Spark needs Java 17 or later: without `java`
# on PATH (or JAVA_HOME) this apt-gets Debian's default-jre-headless.
# PYTHON picks the interpreter (default python3; a virtual environment's
# python keeps the installs out of the system's).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v java >/dev/null && [ -z "${JAVA_HOME:-}" ]; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q && $SUDO apt-get install -y -q default-jre-headless
fi
java -version 2>&1 | head -1
PY=${PYTHON:-python3}
"$PY" -m pip install --quiet ./python
"$PY" -m pip install --quiet pytest pyarrow pandas duckdb "pyspark>=3.3"
"$PY" -c 'import pyspark; print("pyspark", pyspark.__version__)'
PYSPARK_PYTHON=$("$PY" -c 'import sys; print(sys.executable)') "$PY" -m pytest -q -rs python/tests/test_spark.py
