"""
How the hyperplane moves: perceptron and Ho–Kashyap
===================================================

With ``record_history=True`` every iterative estimator keeps its iterates
``a(k) = (w, w_0)`` in ``history_["weights"]``;
:func:`~linsep.inspection.plot_trace` draws the line ``w·x + w_0 = 0`` at a
few of them (lighter for earlier ones) over the data, with the recorded curves
beside it.

Two far points of the orange class pull the least-squares line, so Ho–Kashyap's
first iterate ``a(1) = Y⁺b(1)`` leaves points on the wrong side.  HK then
raises the margins ``b`` of the points that are right, which stops them from
pulling, and re-solves: the line turns until it separates the classes and the
criterion ``J = ‖Y a − b‖²`` falls.  The single-sample perceptron corrects
the weights on every mistake and stops after the first pass without one: its
line jumps from one sample's correction to the next and stops as soon as the
classes are separated, often close to one of them.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from linsep import HoKashyapClassifier, PerceptronClassifier
from linsep.inspection import plot_trace

X, y = make_blobs(n_samples=30, centers=[[0.0, 0.0], [3.0, 2.0]], cluster_std=0.8, random_state=3)
X, y = np.r_[X, [[9.0, -1.0], [10.0, 0.0]]], np.r_[y, 1, 1]   # two far points of class 1

hk = HoKashyapClassifier(b0=1.0, record_history=True).fit(X, y)
print(f"Ho–Kashyap: {hk.status_} after {hk.n_iter_} iterations, "
      f"training errors {hk.history_['training_errors'].tolist()}")
display = plot_trace(hk, X, y, n_lines=6)
display.ax_[0].set_title("Ho–Kashyap, b(1) = 1", fontsize=10)

# %%

perceptron = PerceptronClassifier(record_history=True, shuffle=True, random_state=0).fit(X, y)
print(f"perceptron: {perceptron.status_} after {perceptron.n_iter_} passes, "
      f"mistakes per pass {perceptron.history_['mistakes'].tolist()}")
display = plot_trace(perceptron, X, y)
display.ax_[0].set_title("single-sample perceptron (weights after each pass)", fontsize=10)

plt.show()
