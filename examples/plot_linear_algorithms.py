"""
One data set, every linear learner
==================================

The linear estimators of linsep on the same two overlapping classes, with the
verdict each one gives (``status_``) and its training error.  The rules that
look for *a* separating hyperplane find none here: the perceptrons end at
``max_iter`` (with a ConvergenceWarning, silenced below) and hard-margin
Kozinec finds the two class hulls touching (``not_separable``, keeping the
iterate with the fewest training errors it met).  Plain HK stops when its
criterion no longer decreases (``converged``), at a least-squares-like line.
The least-squares rules (MSE, Widrow–Hoff, LMS), the regularised and
early-stopping Ho–Kashyap variants, soft-margin SK (``C = 1``) and the
Lagrangian SVM all give similar lines.  See :doc:`/user_guide/choosing`.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from linsep import make_classifier

X, y = make_blobs(n_samples=120, centers=[[0.0, 0.0], [2.5, 1.5]], cluster_std=1.0, random_state=0)
names = ["hk", "mhks", "mhka", "hkes", "mse", "widrow_hoff", "lms", "perceptron", "batch_perceptron",
         "kozinec", "sk", "lsvm"]
params = {"hkes": {"random_state": 0}, "perceptron": {"max_iter": 50}, "batch_perceptron": {"max_iter": 200},
          "kozinec": {"max_iter": 500}, "sk": {"C": 1.0}, "widrow_hoff": {"schedule": "constant"}}

fig, axes = plt.subplots(3, 4, figsize=(13, 9.5), sharex=True, sharey=True)
lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
xs = np.array([lo[0], hi[0]])
for ax, name in zip(axes.ravel(), names):
    with warnings.catch_warnings():
        # Non-convergence is part of the picture here: status_ says it in each title.
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = make_classifier(name, **params.get(name, {})).fit(X, y)
    error = 100 * np.mean(clf.predict(X) != y)
    print(f"{name:18s} status {clf.status_:14s} n_iter {clf.n_iter_:6d}  training error {error:5.1f} %")
    ax.scatter(*X[y == 0].T, s=14, marker="o", color="C0", edgecolor="k", lw=0.4)
    ax.scatter(*X[y == 1].T, s=14, marker="s", color="C1", edgecolor="k", lw=0.4)
    w, b = clf.coef_[0], clf.intercept_[0]
    if abs(w[1]) > 1e-12:
        ax.plot(xs, -(b + w[0] * xs) / w[1], "k-", lw=1.5)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_title(f"{name}: {clf.status_}, {error:.1f} % errors", fontsize=9)
fig.tight_layout()

plt.show()
