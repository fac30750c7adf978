"""
Separability certificates, both ways
====================================

:func:`linsep.check_separability` returns a verdict with a certificate it
has checked:

* **separable**: a hyperplane with every point strictly on its side, and its
  geometric margin;
* **not separable**: a vector ``u ≥ 0, u ≠ 0`` with
  ``Σ_i u_i y_i (x_i, 1) = 0`` (Gordan's alternative).  Split by class, it says
  that a convex combination of the positive points equals one of the negative
  points: the two convex hulls meet, so no line can separate them.

:func:`linsep.inspection.plot_separability` draws the hyperplane and its
margin, or the points that carry the proof (``u_i > 0``, circled in
proportion to ``u_i``), their hulls and the common point.
"""

import matplotlib.pyplot as plt
import numpy as np

from linsep import check_separability
from linsep.inspection import plot_separability

rng = np.random.default_rng(0)
n = 40
X_sep = np.r_[rng.normal([-2.0, 0.0], 0.8, size=(n, 2)), rng.normal([2.0, 0.5], 0.8, size=(n, 2))]
y_sep = np.repeat([0, 1], n)
X_over = np.r_[rng.normal([-0.7, 0.0], 0.9, size=(n, 2)), rng.normal([0.7, 0.3], 0.9, size=(n, 2))]
y_over = y_sep

fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
for ax, (X, y) in zip(axes, ((X_sep, y_sep), (X_over, y_over))):
    verdict = check_separability(X, y)
    print(verdict.summary())
    display = plot_separability(verdict, X, y, ax=ax)
    if not verdict.separable:
        u = verdict.certificate.u
        print("carriers:", np.flatnonzero(u > 0), "u =", np.round(u[u > 0] / u.sum(), 3),
              "common point:", np.round(display.common_point_, 3))
fig.tight_layout()

plt.show()
