"""The independent checks of separability certificates (:mod:`linsep._core.certificates`)."""

import numpy as np
from problems import duplicated_csr, exact_proof_residual, wide_margin_data

from linsep._core.certificates import CERTIFICATE_RTOL, is_proof


def test_duplicate_entries_make_no_false_proof():
    from linsep._core.certificates import is_proof, proof_residuals

    X, dense = duplicated_csr()
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    y = np.array([1.0, -1.0])
    u = np.array([1.0, 1.0])  # Yᵀu = (3, 0, 0): not a proof (x_0 = 3 > 0 = x_1 separates)
    assert not is_proof(dense, y, u)
    assert not is_proof(X, y, u)
    np.testing.assert_allclose(proof_residuals(X, y, u), proof_residuals(dense, y, u))
    for got, want in zip((X.data, X.indices, X.indptr), before):  # the caller's matrix is untouched
        np.testing.assert_array_equal(got, want)


def test_the_old_false_proof_is_not_a_proof():
    # What Ho–Kashyap returned for X·1e-200 before the rescaling: u = -E on every point, which
    # the old residual (against the largest column, the bias) accepted.
    X, y = wide_margin_data()
    signs = np.where(y == 1, 1.0, -1.0)
    u = np.ones(len(y))
    assert not is_proof(X * 1e-200, signs, u)
    assert exact_proof_residual(X * 1e-200, signs.astype(int), u) > CERTIFICATE_RTOL
