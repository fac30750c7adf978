"""What one device iteration reads and writes, counted on PyTorch CPU tensors: linsep's fit against a hand-written loop.

    python benchmarks/device_traffic.py                    # mhks, N = 10⁵, d = 100, float32
    python benchmarks/device_traffic.py --method hk lsvm --n 2e5 --d 50

A GPU iteration at large ``N`` costs the bytes it moves (memory bandwidth) plus a few microseconds per kernel
launch.  Where no GPU is at hand both can be counted exactly on PyTorch's CPU tensors, through the same
array-api-compat wrapper a CUDA tensor takes: a ``TorchDispatchMode`` sees every ATen operation of a fit.  For
each operation that touches an ``N``-sized tensor (an input or an output with at least ``N`` elements) it adds
the bytes of those tensors; the counts of a fit of ``few`` and of ``many`` iterations are subtracted, so the
setup (validation, the Gram matrix, the factor) drops out.  It prints, per iteration: the bytes over
``X.nbytes`` and the operations, for linsep's fit and for ``benchmarks/bench_gpu.py``'s hand-written loop of the
MHKS iteration (``hand_written_loop``).  Views (the transpose of ``X``) move nothing and are left out.  Counts, not times: the same on any machine (issue 41's GPU limit, linsep ≤ 1.5 × the
hand-written loop, is about time; this is its bandwidth share, measurable in CI-like settings).

Needs PyTorch (a CPU build suffices) and sympy (which PyTorch's dispatch modes import).
"""

import argparse
import os
import sys
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn

sys.path.insert(0, str(Path(__file__).resolve().parent))


def counter(n_rows):
    """A dispatch mode that counts the operations touching ``n_rows``-sized tensors and their bytes."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Traffic(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.operations, self.bytes = Counter(), 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if getattr(func, "is_view", False):  # a view (the transpose of X) moves nothing
                return out
            outputs = out if isinstance(out, (tuple, list)) else [out]
            tensors = [a for a in (*args, *outputs) if isinstance(a, torch.Tensor) and a.numel() >= n_rows]
            if tensors:
                self.operations[str(func)] += 1
                self.bytes += sum(t.numel() * t.element_size() for t in tensors)
            return out

    return Traffic


def per_iteration(run, traffic, few, many):
    """``(bytes, operations)`` per iteration: ``run(k)`` counted at ``few`` and ``many`` iterations, subtracted."""
    counted = []
    for k in (few, many):
        run(k)  # warm: compiled code, caches
        mode = traffic()
        with mode:
            run(k)
        counted.append(mode)
    steps = many - few
    operations = {name: (counted[1].operations[name] - counted[0].operations[name]) / steps
                  for name in set(counted[0].operations) | set(counted[1].operations)}
    return (counted[1].bytes - counted[0].bytes) / steps, {k: v for k, v in operations.items() if v}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", nargs="+", default=["mhks"], help="registry names (linsep.make_classifier)")
    parser.add_argument("--n", type=lambda s: int(float(s)), default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--few", type=int, default=2)
    parser.add_argument("--many", type=int, default=12)
    args = parser.parse_args()
    import torch
    from sklearn.utils._array_api import get_namespace

    import bench_gpu
    from linsep import make_classifier

    warnings.simplefilter("ignore")  # the fixed iteration counts stop at max_iter on purpose
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n, args.d)).astype(np.float32)
    y = (X[:, 0] + 0.3 * rng.standard_normal(args.n) > 0).astype(np.int64)
    Xd, yd = torch.from_numpy(X), torch.from_numpy(y)
    traffic = counter(args.n)
    print(f"N = {args.n}, d = {args.d}, float32 on PyTorch {torch.__version__} (CPU); per iteration, "
          f"iterations {args.few} → {args.many}")
    rows = []
    with sklearn.config_context(array_api_dispatch=True):
        for method in args.method:
            def fit(k, method=method):
                estimator = make_classifier(method, max_iter=k)
                if "tol" in estimator.get_params():
                    estimator.set_params(tol=0.0)  # no stopping rule fires: k iterations
                estimator.fit(Xd, yd)

            rows.append((f"linsep {method}", *per_iteration(fit, traffic, args.few, args.many)))
        xp, _ = get_namespace(Xd)
        signs = xp.astype(2 * yd - 1, Xd.dtype)
        C = make_classifier("mhks").C
        rows.append(("hand-written MHKS loop",
                     *per_iteration(lambda k: bench_gpu.hand_written_loop(xp, Xd, signs, k, C, lambda: None),
                                    traffic, args.few, args.many)))
    for name, moved, operations in rows:
        print(f"\n{name}: {moved / X.nbytes:.2f} × X.nbytes moved, {sum(operations.values()):.0f} operations on "
              f"N-sized tensors")
        for op, count in sorted(operations.items(), key=lambda item: -item[1]):
            print(f"  {count:5.1f}  {op}")


if __name__ == "__main__":
    main()
