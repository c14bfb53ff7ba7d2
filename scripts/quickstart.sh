#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job on its
# embedded default (a short TPC-C run on SQLite in ./appsim-data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
mkdir -p appsim-data
exec build/appsim tpcc --target ./appsim-data --json appsim-data/result.json "$@"
