"""numba's disk cache made safe for linsep's functions: locked, keyed on what shapes the code, checked on load.

numba keeps one index file per function (key -> data file) and one data file
per compiled signature (``numba/core/caching.py``).  Left alone, it hands a
later process machine code that crashes it, in three ways this module closes.

**Two writers at once** (``IndexDataCacheFile.save``): a process that saves a
new signature reads the index, takes the first data-file number the index
does not use, writes the index, then the data, with no lock.  Two processes
saving two *different* signatures of one function at once can both take
number 1 and leave the index of one beside the data of the other; a later
process then loads, for the signature it asks for, the code of another
signature (numba does not check), e.g. the by-columns Ho–Kashyap pass on a
by-rows matrix (heap corruption, SIGSEGV in
``solvers/ho_kashyap/segments.py:_run_segments``).  Here a save holds an
exclusive ``flock`` on the cache folder from reading the index to writing the
data and a load a shared one, and an entry whose signature is not the one
asked for is refused (compiled anew; its save replaces the entry).  Where
``flock`` is missing (Windows) or fails (some network file systems), the
checks still run.

**An entry that forgets to start numba's threads.**  Code with a ``prange``
loop calls numba's parallel runtime (``numba_parallel_for``,
``get_num_threads``, ...), whose addresses exist only once
``numba.np.ufunc.parallel._launch_threads`` has run.  A compiled function
records that need in its ``reload_init`` list, and a caller inherits the
lists of the libraries it links; numba saves the list with the entry and
runs it before loading the entry.  But an entry *loaded* from the cache comes
back with an empty list on its library, so a caller compiled in that process
(say the squared-error Ho–Kashyap segment, after an earlier process's
absolute-error fit cached the threaded pass both call) is saved without it.  A later process that
loads that caller first calls address 0 on entering the threaded pass:
SIGSEGV, only in processes that had not started numba's threads for another
reason.  This is numba's own (numba issues 8578 and 9938; the numba example
is in ``docs/design.md``).  Here a loaded linsep entry gets its list back on
its library, so its callers are saved with it; where numba passes no list on
to callers at all (numba 0.61, the oldest linsep supports: a caller of a
threaded pass is saved with an empty list), a linsep entry whose machine code
calls the parallel runtime is saved with numba's thread start-up added; and
an entry whose machine code calls the parallel runtime but whose list is
empty is refused.

**Stale or foreign code under a matching key.**  numba keys an entry by the
function's own source file, its bytecode, the numba version and the CPU; a
compiled function inlines callees from other modules (``loops.py`` calls
``rows.py``, ``rules.py``, ``linsep._core.irls``, ``linsep._core.threads``)
and reads settings that change its machine code (``NUMBA_BOUNDSCHECK``,
``NUMBA_OPT``, the NumPy and llvmlite versions, Intel SVML).  Here every
linsep key also carries :func:`build_fingerprint`: the SHA-256 of those
settings and of the source of every linsep module that defines compiled code
or that such a module imports, so an edit to any of them, or another
environment, never loads the other's entries.

:func:`install` (run when ``linsep`` is imported) applies all this to
linsep's functions only; other packages' numba functions are left alone.
:func:`clear_cache` (``linsep warm-up --clean``) deletes linsep's entries.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import importlib
import inspect
import logging
import os
import pathlib
import re
import sys

from numba.core import caching, compiler, config, sigutils

try:
    import fcntl
except ImportError:  # Windows: no lock, the checks remain
    fcntl = None

__all__ = ["build_fingerprint", "clear_cache", "compiled_modules", "entry_problem", "install"]

_PACKAGE = __name__.split(".")[0]
_PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
logger = logging.getLogger("linsep.compilation")

# Symbols of numba's parallel runtime, registered by numba.np.ufunc.parallel._launch_threads: machine code that
# names them needs that function run before it is loaded (numba's reload_init).
_PARALLEL_RUNTIME_SYMBOLS = (b"numba_parallel_for", b"do_scheduling_signed", b"do_scheduling_unsigned")

# numba settings read when code is compiled that change the machine code (numba.core.config).  The CPU's name
# and features are in numba's own key; the thread count is not among these: parallel code reads it at run time.
_CODE_SETTINGS = ("OPT", "BOUNDSCHECK", "DEBUGINFO_DEFAULT", "LOOP_VECTORIZE", "SLP_VECTORIZE", "ENABLE_AVX",
                  "USING_SVML", "DISABLE_INTEL_SVML", "FULL_TRACEBACKS", "EXTEND_VARIABLE_LIFETIMES")

# A module defines compiled code if a line applies one of numba's compiling decorators, or assigns a function
# compiled by one (``f = njit(cache=True)(g)``).
_COMPILES = re.compile(r"^\s*@(?:numba\.)?(?:njit|jit|overload|overload_method|vectorize|guvectorize)\b"
                       r"|^\w+\s*=\s*(?:numba\.)?(?:njit|jit|vectorize|guvectorize)\(", re.MULTILINE)
# ``from linsep.a import b, c`` (the names on one line, or in parentheses over several) and ``import linsep.a``.
_IMPORTS = re.compile(r"^\s*(?:from\s+(linsep(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n]*)|import\s+(linsep(?:\.\w+)+))",
                      re.MULTILINE)


def _module_path(name):
    """The source file of linsep module ``name`` (``linsep.a.b``), or None if it is not one."""
    parts = name.split(".")[1:]
    base = _PACKAGE_DIR.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def compiled_modules():
    """linsep's modules that define numba-compiled functions, as sorted dotted names.

    Found by reading the package's sources (a compiling decorator at the start
    of a line), so a new compiled module is found without a list to update.
    """
    found = []
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        if _COMPILES.search(path.read_text(encoding="utf-8")):
            relative = path.relative_to(_PACKAGE_DIR.parent).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            found.append(".".join(parts))
    return tuple(found)


def _code_sources():
    """The source files whose text can reach compiled machine code: compiled modules and what they import."""
    seen, todo = set(), [path for path in map(_module_path, compiled_modules()) if path is not None]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for package, names, module in _IMPORTS.findall(path.read_text(encoding="utf-8")):
            targets = [module] if module else [package] + [f"{package}.{n}" for n in re.findall(r"\w+", names)]
            todo.extend(p for p in map(_module_path, targets) if p is not None and p not in seen)
    return sorted(seen)


@functools.cache
def build_fingerprint():
    """What linsep's compiled code is built from, as a SHA-256 hex digest (part of each cache key).

    It covers the versions of numba, llvmlite and NumPy, the numba settings
    that change machine code (:data:`_CODE_SETTINGS`), and the source of
    every linsep module that defines compiled code or is imported by one.
    Computed once per process, at the first cache look-up.
    """
    import llvmlite
    import numba
    import numpy

    digest = hashlib.sha256()
    for name, value in (("numba", numba.__version__), ("llvmlite", llvmlite.__version__),
                        ("numpy", numpy.__version__), ("python", sys.implementation.cache_tag),
                        *((setting, getattr(config, setting, None)) for setting in _CODE_SETTINGS)):
        digest.update(f"{name}={value!r}\n".encode())
    for path in _code_sources():
        digest.update(path.relative_to(_PACKAGE_DIR).as_posix().encode() + b"\n")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


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


def _entry_fields(data):
    """A cache entry's stored tuple by field name (the parameters of numba's ``CompileResult._rebuild``)."""
    names = list(inspect.signature(compiler.CompileResult._rebuild).parameters)[1:]  # after target_context
    return dict(zip(names, data))


def _machine_code(libdata):
    """The bytes of a stored library (``(name, kind, payload)``): object code and bitcode, or bitcode."""
    payload = libdata[2] if isinstance(libdata, tuple) and len(libdata) == 3 else libdata
    parts = payload if isinstance(payload, tuple) else (payload,)
    return [part for part in parts if isinstance(part, (bytes, bytearray))]


def _calls_parallel_runtime(libdata):
    """Whether a stored library's machine code names numba's parallel runtime (needs its threads started)."""
    return any(symbol in code for code in _machine_code(libdata) for symbol in _PARALLEL_RUNTIME_SYMBOLS)


def _with_thread_start(data):
    """A linsep entry to save (``data``, the stored tuple), with numba's thread start-up where its code needs it.

    numba records the start-up (``typed_passes._reload_parfors``) in the
    ``reload_init`` of a function with a ``prange`` loop; numba 0.61 passes
    nothing on to its callers (0.68 passes it on through their libraries), so
    a caller of a threaded pass (the Ho–Kashyap segment) is saved with an
    empty list there and would be refused on every load
    (:func:`entry_problem`), i.e. compiled anew in every process.  Such an entry gets the start-up added here; an entry that has
    its list, or calls no parallel code, is saved as it is.
    """
    fields = _entry_fields(data)
    start = getattr(importlib.import_module("numba.core.typed_passes"), "_reload_parfors", None)
    if start is None or fields.get("reload_init") or not _calls_parallel_runtime(fields.get("libdata")):
        return data
    data = list(data)
    data[list(fields).index("reload_init")] = [start]
    return tuple(data)


def entry_problem(key, data):
    """Why a stored linsep entry must not be loaded for ``key``, or None if it may.

    ``key`` is the index key (its first item the signature asked for) and
    ``data`` the stored tuple.  Refused: code compiled for another signature
    (two writers at once), and code that calls numba's parallel runtime but
    does not start it on loading (an empty ``reload_init``).
    """
    fields = _entry_fields(data)
    args, _ = sigutils.normalize_signature(key[0])
    stored = getattr(fields.get("signature"), "args", None)
    if stored is None or tuple(stored) != tuple(args):
        return "was compiled for another signature"
    if not fields.get("reload_init") and _calls_parallel_runtime(fields.get("libdata")):
        return "calls numba's threads without starting them"
    return None


class _CheckedIndexDataCacheFile(getattr(caching, "IndexDataCacheFile", object)):  # object: install() does nothing
    """numba's index and data files, read and written under the cache folder's lock; bad entries not loaded."""

    def save(self, key, data):
        data = _with_thread_start(data)
        with _folder_lock(self._cache_path, exclusive=True):
            super().save(key, data)

    def load(self, key):
        if not os.path.exists(self._index_path):  # nothing cached yet: no lock needed
            return None
        with _folder_lock(self._cache_path, exclusive=False):
            data = super().load(key)
        problem = None if data is None else entry_problem(key, data)
        if problem is not None:
            _refused.append(self._index_path)
            # once per process in plain sight (the state a crash came from), every further one at INFO
            logger.log(logging.WARNING if len(_refused) == 1 else logging.INFO,
                       "linsep: refused a compiled-code cache entry in %s (it %s); compiling it anew. "
                       "`linsep warm-up --clean` clears linsep's compiled cache", self._index_path, problem)
            return None  # compiled anew; its save overwrites this entry's data file
        return data


_refused = []  # the index files of the entries this process refused


def _adopt(cache):
    """Give a linsep function's cache the checked index and data files (once)."""
    if _ours(cache._py_func) and type(cache._cache_file) is caching.IndexDataCacheFile:
        cache._cache_file.__class__ = _CheckedIndexDataCacheFile


def _ours(py_func):
    module = getattr(py_func, "__module__", None) or ""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _checked_load_overload(self, sig, target_context):
    """numba's ``Cache._load_overload``, locked and checked; a loaded entry's library keeps its ``reload_init``."""
    _adopt(self)
    result = _original_load_overload(self, sig, target_context)
    if result is not None and _ours(self._py_func):
        # numba rebuilds the library without the entry's reload functions: a caller compiled in this process
        # inherits a linked library's set, and would be saved without them.
        reload_functions = getattr(result.library, "_reload_init", None)
        if isinstance(reload_functions, set):
            reload_functions.update(result.reload_init or ())
    return result


def _locked_save_overload(self, sig, data):
    """numba's ``Cache._save_overload``, with the index and data written under the lock."""
    _adopt(self)
    return _original_save_overload(self, sig, data)


def _fingerprinted_index_key(self, sig, codegen):
    """numba's ``Cache._index_key``, with :func:`build_fingerprint` added to linsep's keys."""
    key = _original_index_key(self, sig, codegen)
    return key + (build_fingerprint(),) if _ours(self._py_func) else key


# numba's own methods, kept to be called by the patched ones (None where this numba lacks them: install()
# then patches nothing, and importing this module must not fail either).
_original_load_overload = getattr(getattr(caching, "Cache", None), "_load_overload", None)
_original_save_overload = getattr(getattr(caching, "Cache", None), "_save_overload", None)
_original_index_key = getattr(getattr(caching, "Cache", None), "_index_key", None)


def _numba_has_the_parts():
    """Whether this numba's cache has the private parts patched here (numba 0.61 to 0.68 have them)."""
    cache = getattr(caching, "Cache", None)
    result = getattr(compiler, "CompileResult", None)
    return (cache is not None and all(hasattr(cache, name) for name in ("_load_overload", "_save_overload",
                                                                        "_index_key"))
            and hasattr(caching, "IndexDataCacheFile")
            and all(hasattr(caching.IndexDataCacheFile, name) for name in ("save", "load", "_load_index"))
            and result is not None and hasattr(result, "_rebuild") and "reload_init" in result._fields
            and hasattr(sigutils, "normalize_signature"))


def install():
    """Lock, key and check the numba disk cache of linsep's functions in this process (idempotent).

    A numba whose cache lacks the parts this module patches is left as it is
    (its races are then numba's own): ``linsep`` imports either way.
    """
    if not _numba_has_the_parts():
        return False
    if caching.Cache._load_overload is not _checked_load_overload:
        caching.Cache._load_overload = _checked_load_overload
        caching.Cache._save_overload = _locked_save_overload
        caching.Cache._index_key = _fingerprinted_index_key
    return True


def _cached_dispatchers():
    """linsep's numba functions that keep a disk cache (their modules imported)."""
    from numba.core.dispatcher import Dispatcher

    for name in compiled_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (isinstance(value, Dispatcher) and getattr(value, "_cache", None) is not None
                    and _ours(value.py_func) and value.py_func.__module__ == name):
                yield value


def clear_cache():
    """Delete linsep's compiled code from numba's disk cache (every entry of every linsep function).

    Wherever numba keeps it (``__pycache__`` beside the sources, the user's
    cache folder, or ``NUMBA_CACHE_DIR``).  Each folder is locked while its
    files go, so a process saving or loading meanwhile waits.  The next fit of
    each kind compiles anew (``linsep warm-up`` compiles everything).

    Returns
    -------
    list of str
        The files deleted.
    """
    removed = []
    for dispatcher in _cached_dispatchers():
        cache = dispatcher._cache
        folder = getattr(cache, "_cache_path", None)
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if not folder or not index or not os.path.isdir(folder):
            continue
        stem = index[:-len(".nbi")]
        with _folder_lock(folder, exclusive=True):
            for path in sorted({index, *glob.glob(glob.escape(stem) + ".*.nbc"),
                                *glob.glob(glob.escape(index) + ".tmp.*")}):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
                    removed.append(path)
    return removed
