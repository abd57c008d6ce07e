#!/usr/bin/env bash
# Installs the system packages hcmpi builds against, when missing:
# MPICH (mpicc, mpiexec, libmpich), libclang (bindgen, used by mpi-sys) and
# DejaVu Sans (the text of the report's charts).
set -euo pipefail

missing=()
command -v mpicc >/dev/null 2>&1 || missing+=(mpich libmpich-dev)
command -v mpiexec >/dev/null 2>&1 || missing+=(mpich)
if ! ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so'; then
  missing+=(libclang-dev clang)
fi
# The paths reporter/src/chart.rs looks at.
font=""
for f in /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/dejavu/DejaVuSans.ttf \
  /usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf /usr/share/fonts/TTF/DejaVuSans.ttf; do
  [ -f "$f" ] && font=$f
done
[ -n "${HCMPI_REPORT_FONT:-}" ] || [ -n "$font" ] || missing+=(fonts-dejavu-core)

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
