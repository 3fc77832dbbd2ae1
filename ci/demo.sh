#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs
# `packscan demo` (a generated lineitem-like table, a few queries, counts and
# rows/s) on the default backend. Extra arguments go to `packscan demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh
"${BUILD_DIR:-build}/tools/packscan" demo "$@"
