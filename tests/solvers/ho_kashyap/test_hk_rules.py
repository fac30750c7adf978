"""The Ho–Kashyap rules written once for every driver (:mod:`linsep.solvers.ho_kashyap.rules`)."""

import numpy as np
import pytest

from linsep._core.certificates import nonseparability_certificate
from linsep.solvers.ho_kashyap.rules import NO_PATIENCE, patience_spent, validation_improved


def test_patience_rule():
    assert not patience_spent(100, 0, NO_PATIENCE)
    assert not patience_spent(9, 0, 10) and patience_spent(10, 0, 10)
    assert validation_improved(0.1, 0.2, 0.0) and not validation_improved(0.2, 0.2, 0.0)
    assert not validation_improved(0.15, 0.2, 0.1)


def test_nonseparability_certificate_is_the_clipped_negative_error_times_the_weights():
    E = np.array([-2.0, 0.0, 1e-3, -0.5])
    D = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(nonseparability_certificate(E), [2.0, 0.0, 0.0, 0.5])
    np.testing.assert_array_equal(nonseparability_certificate(E, D), [2.0, 0.0, 0.0, 2.0])
    xp = pytest.importorskip("array_api_strict")
    u = nonseparability_certificate(xp.asarray(E), xp.asarray(D), xp=xp)  # an array-API design's E
    np.testing.assert_array_equal(np.asarray(u), [2.0, 0.0, 0.0, 2.0])
