"""numba's disk cache made safe for several processes writing one cache folder at once (linsep's functions).

numba keeps one index file per function (signature -> data file) and one data
file per compiled signature (``numba/core/caching.py``,
``IndexDataCacheFile.save``): a process that saves a new signature reads the
index, takes the first data-file number the index does not use, writes the
index, then the data file, with no lock.  Each write is atomic (temporary
file and ``os.replace``), but the sequence is not: two processes saving two
*different* signatures of one function at once both read the same index,
both pick number 1, and the index of one can end next to the data of the
other (A writes its index, B its index, B its data, A its data).  A later
process then loads, for the signature it asks for, the machine code of
another signature, and numba does not check: its arguments are unboxed as
that code's types (an argument typed ``None`` in the code ignores the value
passed), so a by-rows fit runs the by-columns pass of the Ho–Kashyap
segment on a row-layout matrix (writes past ``Z`` and ``g``: heap corruption,
SIGSEGV or SIGABRT in ``solvers/_hk_compiled.py:_run_segments``), an MHKS
fit runs MHKA's (reads past an empty ``D``), an MHKA fit silently runs
MHKS's, and a float32 fit given float64 code stops with a ``TypeError``.
A reader can also load a data file whose index entry was just written but
whose data are not yet (harmless: missing, it recompiles) or are a stale
file of an older source of the same name (numbered from 1 again).

For linsep's functions this module (:func:`install`, run when ``linsep`` is
imported) makes a save hold an exclusive ``flock`` on the cache folder from
reading the index to writing the data, and a load hold a shared one; and it
checks that the code loaded is for the signature asked for (else numba
compiles it anew, and its save replaces the bad entry).  Where ``flock`` is
missing (Windows) or fails (some network file systems), only the check runs.
Other packages' numba functions are left alone.
"""

from __future__ import annotations

import contextlib
import os

from numba.core import caching, sigutils

try:
    import fcntl
except ImportError:  # Windows: no lock, the signature check remains
    fcntl = None

__all__ = ["install"]

_PACKAGE = __name__.split(".")[0]


@contextlib.contextmanager
def _folder_lock(folder, exclusive):
    """Hold ``flock`` on the cache folder itself (no extra file); go on without it where it fails."""
    fd = None
    if fcntl is not None:
        try:
            fd = os.open(folder, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


class _LockedIndexDataCacheFile(getattr(caching, "IndexDataCacheFile", object)):  # object: install() does nothing
    """numba's index and data files, read and written under the cache folder's lock."""

    def save(self, key, data):
        with _folder_lock(self._cache_path, exclusive=True):
            super().save(key, data)

    def load(self, key):
        if not os.path.exists(self._index_path):  # nothing cached yet: no lock needed
            return None
        with _folder_lock(self._cache_path, exclusive=False):
            return super().load(key)


def _adopt(cache):
    """Give a linsep function's cache the locked index and data files (once)."""
    if _ours(cache._py_func) and type(cache._cache_file) is caching.IndexDataCacheFile:
        cache._cache_file.__class__ = _LockedIndexDataCacheFile


def _ours(py_func):
    module = getattr(py_func, "__module__", None) or ""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _checked_load_overload(self, sig, target_context):
    """numba's ``Cache._load_overload``, locked, refusing compiled code whose signature is not ``sig``."""
    _adopt(self)
    data = _original_load_overload(self, sig, target_context)
    if data is not None and _ours(self._py_func):
        args, _ = sigutils.normalize_signature(sig)
        loaded = getattr(getattr(data, "signature", None), "args", None)
        if loaded is None or tuple(loaded) != tuple(args):
            return None  # compiled anew; its save overwrites this entry's data file
    return data


def _locked_save_overload(self, sig, data):
    """numba's ``Cache._save_overload``, with the index and data written under the lock."""
    _adopt(self)
    return _original_save_overload(self, sig, data)


# numba's own methods, kept to be called by the patched ones (None where this numba lacks them: install()
# then patches nothing, and importing this module must not fail either).
_original_load_overload = getattr(getattr(caching, "Cache", None), "_load_overload", None)
_original_save_overload = getattr(getattr(caching, "Cache", None), "_save_overload", None)


def _numba_has_the_parts():
    """Whether this numba's cache has the private parts patched here (numba 0.59 to 0.68 have them)."""
    return (hasattr(caching, "Cache") and hasattr(caching.Cache, "_load_overload")
            and hasattr(caching.Cache, "_save_overload") and hasattr(caching, "IndexDataCacheFile")
            and all(hasattr(caching.IndexDataCacheFile, name) for name in ("save", "load", "_load_index"))
            and hasattr(sigutils, "normalize_signature"))


def install():
    """Lock and check the numba disk cache of linsep's functions in this process (idempotent).

    A numba whose cache lacks the parts this module patches is left as it is
    (the race is then numba's own, numba issue 4807): ``linsep`` imports either way.
    """
    if not _numba_has_the_parts():
        return False
    if caching.Cache._load_overload is not _checked_load_overload:
        caching.Cache._load_overload = _checked_load_overload
        caching.Cache._save_overload = _locked_save_overload
    return True
