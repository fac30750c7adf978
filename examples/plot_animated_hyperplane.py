"""
Animated: the hyperplane of Ho–Kashyap and of the perceptron, iteration by iteration
====================================================================================

The same data as :ref:`sphx_glr_auto_examples_plot_hyperplane_evolution.py`,
as a film: :func:`linsep.inspection.animate_trace` reads the trace of a fit
with ``record_history=True`` and draws, frame by frame, the line
``w·x + w_0 = 0`` of the iterate ``a(k) = (w, w_0)``, the two sides it makes
and the points still on the wrong side (ringed).

*First*, Ho–Kashyap: ``a(k) = Y⁺b(k)`` is the least-squares line for the
current margins; the two far points pull it at first, then HK raises the
margins of the points already on their side and the line turns steadily
until it separates the classes.  *Second*, the single-sample perceptron, one
row per correction (``record_history="updates"``): every mistake adds the
sample to the weights, so the line jumps.

In a notebook the animation shows itself as a player; elsewhere
``IPython.display.HTML(anim.to_jshtml())`` does, and ``anim.write("hk.gif")``
saves it (``linsep trace hk data.csv --animate hk.gif`` from a shell).
"""

import numpy as np
from sklearn.datasets import make_blobs

from linsep import HoKashyapClassifier, PerceptronClassifier
from linsep.inspection import animate_trace

X, y = make_blobs(n_samples=30, centers=[[0.0, 0.0], [3.0, 2.0]], cluster_std=0.8, random_state=3)
X, y = np.r_[X, [[9.0, -1.0], [10.0, 0.0]]], np.r_[y, 1, 1]   # two far points of class 1

hk = HoKashyapClassifier(b0=1.0, record_history=True).fit(X, y)
print(f"Ho–Kashyap: {hk.status_} after {hk.n_iter_} iterations")
hk_animation = animate_trace(hk, X, y, max_frames=25, interval=300)

# %%
# The perceptron, from given starting weights ``a(1) = [w_0, w] = [1, 1, 1]``
# (``coef_init``, ``intercept_init``), one row per correction.

perceptron = PerceptronClassifier(record_history="updates", shuffle=True, random_state=0)
perceptron.fit(X, y, coef_init=[1.0, 1.0], intercept_init=1.0)
print(f"perceptron: {perceptron.status_} after {perceptron.n_iter_} passes")
perceptron_animation = animate_trace(perceptron, X, y, max_frames=25, interval=300)
