"""A stand-in for PyTorch and CuPy arrays on a GPU, for tests on machines without one.

Why a stand-in.  A CUDA tensor or a CuPy array differs from an array-api-strict
array in the two ways that broke every array-API fit on a GPU (issue 41):

* it carries no ``__array_namespace__``: array-api-compat (and so
  scikit-learn's ``get_namespace``) recognises it by its class, looked up in
  ``sys.modules`` (``torch.Tensor``, ``cupy.ndarray``), and reaches its
  namespace through a wrapper;
* it refuses implicit conversion to NumPy (``np.asarray``, ``__array__``,
  ``.numpy()``), and its namespace refuses NumPy dtypes.

PyTorch's wheel on PyPI brings gigabytes of CUDA libraries and CuPy needs a
GPU, so CI cannot use either.  :class:`DeviceArray` wraps an
array-api-strict array on its non-CPU ``device1`` and has both properties.
array-api-compat has no registry for new libraries: it knows a class only by
``sys.modules[<library>].<class>``.  The one entry whose namespace it takes
from the library itself rather than from a compat wrapper is JAX's
(``jax.Array``; the namespace is ``jax.numpy.empty(0).__array_namespace__()``),
so :func:`register` puts a small module ``jax`` in ``sys.modules`` whose
``Array`` is :class:`DeviceArray` and whose ``numpy.empty`` hands out
:data:`xp`.  Use it only in a fresh interpreter (the tests run the array-API
checks in a subprocess) and never where JAX itself is installed and imported.

Like a GPU array, a :class:`DeviceArray` gives its scalars (``float(a)``,
``bool(a)``: a device synchronisation) and copies itself to the host only
through DLPack (``np.from_dlpack(a, device="cpu")``, which scikit-learn's
``move_to`` uses).  Both are counted (:data:`COUNTS`) so that tests can see
per-iteration round trips.  Arithmetic with an array of another device raises
(as CUDA and CPU tensors do), and creation functions put arrays on the CPU
unless given ``device=`` (as PyTorch does).
"""

from __future__ import annotations

import importlib.util
import sys
import types

import array_api_strict as _strict
import numpy as np

__all__ = ["COUNTS", "DEVICE", "DeviceArray", "NAMESPACE_OF", "TORCH", "asarray", "extra_memory", "one_line", "register",
           "run_checks", "to_numpy", "trace_difference", "xp"]

TORCH = ("torch",) if importlib.util.find_spec("torch") is not None else ()
"""``("torch",)`` where PyTorch is importable, else ``()``: the array kinds of the array-API tests end with it, so
that a machine with PyTorch (a CPU build runs here; CI has none: its wheel brings gigabytes of CUDA libraries)
also fits real ``torch.Tensor`` s, which array-api-compat wraps as it wraps a CUDA tensor."""

DEVICE = _strict.Device("device1")
"""The device the stand-in's data live on (array-api-strict's non-CPU device)."""

COUNTS = {"scalars": 0, "host_copies": 0, "host_bytes": 0, "largest_copy": 0}
"""Device-to-host traffic since the last :func:`reset_counts`: Python scalars read, DLPack copies made (their
bytes in all, and the largest one)."""

_REFUSAL = ("Implicit conversion to a NumPy array is not allowed (tests/device_arrays.py stands in for a GPU array); "
            "copy it explicitly with np.from_dlpack(a, device='cpu')")


def reset_counts():
    for key in COUNTS:
        COUNTS[key] = 0


def _unwrap(value):
    if isinstance(value, DeviceArray):
        return value._a
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


def _wrap(value):
    if isinstance(value, _strict._array_object.Array):
        return DeviceArray(value)
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class DeviceArray:
    """An array on a device that cannot be read as NumPy (no ``__array_namespace__``, no ``__array__``)."""

    __slots__ = ("_a",)

    def __init__(self, array):
        self._a = array

    # --- what a GPU array refuses -------------------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError(_REFUSAL)

    def numpy(self):
        raise TypeError(_REFUSAL)

    def __iter__(self):  # a Python loop over device data would read one scalar per element
        raise TypeError("iterating over a device array reads it element by element; use the namespace's functions")

    # --- explicit host copies and scalars (counted) ------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and dl_device[0] == 1 and self._a.device != _strict.Device("CPU_DEVICE"):
            COUNTS["host_copies"] += 1
            size = self._a.size * self._a.dtype._np_dtype.itemsize
            COUNTS["host_bytes"] += size
            COUNTS["largest_copy"] = max(COUNTS["largest_copy"], size)
            host = np.array(self._a._array, copy=True)  # what cudaMemcpy does
            return host.__dlpack__(stream=stream, max_version=max_version)
        return self._a.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (2, 0) if self._a.device != _strict.Device("CPU_DEVICE") else (1, 0)  # kDLCUDA, as a GPU says

    def _scalar(self, kind):
        COUNTS["scalars"] += 1
        return kind(self._a)

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __index__(self):
        return self._scalar(int)

    def __bool__(self):
        return self._scalar(bool)

    # --- the array object --------------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    dtype = property(lambda self: self._a.dtype)
    device = property(lambda self: self._a.device)
    T = property(lambda self: DeviceArray(self._a.T))
    mT = property(lambda self: DeviceArray(self._a.mT))

    def to_device(self, device, /, *, stream=None):
        return DeviceArray(self._a.to_device(device))

    def __getitem__(self, key):
        return DeviceArray(self._a[_unwrap(key)])

    def __setitem__(self, key, value):
        self._a[_unwrap(key)] = _unwrap(value)

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    def __hash__(self):
        return id(self)


def _binary(name):
    def method(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)))

    method.__name__ = name
    return method


def _unary(name):
    def method(self):
        return _wrap(getattr(self._a, name)())

    method.__name__ = name
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        setattr(DeviceArray, _form.format(_name), _binary(_form.format(_name)))
for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(DeviceArray, _name, _binary(_name))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(DeviceArray, _name, _unary(_name))


def _function(f):
    def wrapped(*args, **kwargs):
        return _wrap(f(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

    wrapped.__name__ = getattr(f, "__name__", "function")
    return wrapped


def _namespace(name, source):
    module = types.ModuleType(name)
    for attr in getattr(source, "__all__", dir(source)):
        value = getattr(source, attr)
        if isinstance(value, types.ModuleType):
            continue
        module.__dict__[attr] = _function(value) if callable(value) and not isinstance(value, type) else value
    return module


xp = _namespace("device_arrays", _strict)
"""The stand-in's namespace: array-api-strict's functions on :class:`DeviceArray`."""
xp.linalg = _namespace("device_arrays.linalg", _strict.linalg)
xp.__array_namespace_info__ = _strict.__array_namespace_info__
xp.__array_api_version__ = _strict.__array_api_version__
_strict_asarray = xp.asarray


def _asarray(obj, /, *, dtype=None, device=None, copy=None):
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):  # an upload: explicit, as torch.asarray(ndarray)
        obj = _strict.asarray(np.asarray(obj), copy=copy)
        return DeviceArray(_strict.asarray(obj, dtype=dtype, device=device, copy=copy))
    return _strict_asarray(obj, dtype=dtype, device=device, copy=copy)


xp.asarray = _asarray


def asarray(values, dtype=None):
    """A NumPy array (or anything ``np.asarray`` takes) copied onto the stand-in's device."""
    values = np.asarray(values)
    if dtype is None and values.dtype.kind == "f":
        dtype = getattr(xp, str(values.dtype))
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def to_numpy(array):
    """``array`` on the host (an explicit copy, counted like any other)."""
    return np.from_dlpack(array, device="cpu")


class _Handle:
    """What ``jax.numpy.empty`` returns here: an object whose namespace is :data:`xp`."""

    def __array_namespace__(self, api_version=None):
        return xp


def register():
    """Make array-api-compat (and so scikit-learn) recognise :class:`DeviceArray` (see the module)."""
    existing = sys.modules.get("jax")
    if existing is not None and getattr(existing, "Array", None) is not DeviceArray:
        raise RuntimeError("the device-array stand-in registers itself as 'jax': run it where JAX is not imported")
    jax = types.ModuleType("jax")
    jax.Array = DeviceArray
    jnp = types.ModuleType("jax.numpy")
    jnp.__array_namespace_info__ = _strict.__array_namespace_info__
    jnp.empty = lambda *args, **kwargs: _Handle()
    jax.numpy = jnp
    sys.modules["jax"], sys.modules["jax.numpy"] = jax, jnp


def conversions(kind):
    """``(to_device, host)`` for the arrays of ``kind`` in a child script of :func:`run_checks`.

    ``"stand-in"``: this module's arrays (registered first, :func:`register`); ``"strict-cpu"`` /
    ``"strict-device1"``: array-api-strict on its CPU device or on ``device1``; ``"torch"``: PyTorch tensors on
    the CPU (:data:`TORCH`).  ``to_device(values)`` makes
    an array of the kind from NumPy values, keeping their dtype; ``host(array)`` brings one back explicitly
    (DLPack: none of these arrays converts implicitly, but the CPU one).
    """
    if kind == "stand-in":
        register()
        to_device = asarray
    elif kind == "torch":
        import torch

        def to_device(values):
            return torch.from_numpy(np.array(values))  # a copy: the tensor owns its memory, as a device one would
    else:
        where = _strict.Device("CPU_DEVICE" if kind == "strict-cpu" else "device1")

        def to_device(values):
            values = np.asarray(values)
            return _strict.asarray(values, dtype=getattr(_strict, str(values.dtype)), device=where)

    def host(array):
        return np.from_dlpack(array, device="cpu")

    return to_device, host


def trace_difference(fitted, reference):
    """``dict(worst, same_keys, problems, host_numpy)``: a device fit's ``history_`` against the NumPy fit's.

    ``worst``: the largest entry gap relative to ``max(1, |value|)`` over every key and problem (two NaNs agree:
    the first row of a step trace); a key of another shape raises ``AssertionError``.
    """
    def listed(history):
        return history if isinstance(history, list) else [history]

    worst, same_keys = 0.0, True
    for h, r in zip(listed(fitted.history_), listed(reference.history_)):
        same_keys &= set(h) == set(r)
        for key in r:
            a, b = np.asarray(h[key], dtype=float), np.asarray(r[key], dtype=float)
            if a.shape != b.shape:
                raise AssertionError(f"{key}: {a.shape} vs {b.shape}")
            if a.size:
                gap = np.abs(a - b) / np.maximum(1.0, np.abs(b))
                worst = max(worst, float(np.max(np.where(np.isnan(a) & np.isnan(b), 0.0, gap))))
    return dict(worst=worst, same_keys=bool(same_keys), problems=len(listed(reference.history_)),
                host_numpy=all(isinstance(v, np.ndarray) for h in listed(fitted.history_) for v in h.values()))


def one_line(run):
    """``None`` when ``run()`` returns, else ``[type name, message]`` of what it raised (a refusal, to check it)."""
    try:
        run()
    except Exception as error:
        return [type(error).__name__, str(error)]
    return None


def extra_memory(fits, to_device, rng, *, dtypes=("float64", "float32")):
    """What each fit allocates beside ``X``, as a multiple of ``X.nbytes`` (NumPy's allocations traced).

    ``X`` is 20 000 × 64 (an N-vector is 1/64 of float64 ``X``: a copy of ``X`` stands out against the pass's
    O(N) vectors), labels from its first column and noise, both drawn from ``rng`` and put on the device with
    ``to_device``.  ``fits``: ``(label, fit)`` pairs, ``fit(X, y)`` fitting an estimator on device arrays.  Each
    fit runs first on 500 rows (its imports and first calls, not traced), then on all of them under
    ``problems.traced_peak``.  Returns ``{"<label> <dtype>": peak / X.nbytes}``, or ``{"error": "<type>: <message>"}``
    if a fit raised (the script's other checks still report).
    """
    import warnings

    from problems import traced_peak  # a helper at the top of tests/

    try:
        big = rng.normal(size=(20_000, 64))
        labels = (big[:, 0] + rng.normal(size=20_000) > 0).astype(np.int64)
        out = {}
        for dtype in dtypes:
            data = big.astype(dtype)
            Xb, yb = to_device(data), to_device(labels)
            for label, fit in fits:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit(Xb[:500, :], yb[:500])
                    out[f"{label} {dtype}"] = traced_peak(lambda: fit(Xb, yb)) / data.nbytes
        return out
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}


NAMESPACE_OF = {"stand-in": "device_arrays", "strict-cpu": "array_api_strict", "strict-device1": "array_api_strict",
                "torch": "torch"}
"""The module of the namespace that scikit-learn resolves for each kind of arrays (array-api-compat's wrapper of
PyTorch reports ``torch``); :func:`run_checks` adds it to its outcome as ``"namespace"``."""


def run_checks(script, kind, timeout=300):
    """Run ``script`` in a fresh interpreter for arrays of ``kind``; return the JSON of its last line of output.

    A fresh interpreter because scikit-learn's dispatch needs ``SCIPY_ARRAY_API=1`` before scipy is imported
    and :func:`register` changes ``sys.modules``; the script reads ``kind`` from ``LINSEP_TEST_ARRAYS`` and finds
    this module on its path (a dict outcome gets the kind's ``"namespace"``).  A failed run raises ``AssertionError`` with the end of its standard error;
    ``timeout``: its seconds at most.
    """
    import json
    import os
    import subprocess
    from pathlib import Path

    tests = str(Path(__file__).resolve().parent)
    env = dict(os.environ, SCIPY_ARRAY_API="1", LINSEP_TEST_ARRAYS=kind,
               PYTHONPATH=os.pathsep.join([tests, *sys.path]))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=timeout,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    if isinstance(outcome, dict):
        outcome["namespace"] = NAMESPACE_OF[kind]
    return outcome
