"""Bad or awkward input: a clear error or a correct fit, never a crash deep inside.

Runs over every registered estimator, so algorithms added later inherit it.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.utils.multiclass import check_classification_targets

from linsep import available_classifiers, make_classifier

NAMES = list(available_classifiers())
SKLEARN = tuple(int(part) for part in sklearn.__version__.split(".")[:2])

# Methods whose fit is invariant to a global rescaling of X (least squares with
# a free margin, maximal margin without a penalty).  Penalised methods (C) and
# perceptron / gradient rules, whose step on w scales with x but whose step on the
# bias does not, behave differently at extreme scales by design — as scikit-learn's
# Perceptron does: for them the promise there is a finite, valid fit.
SCALE_INVARIANT = {"hk", "modified_hk", "hkes", "hkesa", "mse", "kozinec", "sk"}


def blobs(n=40, d=3, seed=0, shift=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.repeat([0, 1], n // 2)
    X[y == 1] += shift
    return X, y


def fit_quietly(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "bad, message",
    [
        ("nan", "NaN"),
        ("inf", "infinity"),
        ("empty", "0 sample"),
        ("one_class", "class"),
        ("mismatched", "inconsistent numbers of samples"),
    ],
)
def test_bad_input_gets_a_clear_error(name, bad, message):
    X, y = blobs()
    if bad == "nan":
        X[3, 1] = np.nan
    elif bad == "inf":
        X[3, 1] = np.inf
    elif bad == "empty":
        X, y = X[:0], y[:0]
    elif bad == "one_class":
        y = np.zeros_like(y)
    elif bad == "mismatched":
        y = y[:-1]
    with pytest.raises(ValueError, match=message):
        make_classifier(name).fit(X, y)


@pytest.mark.parametrize("name", NAMES)
def test_awkward_but_valid_input_fits_correctly(name):
    X, y = blobs()
    cases = {
        "string labels": (X, np.where(y == 1, "spam", "ham")),
        "float32": (X.astype(np.float32), y),
        "d > N": (np.hstack([X[10:30], np.random.default_rng(1).normal(size=(20, 60))]), y[10:30]),
        "constant and duplicated columns": (np.hstack([X, np.ones((len(X), 1)), X[:, :1]]), y),
        "huge scale": (X * 1e9, y),
        "tiny scale": (X * 1e-9, y),
    }
    for case, (Xc, yc) in cases.items():
        Xc_before, yc_before = Xc.copy(), yc.copy()
        est = fit_quietly(make_classifier(name, **_seeded(make_classifier(name))), Xc, yc)
        np.testing.assert_array_equal(Xc, Xc_before, err_msg=f"{case}: X was modified")
        np.testing.assert_array_equal(yc, yc_before, err_msg=f"{case}: y was modified")
        assert np.all(np.isfinite(est.decision_function(Xc))), f"{name} on {case}"
        assert set(est.predict(Xc)) <= set(np.unique(yc))
        if "scale" in case and name not in SCALE_INVARIANT:
            continue
        # d > N: 20 samples, of which early-stopping methods hold out a third
        threshold = 0.75 if case == "d > N" else 0.9
        accuracy = est.score(Xc, yc)
        assert accuracy >= threshold, f"{name} on {case}: training accuracy {accuracy}"


@pytest.mark.parametrize("name", NAMES)
def test_three_classes(name):
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [8, 0], [0, 8]])
    X = np.vstack([c + rng.normal(size=(15, 2)) for c in centers])
    y = np.repeat(["a", "b", "c"], 15)
    est = fit_quietly(make_classifier(name, **_seeded(make_classifier(name))), X, y)
    assert list(est.classes_) == ["a", "b", "c"]
    assert np.shape(est.status_) == (3,)
    # A rule that honestly ran out of iterations (status max_iter, warned) may lag.
    threshold = 0.8 if "max_iter" in list(est.status_) else 0.9
    assert est.score(X, y) >= threshold


@pytest.mark.parametrize("name", NAMES)
def test_sparse_input_matches_dense(name):
    X, y = blobs(seed=2)
    est = make_classifier(name)
    assert est.__sklearn_tags__().input_tags.sparse  # every estimator takes CSR/CSC input
    dense = fit_quietly(make_classifier(name, **_seeded(est)), X, y)
    sparse = fit_quietly(make_classifier(name, **_seeded(est)), sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(sp.csr_matrix(X)),
                               rtol=1e-6, atol=1e-8)


def _seeded(est):
    return {"random_state": 0} if "random_state" in est.get_params() else {}


@pytest.mark.parametrize("labels", [
    np.array([b"a", b"b"] * 15),                      # bytes: scikit-learn refuses them
    np.linspace(0.0, 1.0, 30),                        # continuous
    np.array([0.5, 1.5] * 15),                        # fractions
])
def test_non_class_targets_are_refused_like_scikit_learn(labels):
    """linsep's fast label check refuses what check_classification_targets refuses."""
    X = np.random.default_rng(0).normal(size=(labels.size, 2))
    if labels.dtype.kind == "S" and SKLEARN < (1, 7):
        # scikit-learn 1.5 and 1.6 only deprecate bytes labels (a FutureWarning; refused from 1.7 on): so does linsep
        with pytest.warns(FutureWarning, match="bytes"):
            check_classification_targets(labels)
        with pytest.warns(FutureWarning, match="bytes"):
            assert make_classifier("hk").fit(X, labels).classes_.tolist() == [b"a", b"b"]
        return
    with pytest.raises((ValueError, TypeError)) as ours:
        make_classifier("hk").fit(X, labels)
    with pytest.raises(type(ours.value)):
        check_classification_targets(labels)


def _warns_of_many_classes(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return any("unique classes" in str(warning.message) for warning in caught)


def test_many_classes_warn_like_scikit_learn():
    X, y = np.random.default_rng(0).normal(size=(30, 2)), np.arange(30) % 25
    # scikit-learn warns that y may be a regression target from 1.7 on (1.6 does not): linsep does as it does
    assert _warns_of_many_classes(lambda: check_classification_targets(y)) == (SKLEARN >= (1, 7))
    assert _warns_of_many_classes(lambda: make_classifier("mse").fit(X, y)) == (SKLEARN >= (1, 7))


def _plain_cases():
    """(X, y) pairs on both sides of ``is_plain_training_data``."""
    X, y = blobs()
    huge = X.copy()
    huge[:, 0] = 1e308  # finite entries whose sum overflows: the full check must decide
    nan_y = y.astype(float)
    nan_y[0] = np.nan
    return {
        "float64": (X, y),
        "fortran": (np.asfortranarray(X), y),
        "strided": (X[:, ::2], y),
        "float labels": (X, y.astype(float)),
        "string labels": (X, np.where(y == 1, "b", "a")),
        "bool labels": (X, y == 1),
        "float32": (X.astype(np.float32), y),
        "int": (np.arange(X.size).reshape(X.shape), y),
        "list": (X.tolist(), y),
        "list labels": (X, y.tolist()),
        "column labels": (X, y[:, None]),
        "object labels": (X, y.astype(object)),
        "nan": (np.where(X > 2, np.nan, X), y),
        "overflowing sum": (huge, y),
        "nan label": (X, nan_y),
        "one row": (X[:1], y[:1]),
        "no column": (X[:, :0], y),
        "mismatched": (X, y[:-1]),
        "ndarray subclass": (X.view(np.recarray), y),
    }


@pytest.mark.parametrize("case", list(_plain_cases()))
def test_plain_training_data_is_what_validate_data_leaves_unchanged(case):
    # The fast path of BaseSeparator._validate_fit skips validate_data only for data it
    # would accept and return as they are.
    from sklearn.utils.validation import validate_data

    from linsep.estimators.base import is_plain_training_data

    X, y = _plain_cases()[case]
    est = make_classifier("hk")
    if not is_plain_training_data(X, y):
        assert case not in {"float64", "fortran", "strided", "float labels", "string labels", "bool labels"}
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X_checked, y_checked = validate_data(est, X, y, accept_sparse=("csr", "csc"), dtype=np.float64,
                                             ensure_min_samples=2, y_numeric=False)
    assert X_checked is X or np.shares_memory(X_checked, X) and np.array_equal(X_checked, X)
    assert np.array_equal(y_checked, y) and y_checked.dtype == y.dtype


def assert_same_state(fast, full, where):
    """Attribute values of two fitted estimators are equal and of the same types (arrays: dtype and shape too)."""
    assert type(fast) is type(full), where
    if isinstance(full, np.ndarray):
        assert fast.dtype == full.dtype and fast.shape == full.shape, where
        if full.dtype.kind == "O":
            for index, item in enumerate(full.flat):
                assert_same_state(fast.flat[index], item, f"{where}[{index}]")
        else:
            np.testing.assert_array_equal(fast, full, err_msg=where)
    elif isinstance(full, dict):
        assert fast.keys() == full.keys(), where
        for key in full:
            assert_same_state(fast[key], full[key], f"{where}[{key!r}]")
    elif isinstance(full, (list, tuple)):
        assert len(fast) == len(full), where
        for index, (a, b) in enumerate(zip(fast, full)):
            assert_same_state(a, b, f"{where}[{index}]")
    elif isinstance(full, float) and np.isnan(full):
        assert np.isnan(fast), where
    elif isinstance(full, (bool, int, float, str, type(None), np.generic)):
        assert fast == full, where


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", list(_plain_cases()))
def test_fit_is_the_same_with_and_without_the_fast_path(name, case):
    # Every case fits (or fails) exactly as it does through validate_data alone: same
    # attributes (types included, so an ndarray subclass kept as X_fit_ would show), same
    # warnings, same errors.
    X, y = _plain_cases()[case]

    def fit(fast):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = make_classifier(name)
                if not fast:
                    est._validation_plan = {"plain": False}  # plain data through validate_data too
                if "random_state" in est.get_params():
                    est.set_params(random_state=0)
                est.fit(X, y)
            state = {key: value for key, value in vars(est).items() if key != "_validation_plan"}
            return state, sorted((type(w.message).__name__, str(w.message)) for w in caught), None
        except Exception as error:  # noqa: BLE001 - the error itself is compared
            return None, None, (type(error), str(error))

    (fast, fast_warnings, fast_error), (full, full_warnings, full_error) = fit(True), fit(False)
    assert fast_error == full_error
    if full is not None:
        assert fast_warnings == full_warnings
        assert_same_state(fast, full, name)


def test_fast_path_skips_validate_data_and_drops_stale_feature_names():
    X, y = blobs()
    est = make_classifier("hk").fit(X, y)
    est.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)  # as left by a fit on a dataframe

    def refuse(*args, **kwargs):
        raise AssertionError("validate_data called for plain float64 data")

    est._validation_plan = {"validate_data": refuse}
    est.fit(X[:, :2], y)
    assert est.n_features_in_ == 2 and not hasattr(est, "feature_names_in_")


def test_parameter_names_are_those_of_init():
    # BaseSeparator caches the names per class; they must stay those of each class's own __init__.
    import inspect

    for name in NAMES:
        est = make_classifier(name)
        expected = sorted(p for p in inspect.signature(type(est).__init__).parameters if p != "self")
        assert type(est)._get_param_names() == expected
        assert sorted(est.get_params(deep=False)) == expected


def test_parameter_names_follow_a_replaced_init_and_let_classes_go():
    import gc
    import weakref

    from sklearn.base import clone

    from linsep import HoKashyapClassifier

    class Sub(HoKashyapClassifier):
        def __init__(self, *, a=1):
            self.a = a

    assert Sub._get_param_names() == ["a"]

    def wider_init(self, *, a=1, b=2):
        self.a, self.b = a, b

    Sub.__init__ = wider_init
    assert Sub._get_param_names() == ["a", "b"]
    assert clone(Sub(a=1, b=5)).get_params() == {"a": 1, "b": 5}
    alive = weakref.ref(Sub)
    del Sub
    gc.collect()
    assert alive() is None
