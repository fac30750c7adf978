"""scikit-learn's estimator checks for every registered algorithm.

The checks run with small budgets (:data:`FAST_PARAMS`): their data are
small, often not separable, and the default budgets (``max_iter`` up to
100 000, 5 folds) would only repeat the same iterations; what the checks
test (the estimator API, input handling, pickling, invariances) does not
depend on them.  The defaults themselves are fitted throughout the other
test files.
"""

from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from linsep import available_classifiers, make_classifier

FAST_PARAMS = {"max_iter": 300, "cv": 3}
"""Upper bounds applied to the parameters an estimator has (an estimator's smaller default is kept)."""


SPARSE_FORMAT_CHECKS = {"check_estimator_sparse_array", "check_estimator_sparse_matrix"}
"""Checks that fit the same small problem once per sparse format (about 16 fits): they test that each format is
accepted and gives predictions of the right shape, not the solution, so they run with :data:`SPARSE_FORMAT_PARAMS`
(they took half of this file's time with :data:`FAST_PARAMS`)."""
SPARSE_FORMAT_PARAMS = {"max_iter": 20, "cv": 3, "Cs": 2}


def bounded(estimator, bounds):
    """``estimator`` (a clone) with each parameter of ``bounds`` it has lowered to the bound (smaller values kept)."""
    estimator = clone(estimator)
    params = estimator.get_params()
    return estimator.set_params(**{key: min(params[key], bound) for key, bound in bounds.items()
                                   if key in params and isinstance(params[key], int) and not isinstance(params[key], bool)})


def fast_estimator(name):
    return bounded(make_classifier(name), FAST_PARAMS)


ESTIMATORS = [fast_estimator(name) for name in available_classifiers()]


_SEQUENTIAL = ("sequential updates: a row of weight k is corrected once per visit with step k·η, k repeated "
               "rows are visited k times with the weights changing in between (as for scikit-learn's SGD)")
_SPLIT = ("early stopping holds out a random share of the rows: repeated rows fall into the training and "
          "validation parts differently from one weighted row")
_IRLS_FLOOR = ("IRLS floors |e_i| relative to max s_i|e_i| (the scaled rows' residuals), repeated rows relative "
               "to max|e_i|: where residuals sit at the floor the iterates differ (linsep.designs.weights)")
_GAMMA_SCALE = ("gamma='scale' is 1 / (d Var(X)), and repeated rows change Var(X): another kernel (with a fixed "
                "gamma integer weights equal repeated rows, tests/designs/test_weights.py)")
_KERNEL_MAP = (_GAMMA_SCALE + "; the truncated empirical kernel map (map_tol > 0) also chooses its pivots among "
               "the training rows")
_INVERSE_STEPS = ("class weights 1000 : 0.0001 multiply the condition number of the weighted Y^T S Y by ~1e7; "
                  "the default 1/k step schedule does not reach the weighted solution in the check's 1000 "
                  "steps (schedule='constant' does)")


def expected_failures(estimator):
    """Checks an estimator fails by the nature of its rule, with the reason (scikit-learn's mechanism)."""
    name = type(estimator).__name__
    params = estimator.get_params()
    equivalence = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")
    failures = {}
    if name in ("PerceptronClassifier", "LMSClassifier", "KernelPerceptronClassifier"):
        failures.update(dict.fromkeys(equivalence, _SEQUENTIAL))
    if name == "HoKashyapClassifier" and params["early_stopping"]:
        failures.update(dict.fromkeys(equivalence, _SPLIT))
    elif name == "HoKashyapClassifier" and params["loss"] == "absolute":
        failures.update(dict.fromkeys(equivalence, _IRLS_FLOOR))
    if name == "KernelHoKashyapClassifier":
        failures.update(dict.fromkeys(equivalence, _KERNEL_MAP))
    if name == "KernelLagrangianSVMClassifier":
        failures.update(dict.fromkeys(equivalence, _GAMMA_SCALE))
    if name in ("BatchPerceptronClassifier", "LMSClassifier", "WidrowHoffClassifier"):
        failures["check_class_weight_classifiers"] = _INVERSE_STEPS
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
def test_sklearn_compatible(estimator, check):
    if getattr(check, "func", check).__name__ in SPARSE_FORMAT_CHECKS:
        estimator = bounded(estimator, SPARSE_FORMAT_PARAMS)
    check(estimator)
