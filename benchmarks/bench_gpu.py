"""linsep on a GPU: every method against its NumPy fit, and the cost of an iteration at N = 10⁷ (issue 41).

Run on a machine with a CUDA GPU, PyTorch and/or CuPy (``pip install 'linsep[array-api]' torch cupy-cuda12x``)::

    python benchmarks/bench_gpu.py                      # torch CUDA and CuPy, N = 10⁷, d = 100, float32
    python benchmarks/bench_gpu.py --device cpu --small # the smoke run: torch CPU (if installed) and
                                                        # array-api-strict, small sizes, a few seconds

It sets ``SCIPY_ARRAY_API=1`` before scipy is imported and turns scikit-learn's array-API dispatch on
for the device fits.  It prints one table, with a row per check:

``agree``
    for every method of issue 41 and each library: the fit of the device array against the NumPy fit
    of the same data (``coef_`` to 1e-8 relative in float64, 1e-4 in float32 at a fixed iteration
    count; predictions equal), or the one-line refusal of a method without a device fit;
``iteration``
    at N × d (default 10⁷ × 100, float32) a fixed number of MHKS iterations (``tol=0``: no stopping
    rule fires), the milliseconds per iteration of linsep's device fit, of a hand-written device
    loop of the same iteration (``Z = Y W``, ``E``, ``B ← B + 2μ max(E, 0)``, ``W = M Yᵀ(B + 1)``
    with ``M = (YᵀY + CĨ)⁻¹`` on the device, ``J`` read each step), and of linsep's NumPy fit on all
    cores; the slope between two iteration counts, so the setup (Gram matrix, factor) is left out;
``memory``
    the peak device memory of linsep's fit over ``X.nbytes`` (torch's allocator peak; CuPy's pool);
``hkes`` / ``kernel_hk``
    HKES to its stopping point and kernel HK at N = 50 000, or their refusal.

The whole run is meant to finish within six minutes on one H200; ``--n`` and ``--iterations``
shrink it.
"""

import argparse
import os
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn

from linsep import make_classifier

DEVICE_METHODS = ("hk", "modified_hk", "mhks", "mhka", "hkes", "hkesa", "mse", "lsvm", "batch_perceptron",
                  "widrow_hoff")
"""Methods with a fit on the device (``linsep.designs.array_api_fit``)."""

OTHER_METHODS = ("hkes_cv", "perceptron", "lms",
                 "kozinec", "sk", "kernel_hk", "kernel_lsvm", "kernel_perceptron", "kernel_sk")
"""The other dense methods of issue 41: each is fitted, or its refusal is printed."""

ROWS = []


def row(section, method, library, dtype, result):
    ROWS.append((section, method, library, dtype, result))
    print(f"{section:<10} {method:<18} {library:<14} {dtype:<8} {result}", flush=True)


def libraries(device):
    """``{name: (to_device(ndarray), to_host(array), synchronize(), peak_bytes() or None)}``."""
    found = {}
    try:
        import torch

        where = "cuda" if device == "cuda" else "cpu"
        if where == "cpu" or torch.cuda.is_available():
            def torch_peak():
                return torch.cuda.max_memory_allocated() if where == "cuda" else None

            def torch_reset():
                if where == "cuda":
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()

            found[f"torch {where}"] = (lambda a: torch.asarray(a, device=where), lambda a: a.cpu().numpy(),
                                       torch.cuda.synchronize if where == "cuda" else (lambda: None),
                                       torch_peak, torch_reset)
    except ImportError:
        pass
    if device == "cuda":
        try:
            import cupy

            pool = cupy.get_default_memory_pool()

            def cupy_reset():
                cupy.cuda.Device().synchronize()
                pool.free_all_blocks()

            found["cupy"] = (cupy.asarray, cupy.asnumpy, lambda: cupy.cuda.Device().synchronize(),
                             pool.total_bytes, cupy_reset)
        except ImportError:
            pass
    else:
        try:
            import array_api_strict as strict

            found["array-api-strict"] = (strict.asarray, np.asarray, lambda: None, lambda: None, lambda: None)
        except ImportError:
            pass
    if not found:
        raise SystemExit(f"no array library for --device {device}: install torch, cupy or array-api-strict")
    return found


def problem(n, d, dtype, rng, classes=2):
    X = rng.standard_normal((n, d)).astype(dtype)
    score = X[:, 0] + 0.5 * rng.standard_normal(n)
    y = (score > 0).astype(np.int64) if classes == 2 else np.digitize(score, [-0.5, 0.5]).astype(np.int64)
    return X, y


def agreement(libs, n, d, rng):
    """The ``agree`` rows."""
    cases = [(name, {"random_state": 0} if name.startswith("hkes") else {}, "float64", 2) for name in DEVICE_METHODS]
    cases += [("mse", {}, "float64", 3), ("mhks", {}, "float64", 3),
              ("mhks", {"max_iter": 20, "tol": 0.0, "stopping": "paper"}, "float32", 2)]
    for name, params, dtype, classes in cases:
        X, y = problem(n, d, dtype, rng, classes)
        reference = make_classifier(name, **params).fit(X, y)
        tol = 1e-8 if dtype == "float64" else 1e-4
        for library, (to_device, to_host, _, _, _) in libs.items():
            Xd, yd = to_device(X), to_device(y)
            try:
                with sklearn.config_context(array_api_dispatch=True):
                    fitted = make_classifier(name, **params).fit(Xd, yd)
                    predicted = to_host(fitted.predict(Xd))
            except (TypeError, ValueError) as error:
                row("agree", f"{name}{'' if classes == 2 else f' K={classes}'}", library, dtype, f"refused: {error}")
                continue
            coef = to_host(fitted.coef_).astype(float)
            error = np.max(np.abs(coef - reference.coef_)) / np.abs(reference.coef_).max()
            same = bool(np.all(predicted == reference.predict(X)))
            verdict = "ok" if error <= tol and same else "DIFFERS"
            row("agree", f"{name}{'' if classes == 2 else f' K={classes}'}", library, dtype,
                f"{verdict}: coef_ rel. error {error:.1e} (<= {tol:g}), predictions equal: {same}")
    X, y = problem(n, d, "float64", rng)
    for name in OTHER_METHODS:
        for library, (to_device, _, _, _, _) in libs.items():
            row("agree", name, library, "float64", refusal_or_fit(name, {}, to_device(X), to_device(y)))


def refusal_or_fit(name, params, Xd, yd, sync=lambda: None):
    start = time.perf_counter()
    try:
        with sklearn.config_context(array_api_dispatch=True):
            fitted = make_classifier(name, **params).fit(Xd, yd)
        sync()
    except (TypeError, ValueError) as error:
        return f"refused: {error}"
    return f"fitted in {time.perf_counter() - start:.2f} s, {np.max(fitted.n_iter_)} iterations, {fitted.status_}"


def timed(fit, sync, repeat=3):
    """``(best seconds, result)`` of ``repeat`` runs of ``fit`` after one warm-up run (compilation, caches)."""
    fit()
    best, result = np.inf, None
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        result = fit()
        sync()
        best = min(best, time.perf_counter() - start)
    return best, result


def per_iteration(fit, few, many, sync):
    """Milliseconds per iteration: the slope between fits of ``few`` and ``many`` iterations (setup left out)."""
    t_few, short = timed(lambda: fit(few), sync)
    t_many, long = timed(lambda: fit(many), sync)
    steps = int(np.max(long.n_iter_)) - int(np.max(short.n_iter_))
    return (1e3 * (t_many - t_few) / steps if steps > 0 else float("nan")), steps


def hand_written_loop(xp, X, s, iterations, C, sync):
    """MHKS's iteration written out on the device (the ``iteration`` rows' yardstick); returns seconds."""
    sync()
    start = time.perf_counter()
    d = X.shape[1]
    column = xp.sum(X, axis=0)
    G = xp.zeros((d + 1, d + 1), dtype=xp.float64)
    G[:d, :d] = xp.astype(X.T @ X, xp.float64)
    G[:d, d], G[d, :d], G[d, d] = xp.astype(column, xp.float64), xp.astype(column, xp.float64), X.shape[0]
    penalty = xp.eye(d + 1, dtype=xp.float64) * C
    penalty[d, d] = 0.0
    M = xp.linalg.inv(G + penalty)
    B = xp.ones(X.shape[0], dtype=X.dtype)

    def w_step(B):
        t = s * (B + 1.0)
        return M @ xp.astype(xp.concat([X.T @ t, xp.reshape(xp.sum(t), (1,))]), xp.float64)

    W = w_step(B)
    for _ in range(iterations):
        W32 = xp.astype(W, X.dtype)
        E = s * (X @ W32[:d] + W32[d]) - 1.0 - B
        float(xp.sum(E * E))  # the stopping rule's read
        B = B + 1.0 * xp.clip(E, min=0.0)
        W = w_step(B)
    sync()
    return time.perf_counter() - start


def iteration_cost(libs, n, d, iterations, rng):
    """The ``iteration`` and ``memory`` rows."""
    X, y = problem(n, d, "float32", rng)
    few, many = 2, 2 + iterations
    params = {"tol": 0.0, "stopping": "paper"}
    ms, steps = per_iteration(lambda k: make_classifier("mhks", max_iter=k, **params).fit(X, y), few, many,
                              lambda: None)
    row("iteration", "mhks", "numpy", "float32", f"{ms:.2f} ms per iteration over {steps} "
        f"(N = {n:.0e}, d = {d}, all cores)")
    from sklearn.utils._array_api import get_namespace

    for library, (to_device, _, sync, peak, reset) in libs.items():
        Xd, yd = to_device(X), to_device(y)
        with sklearn.config_context(array_api_dispatch=True):
            xp, _ = get_namespace(Xd)
            reset()
            make_classifier("mhks", max_iter=few, **params).fit(Xd, yd)
            sync()
            peak_bytes = peak()
            ms, steps = per_iteration(lambda k: make_classifier("mhks", max_iter=k, **params).fit(Xd, yd),
                                      few, many, sync)
            row("iteration", "mhks", library, "float32", f"{ms:.2f} ms per iteration over {steps} (linsep)")
            s = xp.astype(2 * yd - 1, Xd.dtype)
            C = make_classifier("mhks").C
            loops = [min(hand_written_loop(xp, Xd, s, k, C, sync) for _ in range(3)) for k in (few, many)]
            row("iteration", "mhks", library, "float32", f"{1e3 * (loops[1] - loops[0]) / (many - few):.2f} ms per "
                "iteration (hand-written loop)")
        row("memory", "mhks", library, "float32", "n/a (no device allocator)" if peak_bytes is None else
            f"peak device memory {peak_bytes / X.nbytes:.2f} × X.nbytes")
        del Xd, yd


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--small", action="store_true", help="a smoke run: small sizes")
    parser.add_argument("--n", type=lambda s: int(float(s)), default=None, help="N of the iteration rows")
    parser.add_argument("--d", type=int, default=None)
    parser.add_argument("--iterations", type=int, default=None)
    args = parser.parse_args()
    n = args.n or (20_000 if args.small else 10**7)
    d = args.d or (10 if args.small else 100)
    iterations = args.iterations or (5 if args.small else 20)
    n_agree, n_kernel = (500, 300) if args.small else (100_000, 50_000)
    libs = libraries(args.device)
    rng = np.random.default_rng(0)
    print(f"libraries: {', '.join(libs)}; scikit-learn {sklearn.__version__}; load average {os.getloadavg()}")
    print(f"{'section':<10} {'method':<18} {'library':<14} {'dtype':<8} result")
    start = time.perf_counter()
    agreement(libs, n_agree, min(d, 20), rng)
    iteration_cost(libs, n, d, iterations, rng)
    X, y = problem(n_agree, min(d, 20), "float32", rng)
    for library, (to_device, _, sync, _, _) in libs.items():
        row("hkes", "hkes", library, "float32", refusal_or_fit("hkes", {}, to_device(X), to_device(y), sync))
    X, y = problem(n_kernel, 10, "float32", rng)
    for library, (to_device, _, sync, _, _) in libs.items():
        row("kernel_hk", "kernel_hk", library, "float32",
            refusal_or_fit("kernel_hk", {}, to_device(X), to_device(y), sync))
    print(f"total {time.perf_counter() - start:.1f} s; {sum('DIFFERS' in r[4] for r in ROWS)} disagreements")


if __name__ == "__main__":
    main()
