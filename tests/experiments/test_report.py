"""linsep.experiments.report: the comparison with the paper in standard errors."""

import math

import numpy as np
import pytest

from linsep.experiments import paper_tables
from linsep.experiments.report import Z_AGREE, error_markdown, error_table, z_score


def _results(dataset, method, errors):
    return [{"dataset": dataset, "method": method, "split": s, "test_error": float(e)} for s, e in enumerate(errors)]


def _with_moments(mean, std, n, seed=0):
    """n errors whose sample mean and std (ddof 1) are exactly ``mean`` and ``std``."""
    z = np.random.default_rng(seed).standard_normal(n)
    return mean + std * (z - z.mean()) / z.std(ddof=1)


def test_z_score_is_the_welch_standard_error_of_the_difference():
    se, z = z_score(17.27, 3.88, 100, 15.40, 3.23, 100)
    assert se == pytest.approx(math.sqrt(3.88 ** 2 / 100 + 3.23 ** 2 / 100), rel=1e-12)
    assert z == pytest.approx((17.27 - 15.40) / se, rel=1e-12)
    assert z_score(17.0, 3.0, 10, 15.0, 3.0, 20)[0] == pytest.approx(math.sqrt(0.9 + 0.45), rel=1e-12)
    for missing in (z_score(17.0, float("nan"), 10, 15.0, 3.0, 100), z_score(17.0, 3.0, 1, 15.0, 3.0, 100),
                    z_score(17.0, 3.0, 10, float("nan"), 3.0, 100), z_score(17.0, 3.0, 10, 15.0, 3.0, 0)):
        assert math.isnan(missing[1])


def test_a_difference_inside_one_std_but_many_standard_errors_away_is_not_agreement():
    paper = paper_tables()[(1, "thyroid", "mhka")]  # 15.40 ± 3.23 over 100 realizations
    errors = _with_moments(paper["mean"] + 1.87, 3.88, 100)  # Δ = +1.87 < 3.23: "within ±1 std" by the old rule
    rows = error_table(_results("thyroid", "mhka", errors), ["thyroid"], ["mhka"], "validation")
    (row,) = rows
    assert row["diff"] == pytest.approx(1.87, abs=1e-9) and abs(row["diff"]) < paper["std"]
    assert row["paper_n_splits"] == 100 and row["z"] == pytest.approx(3.70, abs=0.01)
    assert row["within_2se"] is False
    md = error_markdown(rows, ["thyroid"], ["mhka"], "validation")
    assert "(+1.87, z +3.7)" in md and f"| within {Z_AGREE:g} SE of the paper | 0/1 |" in md
    assert "√(s²/n + s_p²/n_p)" in md  # the legend states the rule


def test_agreement_counts_cells_within_two_standard_errors_and_uses_the_papers_split_count():
    # splice: the paper ran 20 realizations, so its mean's own standard error is sqrt(20) times its std / 20
    paper = paper_tables()[(1, "splice", "hk")]
    assert paper["runs"] == 20
    se = math.sqrt(0.9 ** 2 / 10 + paper["std"] ** 2 / 20)
    close = _with_moments(paper["mean"] + 1.5 * se, 0.9, 10)
    far = _with_moments(paper["mean"] + 2.5 * se, 0.9, 10)
    results = _results("splice", "hk", close) + [dict(r, method="hkes") for r in _results("splice", "hk", far)]
    hkes_paper = paper_tables()[(1, "splice", "hkes")]
    rows = {r["method"]: r for r in error_table(results, ["splice"], ["hk", "hkes"], "validation")}
    assert rows["hk"]["z"] == pytest.approx(1.5, rel=1e-9) and rows["hk"]["within_2se"] is True
    far_z = (paper["mean"] + 2.5 * se - hkes_paper["mean"]) / math.sqrt(0.81 / 10 + hkes_paper["std"] ** 2 / 20)
    assert rows["hkes"]["z"] == pytest.approx(far_z, rel=1e-9)
    assert rows["hkes"]["within_2se"] is (abs(far_z) <= Z_AGREE)
