"""
Ho–Kashyap on the lecture's example, from a = [1, 1, 1]
=======================================================

The lecture runs the Ho–Kashyap procedure by hand on four points, class 1
``(6, 9), (5, 7)`` and class 2 ``(5, 9), (0, 10)``, from ``a(1) = [1, 1, 1]``
and ``b(1) = [1, 1, 1, 1]`` with ``η = 0.9``:

.. math::

    e(k) = Y a(k) - b(k), \\qquad b(k+1) = b(k) + \\eta\\,(e(k) + |e(k)|), \\qquad
    a(k+1) = Y^{+} b(k+1).

After one step ``b(2) = [28, 22.6, 1, 1]`` and ``a(2) = [34.6, 2.7, −3.8]``
(the lecture writes the bias first, as :func:`~linsep.inspection.trace_table`
does); the four points are separated at ``k = 104`` by
``a ≈ [−34.9, 27.3, −11.3]``.  ``record_history=True`` keeps the whole
course, the table prints it as the lecture does, and
:func:`~linsep.inspection.plot_trace` draws the hyperplane at a few
iterations beside the criterion ``J = ‖Y a − b‖²`` and the number of points on
the wrong side.
"""

import matplotlib.pyplot as plt
import numpy as np

from linsep import HoKashyapClassifier
from linsep.inspection import plot_trace, trace_table

X = np.array([[6.0, 9.0], [5.0, 7.0], [5.0, 9.0], [0.0, 10.0]])
y = np.array([1, 1, -1, -1])   # the lecture's class 1 is the positive class, +1

clf = HoKashyapClassifier(learning_rate=0.9, b0=1.0, record_history=True)
clf.fit(X, y, coef_init=[1.0, 1.0], intercept_init=1.0)
print(f"{clf.status_} at k = {clf.n_iter_}: a = {np.round(np.r_[clf.intercept_, clf.coef_[0]], 1)}")

table = trace_table(clf, precision=3)
print(table.head(3))
print("...")
last = table.to_records()[-1]
print(f"k = {last['k']}: b = {np.round(last['b'], 1)}")

# %%
# The hyperplane ``a(k)ᵗ(x, 1) = 0`` at a few iterations (``k = 1`` is the
# starting point), the criterion and the training errors along the way.
display = plot_trace(clf, X, y, iterations=[1, 2, 5, 20, 60, clf.n_iter_])
display.ax_[0].set_title("HK on the lecture's four points, η = 0.9", fontsize=10)

plt.show()
