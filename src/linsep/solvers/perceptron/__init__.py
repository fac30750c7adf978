"""The perceptrons: single-sample, batch and kernel, and the compiled epochs they share with LMS.

``solver`` (:func:`perceptron`, :func:`batch_perceptron`,
:func:`kernel_perceptron`, the step-size schedules) and ``loops`` (the
compiled single-sample epochs of the perceptron and of LMS, dense and CSR,
and the kernel perceptron's scan).
"""

from linsep.solvers.perceptron.solver import batch_perceptron, kernel_perceptron, perceptron

__all__ = ["batch_perceptron", "kernel_perceptron", "perceptron"]
