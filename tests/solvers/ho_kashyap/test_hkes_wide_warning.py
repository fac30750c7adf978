"""HKES without C warns at fit where early stopping did not regularise (issue 32); the model is unchanged."""

import sys
import warnings

import numpy as np
import pytest

from linsep import HoKashyapClassifier, HoKashyapClassifierCV, make_classifier


def _wide(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 200))  # 80 fitted rows, d + 1 = 201 weights
    y = (X[:, 0] + rng.standard_normal(120) > 0).astype(int)  # noisy labels
    return X, y


def _tall(seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 3))
    return X, (X[:, 0] + noise * rng.standard_normal(300) > 0).astype(int)


@pytest.mark.parametrize("name", ["hkes", "hkesa"])
def test_wide_noisy_problem_warns_naming_the_sizes_and_the_remedy(name):
    X, y = _wide()
    with pytest.warns(UserWarning, match=r"80 fitted rows for d \+ 1 = 201 weights.*Cs=") as caught:
        model = make_classifier(name, random_state=0).fit(X, y)
    assert "validation error" in str(caught[0].message)
    with warnings.catch_warnings():  # the fitted model is the same with the warning silenced
        warnings.simplefilter("ignore")
        quiet = make_classifier(name, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.coef_, quiet.coef_)
    np.testing.assert_array_equal(model.intercept_, quiet.intercept_)


@pytest.mark.parametrize("noise", [0.0, 0.5])
@pytest.mark.parametrize("name", ["hkes", "hkesa"])
def test_tall_problem_is_silent(name, noise):
    X, y = _tall(noise=noise)
    y3 = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7])  # three classes, each learnt by one-vs-rest at least in part
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_classifier(name, random_state=0).fit(X, y)
        make_classifier(name, random_state=0).fit(X, y3)


def test_overfitting_below_the_width_limit_warns():
    # d + 1 = 251 for 800 fitted rows: not "wide", yet least squares fits the fitted rows far better (about
    # 4 % wrong) than it predicts its validation rows (about 21 %), as TF-IDF text at 45 000 documents does
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1200, 250))
    w = rng.standard_normal(250)
    y = (X @ w + 0.5 * np.linalg.norm(w) * rng.standard_normal(1200) > 0).astype(int)
    with pytest.warns(UserWarning, match=r"of its 800 fitted rows but on .* of its 400 validation rows .*"
                                         r"far better than it predicts.*Cs="):
        HoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)


def test_the_papers_data_sets_are_silent():
    # the nine IDA sets with the paper's protocol (the tuning part as validation rows): HKES is the method there
    from linsep.datasets import BENCHMARKS
    from linsep.experiments.protocol import load_split

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in BENCHMARKS:
            X_fit, y_fit, X_tune, y_tune, _, _ = load_split(name, 0)
            HoKashyapClassifier(early_stopping=True, n_iter_no_change=None, random_state=0).fit(
                X_fit, y_fit, X_val=X_tune, y_val=y_tune)


def test_nothing_learnt_on_tall_data_warns():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 3))
    y = (rng.random(400) < 0.3).astype(int)  # labels independent of X: the larger class is the best one can do
    with pytest.warns(UserWarning, match="no better on its validation rows than always predicting the larger"):
        HoKashyapClassifier(early_stopping=True, random_state=0).fit(X, y)


def test_silent_with_C_or_without_early_stopping():
    X, y = _wide()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HoKashyapClassifier(early_stopping=True, C=1.0, random_state=0).fit(X, y)
        HoKashyapClassifier(max_iter=50).fit(X, y)


def test_cv_verbose_0_prints_nothing(capsys):
    X, y = _tall()
    HoKashyapClassifierCV(cv=3, Cs=[None, 1.0], random_state=0).fit(X, y)
    assert capsys.readouterr() == ("", "")


def test_cv_verbose_prints_one_line_per_C_and_fold(capsys, monkeypatch):
    X, y = _tall()
    monkeypatch.setitem(sys.modules, "tqdm", None)  # no tqdm: verbose=1 prints lines too
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    for verbose in (1, 2):
        HoKashyapClassifierCV(cv=3, Cs=[None, 1.0], random_state=0, verbose=verbose).fit(X, y)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 7
        # after the runs, one line on the grid: whether its values of C reached the same error within one
        # standard error (flat_grid)
        assert lines.pop().startswith("[HoKashyapClassifierCV] the best validation errors ")
        assert all(line.startswith("[HoKashyapClassifierCV] problem 1 C=") for line in lines)
        assert {line.split(":")[0].split(" C=")[1] for line in lines} == {"None fold 1/3", "None fold 2/3",
                                                                         "None fold 3/3", "1.0 fold 1/3",
                                                                         "1.0 fold 2/3", "1.0 fold 3/3"}
        assert all("validation error" in line and "iterations" in line for line in lines)


def test_cv_verbose_1_progress_bar_with_tqdm(capsys):
    pytest.importorskip("tqdm")
    X, y = _tall()
    HoKashyapClassifierCV(cv=3, Cs=[None, 1.0], random_state=0, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert "problem 1" in captured.err  # the bar, on stderr
    assert captured.out.startswith("[HoKashyapClassifierCV] the best validation errors ")  # the grid's line
    assert len(captured.out.splitlines()) == 1
