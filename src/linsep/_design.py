"""The augmented, sign-normalised design matrix shared by all primal solvers.

Every linear learner in linsep works on the matrix of the Ho–Kashyap papers
(Lauer & Bloch 2006, eq. 3):

.. math::

    Y = \\operatorname{diag}(y)\\,[X,\\ 1_{N}],
    \\qquad Y_i = \\begin{cases} (x_i^t, +1) & y_i = +1 \\\\
                                 (-x_i^t, -1) & y_i = -1 \\end{cases}

so that a weight vector ``W = (w, w_0)`` (bias **last**) separates the data
exactly when ``Y W > 0``.  Solvers touch the data only through ``Y @ v``,
``Y.T @ u`` and the least-squares factorisation of :mod:`linsep._linalg`, so
dense and scipy.sparse inputs share the same solver code.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def augment(X):
    """Return ``[X, 1]``: the samples with a constant last column for the bias."""
    if sp.issparse(X):
        ones = sp.csr_matrix(np.ones((X.shape[0], 1), dtype=X.dtype))
        return sp.hstack([X, ones], format="csr")
    X = np.asarray(X)
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


def sign_normalized(X, y):
    """Return ``Y = diag(y) [X, 1]`` for labels ``y`` in {-1, +1}.

    A new array is always returned; ``X`` is never modified.
    """
    y = np.asarray(y, dtype=float)
    if sp.issparse(X):
        return sp.diags(y) @ augment(X)
    X = np.asarray(X)
    # One allocation, filled in place (augment-then-scale would copy the data twice).
    Y = np.empty((X.shape[0], X.shape[1] + 1), dtype=np.result_type(X.dtype, y.dtype))
    np.multiply(X, y[:, None], out=Y[:, :-1])
    Y[:, -1] = y
    return Y


def augmented_weights(coef, intercept):
    """Stack ``coef`` (d,) and ``intercept`` into the augmented ``W`` (d+1,)."""
    return np.concatenate([np.ravel(coef), [float(intercept)]])
