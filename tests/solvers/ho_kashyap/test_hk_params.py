"""The parameter tables and parameter objects of the Ho–Kashyap family (:mod:`linsep.solvers.ho_kashyap.params`)."""

import pytest

from linsep import make_classifier
from linsep.estimators.base import refuse_unsupported
from linsep.solvers.ho_kashyap.params import HK_CONSTRAINTS, HK_PARAMETERS, HKParams
from linsep.solvers.ho_kashyap.solver import ho_kashyap

da = pytest.importorskip("dask.array")  # the backend refusal below fits dask arrays

from dask_problems import design_problem  # noqa: E402


def test_one_constraint_table_for_every_hk_estimator():
    from linsep import HoKashyapClassifier, HoKashyapClassifierCV

    for cls in (HoKashyapClassifier, HoKashyapClassifierCV):
        for name in set(HK_CONSTRAINTS) & set(cls._parameter_constraints):
            assert cls._parameter_constraints[name] == HK_CONSTRAINTS[name], (cls.__name__, name)
    params = HKParams.from_estimator(HoKashyapClassifier(C=0.5, early_stopping=True))
    assert params.C == 0.5 and params.stop_at_separation is False
    assert set(params.solver_kwargs()) <= set(ho_kashyap.__code__.co_varnames)


def test_a_parameter_a_backend_cannot_honour_is_refused_generically():
    from dataclasses import dataclass

    from linsep.estimators.ho_kashyap import HK_SUPPORTED

    @dataclass(frozen=True)
    class WithMomentum(HKParams):  # a parameter added to the solver, not declared by the dask backend
        momentum: float = 0.0

    refuse_unsupported(WithMomentum(), WithMomentum.neutral(), "dask input", HK_SUPPORTED)
    with pytest.raises(ValueError, match="momentum=0.3 is not available for dask input"):
        refuse_unsupported(WithMomentum(momentum=0.3), WithMomentum.neutral(), "dask input", HK_SUPPORTED)
    with pytest.raises(ValueError, match="record_history=True is not available"):
        make_classifier("hk", record_history=True).fit(*[da.from_array(a, chunks=50) for a in design_problem()])


def test_the_kernel_and_cross_validated_estimators_take_every_parameter_of_the_table():
    # Their HK parameter lists are derived from HK_PARAMETERS: a parameter added to the table reaches them (the
    # cross-validated ones leave out, by name and with a reason, what their early-stopped runs cannot take).
    from linsep import HoKashyapClassifierCV, KernelHoKashyapClassifier, KernelHoKashyapClassifierCV
    from linsep.estimators.ho_kashyap_cv import _CV_NOT_OFFERED
    from linsep.solvers.ho_kashyap.kernel import kernel_ho_kashyap

    kernel = KernelHoKashyapClassifier().get_params()
    assert set(HK_PARAMETERS) <= set(kernel)
    assert {name: kernel[name] for name in HK_PARAMETERS if name not in ("C", "tol")} == {
        name: p.default for name, p in HK_PARAMETERS.items() if name not in ("C", "tol")}
    # what the kernel estimator forwards, the kernel solver passes on to the HK iteration (its **hk_params)
    assert kernel_ho_kashyap.__code__.co_flags & 0x08  # CO_VARKEYWORDS
    assert set(HKParams.from_estimator(KernelHoKashyapClassifier()).solver_kwargs()) <= set(
        ho_kashyap.__code__.co_varnames)
    for cls in (HoKashyapClassifierCV, KernelHoKashyapClassifierCV):
        offered = set(cls().get_params())
        assert set(HK_PARAMETERS) - offered == set(_CV_NOT_OFFERED), cls.__name__
        assert all(cls._parameter_constraints[name] == HK_CONSTRAINTS[name]
                   for name in HK_PARAMETERS if name in offered), cls.__name__
