"""Ho–Kashyap on array-API data: PyTorch on the CPU (and on a CUDA device where one exists) against NumPy.

Run with ``SCIPY_ARRAY_API=1`` (scikit-learn's array-API dispatch needs it; the script sets it when
it is missing, before scipy is imported).  For each N (default 10⁶ and 10⁷, d = 100) it times an
MHKS fit (``make_classifier("mhks", max_iter=...)``, a fixed number of iterations: no stopping rule
fires with ``tol=0``) on the NumPy array and on the same data as a torch tensor, prints each time
and the ratio torch / NumPy, and the largest relative difference of the coefficients.  The NumPy
fit runs the compiled segment; the array-API fit runs the Python driver with the namespace's
products (``linsep.designs.array_api``), the p × p factor on the host.  Timings are the minimum
over ``--repeat`` runs; on a shared machine ratios are more trustworthy than seconds.
"""

import argparse
import os
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn

from linsep import make_classifier


def best_time(fit, repeat):
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fit()
        best = min(best, time.perf_counter() - start)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=lambda s: [int(float(v)) for v in s.split(",")], default=[10**6, 10**7],
                        help="comma-separated sample counts (default 1e6,1e7)")
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float32")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        raise SystemExit("PyTorch is not installed: pip install torch (CPU wheels suffice)")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"load average: {os.getloadavg()}; torch {torch.__version__}, threads {torch.get_num_threads()}; "
          f"devices: {devices}")
    rng = np.random.default_rng(0)
    params = {"max_iter": args.iterations, "tol": 0.0, "stopping": "paper"}
    for n in args.n:
        X = rng.standard_normal((n, args.d)).astype(args.dtype)
        y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
        t_numpy, reference = best_time(lambda X=X, y=y: make_classifier("mhks", **params).fit(X, y), args.repeat)
        print(f"N = {n:.0e}, d = {args.d}, {args.dtype}: NumPy {t_numpy:.3f} s ({reference.n_iter_} iterates)")
        for device in devices:
            Xt, yt = torch.asarray(X, device=device), torch.asarray(y, device=device)
            with sklearn.config_context(array_api_dispatch=True):
                t_torch, fitted = best_time(lambda Xt=Xt, yt=yt: make_classifier("mhks", **params).fit(Xt, yt),
                                            args.repeat)
            coef = fitted.coef_.cpu().numpy().astype(float)
            error = np.max(np.abs(coef - reference.coef_)) / np.abs(reference.coef_).max()
            print(f"  torch {device}: {t_torch:.3f} s = {t_torch / t_numpy:.2f} × NumPy; "
                  f"coef_ on {fitted.coef_.device}, max relative difference {error:.1e}")


if __name__ == "__main__":
    main()
