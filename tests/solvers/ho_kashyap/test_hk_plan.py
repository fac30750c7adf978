"""The one private plan of a Ho–Kashyap solve (:mod:`linsep.solvers.ho_kashyap.plan`) and the segment's records."""

import inspect

import numpy as np
import pytest

from linsep._core.signed_design import sign_normalized
from linsep.solvers.ho_kashyap import ho_kashyap
from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment, lockstep_pass
from linsep.solvers.ho_kashyap.plan import DRIVERS, HKPlan
from linsep.solvers.ho_kashyap.rows import lockstep_pass_narrow


def test_the_public_solver_takes_its_plan_as_a_documented_keyword():
    parameters = inspect.signature(ho_kashyap).parameters
    assert not [name for name in parameters if name.startswith("_")]
    assert parameters["plan"].default is None and parameters["plan"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "plan : HKPlan, dict or None" in ho_kashyap.__doc__


def test_a_plan_from_a_mapping_and_its_refusals():
    assert HKPlan.of(None) == HKPlan()
    plan = HKPlan.of({"driver": "python", "threads": 2}, validation_reference=0.25)
    assert (plan.driver, plan.threads, plan.validation_reference) == ("python", 2, 0.25)
    assert HKPlan.of(plan) is plan
    with pytest.raises(ValueError, match="unknown HKPlan fields"):
        HKPlan.of({"drivr": "python"})
    with pytest.raises(ValueError, match="driver must be one of"):
        HKPlan(driver="fast")
    assert set(DRIVERS) == {"auto", "compiled", "python"}


@pytest.mark.parametrize("plan", [{"driver": "python"}, HKPlan(driver="python")])
def test_the_solver_follows_a_plan_given_either_way(plan):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    Y = sign_normalized(X, np.where(X[:, 0] > 0, 1.0, -1.0))
    assert ho_kashyap(Y, max_iter=5, plan=plan).extra["plan"]["driver"] == "python"


def test_compiled_entries_take_records_not_long_positional_lists():
    for entry in (ho_kashyap_segment.py_func, lockstep_pass_narrow.py_func, lockstep_pass):
        assert len(inspect.signature(entry).parameters) <= 12, entry.__name__
