#!/usr/bin/env bash
# Installs the Debian packages packscan needs to build and test, when missing:
# a C compiler, CMake, the OpenCL ICD loader and headers, and PoCL (the OpenCL
# CPU device the tests run on in CI), and clang with its sanitizer and libFuzzer
# runtime (ci/sanitize.sh, ci/fuzz.sh). nvcc is not installed here: where it is
# present the CUDA backend is compiled too.
set -euo pipefail
pkgs=(build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo)
pkgs+=(clang libclang-rt-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ci/install-deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# A missing OpenCL device is a failure in CI, not a skip: say so early.
if ! clinfo -l 2>/dev/null | grep -qi device; then
  echo "ci/install-deps.sh: no OpenCL device visible (clinfo -l):" >&2
  clinfo -l >&2 || true
  exit 1
fi
clinfo -l
