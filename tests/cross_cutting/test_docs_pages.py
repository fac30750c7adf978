"""The ``>>>`` examples of the user-guide pages on model files, data files and separability run as doctests."""

import csv
import doctest
import json
from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[2] / "docs" / "user_guide"


@pytest.mark.parametrize("page", ["persistence.rst", "data_files.rst", "separability_classes.rst"])
def test_page_examples(page):
    result = doctest.testfile(str(PAGES / page), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


DOCS = PAGES.parent


def test_reproduction_tables_are_generated_from_the_recorded_run():
    """docs/generate_tables.py --check: the committed include files are what the committed record gives."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, str(DOCS / "generate_tables.py"), "--check"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    page = (PAGES / "reproduction.md").read_text(encoding="utf-8")
    for name in ("quick_table1.md", "quick_times.md"):
        assert f"```{{include}} generated/{name}" in page  # the page shows the generated table, not a copy
    table = (PAGES / "generated" / "quick_table1.md").read_text(encoding="utf-8")
    assert "| within 2 SE of the paper |" in table and "±1 std" not in table and "HKES-CV(C,k)" in table
    record = json.loads((DOCS / "results" / "quick" / "provenance.json").read_text(encoding="utf-8"))
    assert record["quick"] and record["git"]["commit"] and record["data_sha256"]


def test_generated_tables_follow_the_record(tmp_path):
    """A record whose errors change gives another table: the include files are computed, not copied."""
    import importlib.util
    import shutil

    spec = importlib.util.spec_from_file_location("generate_tables", DOCS / "generate_tables.py")
    generate_tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate_tables)
    record = tmp_path / "record"
    shutil.copytree(DOCS / "results" / "quick", record)
    first = generate_tables.generate(record, tmp_path / "a")[0].read_text(encoding="utf-8")
    with open(record / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["test_error"] = str(float(row["test_error"]) + 5.0)  # every error 5 points higher
    with open(record / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    second = generate_tables.generate(record, tmp_path / "b")[0].read_text(encoding="utf-8")
    assert first != second and "| within 2 SE of the paper |" in second
