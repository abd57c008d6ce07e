#!/usr/bin/env bash
# The workspace builds, tests and examples included, with the minimum
# supported Rust version (`rust-version` in Cargo.toml), installed with
# rustup when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$msrv" ] || { echo "ci/msrv.sh: no rust-version in Cargo.toml" >&2; exit 1; }
# The oldest release the version admits: "1.95" means 1.95.0.
toolchain=$msrv
[[ $msrv =~ ^[0-9]+\.[0-9]+$ ]] && toolchain=$msrv.0
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
  rustup toolchain install "$toolchain" --profile minimal
fi
echo "ci/msrv.sh: $(rustup run "$toolchain" rustc --version)"
cargo "+$toolchain" check --locked --workspace --all-targets
