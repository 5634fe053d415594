#!/usr/bin/env bash
# Build the package as it was at COMMIT into bench/before/dist (ignored by git), for bench/interleaved.mjs:
#   bench/build-before.sh d999e09 && npm run build && node bench/interleaved.mjs bench/before/dist dist
# It sits inside the package so that its imports (jose) resolve to the package's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
commit="${1:?usage: bench/build-before.sh COMMIT}"
rm -rf bench/before
mkdir -p bench/before
git archive "$commit" src tsconfig.build.json | tar -x -C bench/before
node_modules/.bin/tsc -p bench/before/tsconfig.build.json --outDir bench/before/dist --declaration false
echo "bench/build-before.sh: the package of $commit is in bench/before/dist" >&2
