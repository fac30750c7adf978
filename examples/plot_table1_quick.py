"""
Table 1 of Lauer & Bloch (2006), in quick mode
==============================================

The paper compares Ho–Kashyap with early stopping against HK, MHKS and the
SVMs on nine IDA data sets, 100 random splits each.  This example runs the
same validation protocol (:func:`linsep.experiments.run_benchmark`) on three
small data sets with three splits each and four methods, so that it takes a
few seconds; the table prints each mean ± std beside the paper's value.
``linsep bench --quick`` (``make demo``) runs ten splits of all nine sets,
``linsep bench`` the full protocol.
"""

import tempfile

import matplotlib.pyplot as plt
import numpy as np

from linsep.experiments import paper_tables, run_benchmark

datasets = ["heart", "thyroid", "breast_cancer"]
methods = ["hk", "hkes", "mhks", "lsvm"]
with tempfile.TemporaryDirectory() as out:
    report = run_benchmark(datasets=datasets, methods=methods, n_splits=3, jobs=1, out=out, progress=False)
print(report.markdown)

# %%
# The same numbers as a figure: our mean test error (bars, ± one standard
# deviation over the three splits) and the paper's (black diamonds).
errors = {(r["dataset"], r["method"]): [] for r in report.results}
for r in report.results:
    errors[r["dataset"], r["method"]].append(r["test_error"])
paper = paper_tables()
fig, ax = plt.subplots(figsize=(8, 3.8))
width = 0.8 / len(methods)
for j, m in enumerate(methods):
    x = np.arange(len(datasets)) + (j - (len(methods) - 1) / 2) * width
    means = [np.mean(errors[d, m]) for d in datasets]
    stds = [np.std(errors[d, m], ddof=1) for d in datasets]
    ax.bar(x, means, width, yerr=stds, capsize=2, label=m.upper(), color=f"C{j}", alpha=0.8)
    ref = [paper[1, d, m]["mean"] if (1, d, m) in paper else np.nan for d in datasets]
    ax.scatter(x, ref, marker="D", s=25, color="k", zorder=3, label="paper" if j == 0 else None)
ax.set_xticks(np.arange(len(datasets)), datasets)
ax.set_ylabel("test error (%)")
ax.set_title("Validation protocol, 3 splits per data set")
ax.legend(fontsize=8, ncol=5)
fig.tight_layout()

plt.show()
