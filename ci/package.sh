#!/usr/bin/env bash
# The library crates package for the registry: manifests complete, versions
# on the workspace's path dependencies, license and README files in each
# crate, and each packaged crate builds from its .crate file alone (against
# the others packaged beside it). Only crates.io is reached.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo package --locked --allow-dirty -p hc-runtime -p hc-mpi -p hcmpi-dddf -p hcmpi-phasers
