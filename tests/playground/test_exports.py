"""The playground's TeX export is trace_table(...).to_latex() itself, with rows to keep and longtable."""

import numpy as np
import pytest

from linsep.inspection import trace_table
from linsep.playground.exports import LONGTABLE_ROWS, trace_latex
from linsep.playground.session import fit_run, preset_points, PRESETS


@pytest.fixture(scope="module")
def lecture_run():
    preset = PRESETS["lecture"]
    X, y = preset_points("lecture")
    return fit_run(X, y, preset.method, preset.params, preset.start)


def test_the_export_is_the_tables_own_latex(lecture_run):
    table = trace_table(lecture_run.estimator)
    assert len(table) == 104 > LONGTABLE_ROWS
    assert trace_latex(lecture_run) == table.to_latex(longtable=True)  # a full run: a longtable
    assert trace_latex(lecture_run, longtable=False) == table.to_latex()
    assert table.to_latex().startswith(r"\begin{tabular}{rlllrr}")


def test_rows_to_keep(lecture_run):
    text = trace_latex(lecture_run, first=3, every=50)
    assert text.startswith(r"\begin{tabular}")  # few rows: one slide
    rows = [line.split(" & ")[0] for line in text.splitlines() if " & " in line][1:]  # the headers aside
    assert rows == ["1", "2", "3", "51", "101", "104"]
    assert text.count(r"\vdots") == 3  # 4…50, 52…100, 102…103
    assert r"$[28, 22.6, 1, 1]$" in text  # the lecture's b(2)
    last = trace_latex(lecture_run, first=1)
    assert [line.split(" & ")[0] for line in last.splitlines() if " & " in line][1:] == ["1", "104"]
    with pytest.raises(ValueError, match="every"):
        trace_latex(lecture_run, every=0)
