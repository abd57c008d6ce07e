#!/usr/bin/env bash
# Installs the system packages hcmpi builds against, when missing:
# MPICH (mpicc, mpiexec, libmpich) and libclang (bindgen, used by mpi-sys).
set -euo pipefail

missing=()
command -v mpicc >/dev/null 2>&1 || missing+=(mpich libmpich-dev)
command -v mpiexec >/dev/null 2>&1 || missing+=(mpich)
if ! ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so'; then
  missing+=(libclang-dev clang)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/deps.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    rustup component add "$component"
  fi
done
