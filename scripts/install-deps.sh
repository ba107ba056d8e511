#!/usr/bin/env bash
# Installs what strata's build needs from Debian 12's packages; idempotent.
# Runs apt-get only when something is missing, and `apt-get update` once.
# Arguments: extra packages to install with them (make gpu-bundle: clang-16).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make python3 ccache
  llvm-16-dev llvm-16-tools libmlir-16-dev mlir-16-tools lld-16
  libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  clang-format libdlpack-dev graphviz python3-numpy python3-torch
  python3-sklearn libopenblas0 libgloo-dev libtorch-dev
)
# Extra packages a target needs (make gpu-bundle: clang-16).
PACKAGES+=("$@")

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
