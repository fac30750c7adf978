"""The solvers: one folder per family, its compiled loops and its rules beside its driver.

Each solver is a function over arrays (or a :mod:`linsep.designs` design)
that reads like its paper's equations and returns one
:class:`~linsep.SolveResult`.  ``ho_kashyap/`` (HK, modified HK, MHKS, MHKA,
HKES, HKESA, kernel HK and the weighted runs), ``lsvm/`` (the Lagrangian SVM,
linear and kernel, and its active-set fixed point), ``kozinec/`` (Kozinec and
Schlesinger–Kozinec, linear and kernel), ``perceptron/`` (the single-sample,
batch and kernel perceptrons and their compiled epochs), ``lms`` (the compiled LMS epochs) and
``mse`` (the pseudo-inverse, the linear machine, Widrow–Hoff and LMS).
Solvers import the numerics (:mod:`linsep._core`) and the designs, never an
estimator.
"""
