"""Per-data-set statistics of Tables 1 and 3: mean ± std, the best method, and ties with it.

The paper marks in bold the lowest mean test error of each data set and with
an asterisk every method "not significantly different from the best error
rate at significance level α = 5%", without naming the test.  The runs of all
methods share the same splits, so the comparison here is **paired** over
the splits both methods completed:

``"ttest"`` (default)
    two-sided paired Student t-test (:func:`scipy.stats.ttest_rel`) on the
    per-split test errors;
``"wilcoxon"``
    two-sided Wilcoxon signed-rank test (:func:`scipy.stats.wilcoxon`,
    zero differences dropped), which does not assume normal differences.

A method whose per-split errors equal the best method's on every split is
counted as not significantly different (the tests are undefined there).  With
fewer than two common splits no test is possible and nothing is starred.
Standard deviations use ``ddof=1``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

TESTS = {
    "ttest": "two-sided paired t-test over common splits",
    "wilcoxon": "two-sided Wilcoxon signed-rank test over common splits",
}
ALPHA = 0.05


def paired_pvalue(a, b, test="ttest"):
    """p-value of a two-sided paired test between per-split errors ``a`` and ``b`` (nan if undefined).

    Parameters
    ----------
    a, b : array-like of shape (n_splits,)
        Test errors of two methods on the same splits, in the same order.
    test : {"ttest", "wilcoxon"}, default="ttest"
        Paired t-test or Wilcoxon's signed-rank test.

    Returns
    -------
    float
        The two-sided p-value; ``1.0`` for equal errors, ``nan`` below two splits.

    See Also
    --------
    summarize : Applies it against the best method of a data set.

    Examples
    --------
    >>> from linsep.experiments import paired_pvalue
    >>> round(paired_pvalue([1, 2, 3, 4], [2, 3, 3, 6]), 4)
    0.0917
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2:
        return float("nan")
    if np.allclose(a, b, rtol=0, atol=1e-12):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant differences, tiny samples
        if test == "ttest":
            return float(stats.ttest_rel(a, b).pvalue)
        if test == "wilcoxon":
            return float(stats.wilcoxon(a, b).pvalue)
    raise ValueError(f"unknown test {test!r}; choose from {', '.join(TESTS)}")


def summarize(errors, test="ttest", alpha=ALPHA):
    """Statistics of one data set.

    Parameters
    ----------
    errors : dict
        ``{method: {split: test error %}}``.
    test : {"ttest", "wilcoxon"}, default="ttest"
        Paired test against the best method (:func:`paired_pvalue`).
    alpha : float, default=0.05
        Significance level: ``star`` marks a method whose p-value is at least ``alpha``.

    Returns
    -------
    dict
        ``{method: {"n", "mean", "std", "best", "star", "p_value"}}``; ``best``
        marks the lowest mean (all of them if tied), ``star`` the others not
        significantly different from it (``p_value >= alpha``).

    See Also
    --------
    paired_pvalue : The test behind ``star``.

    Examples
    --------
    >>> from linsep.experiments import summarize
    >>> stats = summarize({"hk": {0: 20.0, 1: 22.0, 2: 21.0}, "hkes": {0: 18.0, 1: 21.0, 2: 19.0}})
    >>> stats["hkes"]["best"], stats["hk"]["star"], round(stats["hk"]["p_value"], 3)
    (True, False, 0.038)
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; choose from {', '.join(TESTS)}")
    out = {}
    for method, by_split in errors.items():
        values = np.array(list(by_split.values()), float)
        out[method] = {"n": int(values.size), "mean": float(values.mean()) if values.size else np.nan,
                       "std": float(values.std(ddof=1)) if values.size > 1 else np.nan,
                       "best": False, "star": False, "p_value": np.nan}
    means = {m: s["mean"] for m, s in out.items() if np.isfinite(s["mean"])}
    if not means:
        return out
    lowest = min(means.values())
    best = [m for m, v in means.items() if abs(v - lowest) <= 1e-9]
    for m in best:
        out[m]["best"] = True
    reference = best[0]
    for m in means:
        if m in best:
            continue
        common = sorted(set(errors[m]) & set(errors[reference]))
        p = paired_pvalue([errors[m][s] for s in common], [errors[reference][s] for s in common], test)
        out[m]["p_value"] = p
        out[m]["star"] = bool(np.isfinite(p) and p >= alpha)
    return out
