"""The numerics under every solver: they know no estimator and no backend.

The result type and its statuses (``result``), the choice of working type
(``plan``), the signed design ``Y = diag(y)[X, 1]`` as a view
(``signed_design``), least squares factored once (``linalg``) and by Krylov
iterations (``krylov``, ``null_space``), threads and row chunks (``threads``),
the independent checks of certificates (``certificates``) and of finite
values (``finite``), iteration traces (``trace``), and numba's compilation at
first use and its disk cache (``compilation``, ``numba_cache``).  Nothing here
imports from another layer of linsep.
"""
