"""Cold starts: fresh processes compiling the Ho–Kashyap loop into one empty numba cache at once.

Issue 29 saw one segmentation fault in ``solvers/_hk_compiled.py:_run_segments`` right after another
process had compiled into the same cache.  ``benchmarks/stress_cold_start.py`` runs hundreds of such
cold starts; these are its fast checks: two processes racing on one empty cache both finish and agree
bit for bit with a third that loads what they wrote, and the compiled passes, compiled with numba's
bounds checks, index nothing out of bounds on edge shapes (fewer rows than threads, one row, a partial
last chunk, no or one validation row).
"""

import json
import os
import subprocess
import sys
import textwrap

FIT = textwrap.dedent("""
    import hashlib, json, warnings
    import numpy as np
    from linsep import make_classifier
    out = {}
    rng = np.random.default_rng(0)
    # float32 by rows (more than by_columns_max_entries entries), as in the report; 3 classes
    for name, dtype, n, d in (("mhks", "float32", 3000, 48),):
        X = rng.standard_normal((n, d)).astype(dtype)
        y = np.argmax(X[:, :3] + 0.5 * rng.standard_normal((n, 3)), axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = make_classifier(name, max_iter=20).fit(X, y)
        coef = np.concatenate([model.coef_.ravel(), model.intercept_.ravel()]).astype(float)
        out[name + dtype] = [hashlib.sha256(coef.tobytes()).hexdigest(), model._fit_plans[0]["driver"]]
    print(json.dumps(out))
""")


def _env(cache, **more):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    env.update(more)
    return env


def test_concurrent_cold_starts_share_one_cache(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", FIT], env=_env(cache), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (proc.returncode, err[-2000:])
        outs.append(json.loads(out.strip().splitlines()[-1]))
    # a third process loads what the two wrote
    warm = subprocess.run([sys.executable, "-c", FIT], env=_env(cache), capture_output=True, text=True, timeout=300)
    assert warm.returncode == 0, warm.stderr[-2000:]
    outs.append(json.loads(warm.stdout.strip().splitlines()[-1]))
    assert all(out == outs[0] for out in outs), outs
    assert all(driver == "compiled" for _, driver in outs[0].values()), outs[0]


EDGES = textwrap.dedent("""
    import numpy as np
    from linsep.solvers.ho_kashyap.loops import (_count_rows_parallel, _pass_by_rows_chunked, _pass_by_rows_parallel,
                               _weighted_gram_by_rows)
    from linsep._core.threads import chunk_range, row_chunks

    rng = np.random.default_rng(0)
    for dtype in (np.float32,):  # the report's type, and the float32 pass's blocks of rows
        # n rows x d columns: one row; fewer rows than threads; a partial last chunk of one row (3 chunks)
        for n, d in ((1, 3), (3, 5), (2049, 128)):
            X = rng.standard_normal((n + 3, d)).astype(dtype)
            rows = np.arange(0, n + 3)[:n]  # a row subset of X
            y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0).astype(dtype)
            W = rng.standard_normal(d + 1)
            B = np.ones(n, dtype=dtype)
            D = np.ones(n)
            for val in (0, 1, 2):  # no, one, two validation rows (merged: rows after the training rows)
                rows_val = np.arange(n, n + val)
                y_val = np.ones(val, dtype=dtype)
                for threads in (2, 4):
                    for weights in (D, D[:0]):
                        E, B_next, g = np.empty(n, dtype=dtype), np.empty(n, dtype=dtype), np.empty(d + 1)
                        a = _pass_by_rows_parallel(X, y, rows, W, B, 1.0, 0.8, 1e-6, weights, E, B_next, g,
                                                   threads, y_val, rows_val)
                        g2 = np.empty(d + 1)
                        b = _pass_by_rows_chunked(X, y, rows, W, B, 1.0, 0.8, 1e-6, weights, E.copy(),
                                                  B_next.copy(), g2, y_val, rows_val)
                        assert a == b and np.array_equal(g, g2), (n, d, val, threads)
                    c = _count_rows_parallel(X, y, rows, W, n, threads)
                    gram = _weighted_gram_by_rows(X, y, rows, D, B_next, 1.0, np.empty(d + 1), True,
                                                  threads if threads > 1 else None)
                    assert gram.shape == (d + 1, d + 1) and 0 <= c <= n
    # chunk bounds cover 0:n once, in order, for any n
    for n in (0, 1, 1023, 1024, 1025, 2049, 70000):
        for k in (1, 2, 3, 64):
            bounds = [chunk_range(n, k, c) for c in range(k)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            assert all(bounds[i][1] == bounds[i + 1][0] for i in range(k - 1))
    print("ok")
""")


def test_compiled_passes_in_bounds_on_edge_shapes(tmp_path):
    """NUMBA_BOUNDSCHECK=1 (a fresh cache: everything compiled with the checks): an index out of bounds raises."""
    run = subprocess.run([sys.executable, "-c", EDGES], env=_env(tmp_path, NUMBA_BOUNDSCHECK="1",
                                                                   NUMBA_NUM_THREADS="2"),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (run.returncode, run.stderr[-3000:])
