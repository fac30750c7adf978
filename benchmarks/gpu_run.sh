#!/usr/bin/env bash
# The GPU benchmark in ONE device call (issue 41): installs the wheels that benchmarks/gpu_prepare.sh left in
# .gpu_wheels/ (no package index there: --no-index --no-deps), prints the versions, runs bench_gpu.py within a
# budget and keeps its output in $OUT (gpu_run.log, bench_gpu.txt).  Builds nothing there.
#
#   run(command="bash benchmarks/gpu_run.sh", carry=[".gpu_wheels"], timeout_s=420)
#
# BUDGET (seconds, default 300) bounds the benchmark's rows; the whole call stays under six minutes.
# Any further arguments go to bench_gpu.py (e.g. --n 2e6 for a shorter run).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
BUDGET=${BUDGET:-300}
PYTHON=${PYTHON:-python3}  # the machine's python3 holds torch and CuPy; PYTHON=... tries the script elsewhere
SITE=/tmp/linsep-site
LOG="$OUT/gpu_run.log"
{
    # The machine's python3 is itself a virtual environment (/opt/torch/.venv, holding torch and CuPy): a venv made
    # from it with --system-site-packages would see the base interpreter's packages, not torch.  --target and
    # PYTHONPATH put the two wheels in front of that environment instead.
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
        .gpu_wheels/*.whl || { echo "gpu_run: no wheels in .gpu_wheels (run benchmarks/gpu_prepare.sh here)"; exit 2; }
    export PYTHONPATH="$SITE" PYTHONUNBUFFERED=1 SCIPY_ARRAY_API=1 NUMBA_CACHE_DIR=/tmp/numba-cache
    unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS MKL_NUM_THREADS  # the NumPy rows use all cores
    echo "wheels of commit: $(cat .gpu_wheels/COMMIT 2>/dev/null | tr '\n' ' ')"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    "$PYTHON" - <<'PY'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for name in ("linsep", "array_api_compat", "numpy", "scipy", "sklearn", "numba", "torch", "cupy"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')} {getattr(module, '__file__', '')}")
    except Exception as error:
        print(f"{name}: {type(error).__name__}: {error}")
try:
    import torch
    print("torch.cuda:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except ImportError:
    pass
PY
    # the budget stops the rows; timeout is the backstop should one hang (the table is lost then, not the log)
    timeout -k 10 $((${BUDGET%.*} + 45)) "$PYTHON" benchmarks/bench_gpu.py --budget-seconds "$BUDGET" "$@"
    status=$?
    echo "bench_gpu.py exit status $status"
    exit "$status"
} 2>&1 | tee "$LOG"
