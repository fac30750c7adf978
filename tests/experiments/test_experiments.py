"""The experiment of Lauer & Bloch (2006): grid, splits, protocols, statistics, outputs, cache."""

import hashlib
import json
import os
import platform
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

import linsep
from linsep.cli import main
from linsep.datasets import BENCHMARKS, benchmark_splits
from linsep.experiments import (coarse_grid, fine_grid, get_method, load_split, paired_pvalue, paper_tables,
                                run_benchmark, run_one, summarize)
from linsep.experiments.methods import EXTENSION_METHODS, LABELS, Method
from linsep.experiments.runner import _task


def test_c_grid_is_the_papers():
    np.testing.assert_allclose(coarse_grid(), [2.0 ** p for p in range(-10, 11, 2)])
    fine = fine_grid(4)
    assert fine.size == 9 and fine[0] == 2.0 ** 3 and fine[-1] == 2.0 ** 5 and 2.0 ** 4 in fine


def test_grid_search_tests_20_values_and_keeps_the_best():
    r = run_one("heart", "mhks", 0)
    curve = np.array(r["c_curve"])
    assert r["n_fits"] == 20 and curve.shape == (20, 2)
    np.testing.assert_allclose(curve[:11, 0], coarse_grid())
    p = np.log2(curve[:11][np.argmin(curve[:11, 1]), 0])
    np.testing.assert_allclose(curve[11:, 0], fine_grid(p))
    assert r["tuning_error"] == curve[11:, 1].min() and r["C"] in curve[11:, 0]


def test_splits_are_benchmark_splits_and_protocols_differ():
    X_tr, y_tr, X_te, y_te = list(benchmark_splits("thyroid", 2, random_state=3))[1]
    X_fit, y_fit, X_val, y_val, X_test, y_test = load_split("thyroid", 1, "validation", 3)
    np.testing.assert_array_equal(X_test, X_te)
    assert len(y_fit) == round(2 / 3 * len(y_tr)) and len(y_fit) + len(y_val) == len(y_tr)
    np.testing.assert_array_equal(np.sort(np.r_[y_fit, y_val]), np.sort(y_tr))
    t = load_split("thyroid", 1, "test", 3)
    np.testing.assert_array_equal(t[0], X_tr)
    np.testing.assert_array_equal(t[2], X_te)  # tuned on the test split (§3.3)
    with pytest.raises(ValueError, match="protocol"):
        load_split("thyroid", 0, "cv")


def test_early_stopping_gets_the_tuning_set_explicitly():
    r = run_one("thyroid", "hkes", 0, keep_curve=True)
    curve = np.array(r["iter_curve"])
    assert r["n_fits"] == 1 and curve[r["best_iter"] - 1] == curve.min() == pytest.approx(r["tuning_error"])
    test = run_one("thyroid", "hkes", 0, protocol="test")
    assert test["tuning_error"] == test["test_error"]


def test_method_tuning_kinds():
    assert get_method("hk").tuning == "none" and get_method("hkesa").tuning == "early_stopping"
    assert get_method("mhka").tuning == "C" and get_method("svm").tuning == "C"
    bias = get_method("linear_svc").build(C=1.0)
    assert bias.loss == "hinge"
    with pytest.raises(ValueError, match="unknown method"):
        get_method("nope")


def test_paired_statistics():
    a = {s: 10.0 + s % 3 for s in range(20)}
    assert paired_pvalue([1, 2, 3], [1, 2, 3]) == 1.0
    assert np.isnan(paired_pvalue([1.0], [2.0]))
    far = {s: v + 5 for s, v in a.items()}
    near = {s: v + (0.02 if s % 2 else -0.01) for s, v in a.items()}
    for test in ("ttest", "wilcoxon"):
        s = summarize({"a": a, "far": far, "near": near}, test=test)
        assert s["a"]["best"] and not s["far"]["star"] and s["near"]["star"]
    tie = summarize({"a": a, "b": dict(a)})
    assert tie["a"]["best"] and tie["b"]["best"]


def test_paper_tables_transcribed():
    t = paper_tables()
    assert len([k for k in t if k[0] == 1]) == len([k for k in t if k[0] == 3]) == 9 * 7
    assert (t[(1, "thyroid", "svm")]["mean"], t[(1, "thyroid", "svm")]["std"]) == (10.39, 2.86)
    assert t[(1, "titanic", "hk")]["bold"] == "1" and t[(3, "splice", "hkes")]["bold"] == "1"
    assert t[(2, "image", "hkesa")]["mean"] == 2760 and t[(2, "splice", "lsvm")]["runs"] == 20
    assert {k[1] for k in t} == set(BENCHMARKS)


def test_bench_outputs_cache_and_determinism(tmp_path, capsys):
    argv = ["bench", "--datasets", "heart", "thyroid", "--methods", "hk", "hkes", "mhks",
            "--splits", "2", "--out", str(tmp_path / "a"), "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "paired t-test" in out and "wrote:" in out and "12 runs computed" in out
    a = tmp_path / "a"
    for name in ("table1.md", "table1.csv", "table2.md", "table2.csv", "results.csv", "results.json",
                 "fig1_hkes_validation.png", "fig2_lsvm_validation_vs_C.png"):
        assert (a / name).stat().st_size > 0, name
    md = (a / "table1.md").read_text()
    assert "paper" in md and "18.20 ± 3.92" in md and "**" in md  # HK heart, Table 1
    rows = json.loads((a / "results.json").read_text())
    assert len(rows) == 12 and {r["split"] for r in rows} == {0, 1}
    # resumes: a second call computes nothing and gives the same numbers
    assert main(argv) == 0
    assert "0 runs computed, 12 reused" in capsys.readouterr().out
    # deterministic whatever the number of workers
    report = run_benchmark(datasets=["thyroid"], methods=["hkes", "mhks"], n_splits=2, jobs=2,
                           out=tmp_path / "b", progress=False)
    key = lambda r: (r["dataset"], r["method"], r["split"])  # noqa: E731
    assert sorted((key(r), r["test_error"]) for r in report.results) == sorted(
        (key(r), r["test_error"]) for r in rows if r["dataset"] == "thyroid" and r["method"] != "hk")


def test_test_protocol_is_flagged_optimistic(tmp_path, capsys):
    assert main(["bench", "--protocol", "test", "--datasets", "titanic", "--methods", "hk", "linear_svc",
                 "--splits", "1", "--out", str(tmp_path), "--no-progress", "--test", "wilcoxon"]) == 0
    out = capsys.readouterr().out
    assert "Table 3" in out and "OPTIMISTIC" in out and "Wilcoxon" in out
    assert (tmp_path / "table3.csv").exists()


def test_bench_refuses_unknown_names(tmp_path, capsys):
    assert main(["bench", "--datasets", "iris", "--out", str(tmp_path)]) == 2
    assert main(["bench", "--methods", "nope", "--out", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2


def test_bench_columns():
    for name in ("hkes", "hkesa", "hkes_cv", "hkesa_cv"):  # the paper's rule for the existing columns
        assert get_method(name).build().n_iter_no_change is None
    method = get_method("hkes_cv_c")
    assert method.tuning == "cv" and "hkes_cv_c" in EXTENSION_METHODS and LABELS["hkes_cv_c"].endswith("†")
    assert method.build().Cs is not None


class _SlowFirstFit(ClassifierMixin, BaseEstimator):
    """A majority-class classifier whose first fit in a process (per class) takes FIRST_FIT_S more: a compilation."""

    FIRST_FIT_S = 0.5
    n_fits = 0

    def fit(self, X, y):
        type(self).n_fits += 1
        if type(self).n_fits == 1:
            time.sleep(self.FIRST_FIT_S)
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def _slow_first_method():
    """A fresh ``Method`` (its own class, so its first fit is still to come) with a name no other test uses."""
    cls = type("SlowFirstFit", (_SlowFirstFit,), {"n_fits": 0})
    return Method(f"slow-first-{uuid.uuid4().hex[:8]}", lambda **params: cls(), "none"), cls


def test_first_timed_run_of_a_worker_excludes_the_warm_up(tmp_path):
    # The runner's worker function, called as the runner calls it: its first run of a (data set, method) warms up
    # untimed, so the slow first fit lands in warm_up_s and never in time_s; the next run does not warm up again.
    method, cls = _slow_first_method()
    config = {"test": True}
    first = _task("heart", method, 0, "validation", 0, tmp_path / "0.json", config)
    second = _task("heart", method, 1, "validation", 0, tmp_path / "1.json", config)
    assert first["warm_up_s"] >= cls.FIRST_FIT_S and first["time_s"] < cls.FIRST_FIT_S / 2
    assert second["warm_up_s"] == 0.0 and second["time_s"] < cls.FIRST_FIT_S / 2
    assert cls.n_fits == 3  # warm-up, then one timed fit per run
    assert json.loads((tmp_path / "0.json").read_text())["time_s"] == first["time_s"]
    # without the warm-up the same first fit is timed: what the test above would see if the runner forgot it
    method, cls = _slow_first_method()
    cold = run_one("heart", method, 0)
    assert cold["time_s"] >= cls.FIRST_FIT_S and cold["warm_up_s"] == 0.0


def test_timings_exclude_numba_compilation():
    import numba

    @numba.njit
    def row_sums(X):  # defined here: its first call compiles, whatever linsep's own code does
        return X.sum(axis=1)

    class NumbaFit(_SlowFirstFit):
        def fit(self, X, y):
            row_sums(np.ascontiguousarray(X))
            return super().fit(X, y)

    NumbaFit.n_fits = 1  # no sleep: the compilation is the only first-call cost
    method = Method(f"numba-{uuid.uuid4().hex[:8]}", lambda **params: NumbaFit(), "none")
    # the guard: a timed part that entered numba's compiler is timed again, and the clean timing is kept
    cold = run_one("heart", method, 0)
    assert cold["n_retimed"] == 1 and cold["n_compiles"] == 0 and cold["warm_up_s"] == 0.0
    # with the warm-up (what the runner does first in each worker), the first timing is already clean
    record = run_one("titanic", "hk", 0, protocol="test", warm_up=True)
    assert record["n_compiles"] == 0 and record["n_retimed"] == 0


def test_bench_warms_up_each_method_and_data_set_once_per_worker(tmp_path):
    # A fresh process, one worker: the first split of every (data set, method) pair warms up, the others do not,
    # and no kept timing entered numba's compiler.
    subprocess.run([sys.executable, "-m", "linsep", "bench", "--datasets", "heart", "titanic", "--methods", "hk",
                    "mhks", "--splits", "3", "--jobs", "1", "--no-progress", "--out", str(tmp_path)],
                   capture_output=True, text=True, check=True)
    rows = json.loads((tmp_path / "results.json").read_text())
    assert len(rows) == 12
    for row in rows:
        assert (row["warm_up_s"] > 0) == (row["split"] == min(r["split"] for r in rows if r["dataset"] == row["dataset"]
                                                             and r["method"] == row["method"]))
        assert row["n_compiles"] == 0 and row["n_retimed"] == 0


def test_bench_records_its_provenance(tmp_path, capsys):
    import numba
    import scipy
    import sklearn

    argv = ["bench", "--datasets", "thyroid", "--methods", "hk", "hkes", "--splits", "2", "--seed", "7",
            "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    assert "provenance.json" in capsys.readouterr().out
    record = json.loads((tmp_path / "provenance.json").read_text())
    command = "linsep " + " ".join(argv)
    assert record["command"] == command and record["seed"] == 7 and record["protocol"] == "validation"
    assert record["splits"] == {"thyroid": 2} and record["methods"] == ["hk", "hkes"] and record["n_computed"] == 4
    date = datetime.fromisoformat(record["date_utc"])
    assert date.utcoffset() == timedelta(0) and abs(datetime.now(timezone.utc) - date) < timedelta(hours=1)
    env = record["environment"]
    assert env["packages"]["linsep"] == linsep.__version__ == record["linsep"]
    assert (env["packages"]["numpy"], env["packages"]["scipy"]) == (np.__version__, scipy.__version__)
    assert (env["packages"]["scikit-learn"], env["packages"]["numba"]) == (sklearn.__version__, numba.__version__)
    assert env["python"]["version"] == platform.python_version()
    assert env["cpu"]["logical_cpus"] == os.cpu_count() and env["cpu"]["model"]
    assert env["numba"]["num_threads"] >= 1 and env["platform"]["system"] == platform.system()
    assert any(lib.get("user_api") == "blas" and lib.get("num_threads", 0) >= 1 for lib in env["blas"])
    assert record["code"] == json.loads(next((tmp_path / "cache").rglob("*.json")).read_text())["config"]["code"]
    # the code and the data that made it: git commit and dirty flag (None outside a checkout), data SHA-256
    assert record["git"] == linsep._version.git_state()
    assert record["git"] is None or record["linsep"].endswith(record["git"]["short"] + (".dirty" if record["git"]["dirty"] else ""))
    data = Path(linsep.datasets.__file__).parent / "data" / "thyroid.csv.gz"
    assert record["data_sha256"] == {"thyroid": {"file": "thyroid.csv.gz",
                                                 "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}}
    for table in ("table1.md", "table2.md"):
        assert f"`{command}`" in (tmp_path / table).read_text()
    assert "(seed 7)" in (tmp_path / "table1.md").read_text()
    # from Python: the call itself is the command
    report = run_benchmark(datasets=["thyroid"], methods=["hk"], n_splits=1, out=tmp_path / "py", progress=False)
    python = json.loads((report.out / "provenance.json").read_text())
    assert python["command"].startswith("linsep.experiments.run_benchmark(datasets=['thyroid'], methods=['hk']")
    assert python["seed"] == 0 and report.out / "provenance.json" in report.files
