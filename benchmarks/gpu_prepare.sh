#!/usr/bin/env bash
# Prepares, here (with network), what benchmarks/gpu_run.sh needs on the lent GPU machine (which has no package
# index): the linsep wheel built from this checkout and the array-api-compat wheel, in .gpu_wheels/ (ignored through
# .git/info/exclude, so it travels only when a `run` names it in `carry`).
#
#   bash benchmarks/gpu_prepare.sh [python]      # python: an interpreter with pip (default: python3)
#
# Then, in ONE device call: run(command="bash benchmarks/gpu_run.sh", carry=[".gpu_wheels"], timeout_s=420).
# docs/user_guide/performance.md, "Running the GPU benchmark", says more.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-python3}
WHEELS=.gpu_wheels
# the version tests/ run against (pyproject's test extra asks for >= 1.4); the machine's Python is 3.12
COMPAT_VERSION=${COMPAT_VERSION:-1.16.0}

exclude=$(git rev-parse --git-path info/exclude)
grep -qxF "/$WHEELS/" "$exclude" 2>/dev/null || echo "/$WHEELS/" >>"$exclude"
rm -rf "$WHEELS" && mkdir -p "$WHEELS"

# linsep: pure Python (numba compiles at run time), so one py3-none-any wheel; without build isolation where the
# interpreter has setuptools >= 77, else pip fetches it into an isolated build environment.  Built from a copy of the
# tracked files (as they are in the working tree): a stale build/ folder of the checkout cannot slip into the wheel.
source=$(mktemp -d)
trap 'rm -rf "$source"' EXIT
git ls-files -z | xargs -0 cp --parents -t "$source"
"$PYTHON" -m pip wheel -q --no-deps --no-build-isolation -w "$WHEELS" "$source" 2>/dev/null ||
    "$PYTHON" -m pip wheel -q --no-deps -w "$WHEELS" "$source"
"$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$WHEELS" "array-api-compat==$COMPAT_VERSION"

# which commit the wheel holds (a wheel's version is BASE_VERSION alone): gpu_run.sh prints it
{ git rev-parse HEAD; git status --porcelain --untracked-files=no | grep -q . && echo "dirty: tracked files differ"; } \
    >"$WHEELS/COMMIT" || true
ls -l "$WHEELS"
du -sh "$WHEELS"
