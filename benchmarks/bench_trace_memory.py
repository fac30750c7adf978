"""Size of a default teaching trace: Ho–Kashyap on N = 10⁵, d = 50 for 1 000 iterations.

Run: ``PYTHONPATH=src python benchmarks/bench_trace_memory.py [N] [d] [iterations]``.
Prints the bytes held by the trace keys (budget: linsep._core.trace.TRACE_BUDGET_BYTES)
and by the whole ``history_``, the rows kept, and the fit time with and without
the trace (one run each; other processes on the machine add noise).
"""

import sys
import time
import tracemalloc
import warnings

import numpy as np

from linsep import HoKashyapClassifier
from linsep._core.trace import TRACE_BUDGET_BYTES, TRACE_KEYS

n, d, iterations = (int(v) for v in (sys.argv[1:] + ["100000", "50", "1000"][len(sys.argv) - 1:]))
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d))
y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1, -1)  # overlapping classes
params = dict(C=1.0, max_iter=iterations - 1, tol=0.0, stopping="paper", stop_at_separation=False)
warnings.simplefilter("ignore")

start = time.perf_counter()
plain = HoKashyapClassifier(**params).fit(X, y)
t_plain = time.perf_counter() - start

tracemalloc.start()
start = time.perf_counter()
traced = HoKashyapClassifier(record_history=True, **params).fit(X, y)
t_traced = time.perf_counter() - start
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()

h = traced.history_
trace_bytes = sum(h[k].nbytes for k in TRACE_KEYS if k in h)
all_bytes = sum(v.nbytes for v in h.values())
print(f"N={n} d={d}: n_iter_={traced.n_iter_}, rows kept {h['iteration'].size} "
      f"(every {np.diff(h['iteration'][:-1]).max(initial=1)}-th iteration)")
print(f"trace keys {trace_bytes / 2**20:.1f} MiB (budget {TRACE_BUDGET_BYTES / 2**20:.0f} MiB), "
      f"whole history_ {all_bytes / 2**20:.1f} MiB, peak allocation during the traced fit {peak / 2**20:.1f} MiB")
print(f"fit: {t_plain:.2f} s untraced (compiled loop), {t_traced:.2f} s traced (NumPy loop), "
      f"ratio {t_traced / t_plain:.2f}; max |coef difference| {np.abs(plain.coef_ - traced.coef_).max():.2e}")
