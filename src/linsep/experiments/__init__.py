"""The experiment of Lauer & Bloch (2006), §3: nine IDA data sets, seven methods, two protocols.

>>> from linsep.experiments import run_benchmark
>>> report = run_benchmark(datasets=["heart"], methods=["hk", "hkes"], n_splits=2,
...                        out="/tmp/linsep-doctest", progress=False)      # doctest: +SKIP
>>> print(report.markdown)                                                  # doctest: +SKIP

* ``linsep.experiments.protocol`` — splits, the validation/test protocols, the C grid, one run;
* ``linsep.experiments.methods`` — HK, HKES, HKESA, MHKS, MHKA, LSVM, SVM (libsvm) and the
  LinearSVC stand-in, or any registered linsep estimator;
* ``linsep.experiments.stats`` — mean ± std, best method and paired significance test;
* ``linsep.experiments.report`` — Tables 1–3 beside the paper's values, Figures 1–2;
* ``linsep.experiments.runner`` — parallel, cached, resumable :func:`run_benchmark`.
"""

from linsep.experiments.methods import PAPER_METHODS, default_methods, get_method
from linsep.experiments.protocol import PROTOCOLS, coarse_grid, fine_grid, load_split, run_one
from linsep.experiments.report import paper_tables
from linsep.experiments.runner import BenchmarkReport, run_benchmark
from linsep.experiments.stats import TESTS, paired_pvalue, summarize

__all__ = [
    "BenchmarkReport", "PAPER_METHODS", "PROTOCOLS", "TESTS", "coarse_grid", "default_methods", "fine_grid",
    "get_method", "load_split", "paired_pvalue", "paper_tables", "run_benchmark", "run_one", "summarize",
]
