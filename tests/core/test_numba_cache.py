"""numba's disk cache shared by processes, across environments and edits (:mod:`linsep._core.numba_cache`).

Two processes saving two signatures of a function at once can leave the index of one beside the data of the
other (a by-rows fit then runs the by-columns segment: a segmentation fault in ``_run_segments``); here the
interleaving is forced in two fresh processes (numba's own writes, held at the points where they interleave),
and a swapped index is made by hand.  A caller compiled over a cached threaded pass was saved without numba's
thread start-up and crashed the next process that loaded it first (calling address 0); here that sequence runs
in fresh processes, and such an entry is also made by hand.  Every linsep key carries the build fingerprint
(the sources compiled code is made of, numba's code settings, the versions): an entry keyed without it, or
with another, is never loaded.
"""

import glob
import json
import os
import pickle
import subprocess
import sys
import textwrap

RACE = textwrap.dedent('''
    import os, sys, time
    dtype, role, sync = sys.argv[1:4]
    import numpy as np
    from numba.core import caching
    from linsep.solvers.ho_kashyap.loops import _copy_into

    def wait(name, timeout=2.0):  # under linsep's lock the other process never gets there: time out
        end = time.monotonic() + timeout
        while not os.path.exists(os.path.join(sync, name)) and time.monotonic() < end:
            time.sleep(0.01)

    def mark(name):
        open(os.path.join(sync, name), "w").close()

    save_index, save_data = caching.IndexDataCacheFile._save_index, caching.IndexDataCacheFile._save_data

    def held_index(self, overloads):  # A index, B index, B data, A data: B's index, A's data
        if "_copy_into" in self._index_name:
            if role == "first":
                wait("second-loaded")
                save_index(self, overloads)
                mark("first-index")
                return
            mark("second-loaded")
            wait("first-index")
        save_index(self, overloads)

    def held_data(self, name, data):
        if "_copy_into" in self._index_name and role == "first":
            wait("second-data")
        save_data(self, name, data)
        if "_copy_into" in self._index_name and role == "second":
            mark("second-data")

    caching.IndexDataCacheFile._save_index = held_index
    caching.IndexDataCacheFile._save_data = held_data
    dst = np.zeros(3, dtype=dtype)
    _copy_into(dst, np.arange(3, dtype=dtype))
''')

LOAD = textwrap.dedent('''
    import numpy as np
    from linsep.solvers.ho_kashyap.loops import _copy_into
    for dtype in ("float64", "float32"):
        dst = np.zeros(3, dtype=dtype)
        _copy_into(dst, np.arange(3, dtype=dtype))
        assert dst.tolist() == [0, 1, 2], dst
    print(sum(1 for n in _copy_into.stats.cache_hits.values() if n))
''')


def _env(cache, **more):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **more)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def _load(cache):
    run = subprocess.run([sys.executable, "-c", LOAD], env=_env(cache), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return int(run.stdout.split()[-1])


def test_concurrent_saves_of_two_signatures_leave_a_matching_cache(tmp_path):
    cache, sync = tmp_path / "cache", tmp_path / "sync"
    cache.mkdir()
    sync.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", RACE, dtype, role, str(sync)], env=_env(cache),
                              stderr=subprocess.PIPE, text=True)
             for dtype, role in (("float64", "first"), ("float32", "second"))]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    # Without the lock: float32 loads float64 code (TypeError) and float64 is missing from the index.
    assert _load(cache) == 2


def test_cache_entry_holding_another_signature_is_compiled_anew(tmp_path):
    assert _load(tmp_path) == 0  # compiles and saves both signatures
    path, = glob.glob(str(tmp_path / "*" / "loops._copy_into-*.nbi"))
    with open(path, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    (a, name_a), (b, name_b) = overloads.items()
    overloads[a], overloads[b] = name_b, name_a  # each signature's entry names the other's code
    with open(path, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, overloads), protocol=-1))
    assert _load(tmp_path) == 0  # both refused and compiled anew (numba alone: TypeError)
    assert _load(tmp_path) == 2  # and the entries were repaired


def test_the_cache_of_this_numba_is_locked_and_checked():
    # The patch applies to the numba installed here (import linsep installed it); a numba without its
    # private parts would be left alone, and this test says so rather than the fits.
    from numba.core import caching

    from linsep._core import numba_cache as _numba_cache

    assert _numba_cache.install() is True
    assert caching.Cache._load_overload is _numba_cache._checked_load_overload


# --------------------------------------------------------------------------- a cached threaded pass, its callers

# The Ho–Kashyap segment by rows on 3 threads, with validation rows: ``_ho_kashyap_pass`` calls the threaded pass
# (``_pass_by_rows_parallel``, a ``prange`` loop).  With squared or absolute errors (MHKA's IRLS): two variants of
# the segment that call ``_ho_kashyap_pass`` with the same types.  Prints the weights' bits and whether the
# segment came from the cache.
SEGMENT = textwrap.dedent('''
    import json, sys
    import numpy as np
    from linsep._core.signed_design import SignedDesign
    from linsep.solvers.ho_kashyap.loops import ho_kashyap_segment
    from linsep.solvers.ho_kashyap.solver import ho_kashyap

    rng = np.random.default_rng(0)
    X, Xv = rng.normal(size=(500, 4)), rng.normal(size=(150, 4))
    y, yv = np.where(X[:, 0] > 0.2, 1.0, -1.0), np.where(Xv[:, 0] > 0.2, 1.0, -1.0)
    run = ho_kashyap(SignedDesign(X, y), Y_val=SignedDesign(Xv, yv), loss=sys.argv[1], C=0.5, max_iter=30,
                     plan={"driver": "compiled", "by_columns_max_entries": 0, "threads": 3})
    assert run.extra["plan"]["threads"] == 3, run.extra["plan"]
    print(json.dumps({"weights": run.weights.tobytes().hex(),
                      "loaded": sum(ho_kashyap_segment.stats.cache_hits.values())}))
''')

CHECK_ENTRIES = textwrap.dedent('''
    import glob, json, os, pickle, sys
    from linsep._core.numba_cache import entry_problem
    problems = {}
    for index in glob.glob(os.path.join(sys.argv[1], "**", "*.nbi"), recursive=True):
        with open(index, "rb") as f:
            pickle.load(f)
            _, overloads = pickle.loads(f.read())
        for key, name in overloads.items():
            with open(os.path.join(os.path.dirname(index), name), "rb") as f:
                problem = entry_problem(key, pickle.loads(f.read()))
            if problem:
                problems[name] = problem
    print(json.dumps(problems))
''')


def _segment(cache, loss):
    run = subprocess.run([sys.executable, "-c", SEGMENT, loss], env=_env(cache), capture_output=True, text=True,
                         timeout=600)
    # -11: SIGSEGV, the entry called numba's parallel runtime before its threads were started
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return {**json.loads(run.stdout.splitlines()[-1]), "refused": "linsep: refused a compiled-code" in run.stderr}


def _entry_problems(cache):
    run = subprocess.run([sys.executable, "-c", CHECK_ENTRIES, str(cache)], env=_env(cache), capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(run.stdout.splitlines()[-1])


def test_a_caller_compiled_over_a_cached_threaded_pass_starts_numbas_threads(tmp_path):
    """Process 1 caches the threaded pass; process 2 compiles another segment over it; process 3 loads that alone.

    Before the fix, process 2 saved its segment without numba's thread start-up (numba rebuilds a cached
    library without it, and a caller inherits it from the libraries it links), and process 3 died of SIGSEGV
    (the entry of ``../shared/repro/cache-segfault-2026-11-28``: squared errors, validation rows, 3 threads).
    """
    _segment(tmp_path, "absolute")
    compiled = _segment(tmp_path, "squared")
    assert compiled["loaded"] == 0
    loaded = _segment(tmp_path, "squared")  # before the fix: SIGSEGV here
    assert loaded == {**compiled, "loaded": 1}  # loaded from the cache, the same bits
    assert _entry_problems(tmp_path) == {}  # every saved entry that calls numba's threads starts them


def test_an_entry_that_calls_numbas_threads_without_starting_them_is_compiled_anew(tmp_path):
    """An entry saved with an empty ``reload_init`` (as numba's bug wrote them) is refused, rebuilt and replaced."""
    compiled = _segment(tmp_path, "squared")
    index, = glob.glob(str(tmp_path / "**" / "loops.ho_kashyap_segment-*.nbi"), recursive=True)
    with open(index, "rb") as f:
        pickle.load(f)
        _, overloads = pickle.loads(f.read())
    name, = overloads.values()
    data_path = os.path.join(os.path.dirname(index), name)
    with open(data_path, "rb") as f:
        data = list(pickle.loads(f.read()))
    from linsep._core.numba_cache import _entry_fields

    fields = list(_entry_fields(data))
    assert data[fields.index("reload_init")]  # numba's thread start-up, recorded
    data[fields.index("reload_init")] = []
    # what numba 0.61 saves for such a caller: linsep's save puts the start-up back
    from numba.core.typed_passes import _reload_parfors

    from linsep._core.numba_cache import _with_thread_start

    assert _with_thread_start(tuple(data))[fields.index("reload_init")] == [_reload_parfors]
    with open(data_path, "wb") as f:
        f.write(pickle.dumps(tuple(data), protocol=-1))
    assert list(_entry_problems(tmp_path).values()) == ["calls numba's threads without starting them"]
    # refused, with a warning naming the way out (numba alone: SIGSEGV), and compiled anew
    assert _segment(tmp_path, "squared") == {**compiled, "refused": True}
    assert _entry_problems(tmp_path) == {}  # and the entry replaced
    assert _segment(tmp_path, "squared") == {**compiled, "loaded": 1}


# --------------------------------------------------------------------------- the key: what the code is built from

FINGERPRINT = "from linsep._core.numba_cache import build_fingerprint; print(build_fingerprint())"


def test_the_fingerprint_covers_the_compiled_modules_their_imports_and_numbas_code_settings(tmp_path):
    from linsep._core.numba_cache import _PACKAGE_DIR, _code_sources, build_fingerprint, compiled_modules

    sources = {path.relative_to(_PACKAGE_DIR).as_posix() for path in _code_sources()}
    # the segment's module and every module whose compiled functions it inlines
    assert {"solvers/ho_kashyap/loops.py", "solvers/ho_kashyap/rows.py", "solvers/ho_kashyap/rules.py",
            "_core/irls.py", "_core/threads.py", "solvers/lsvm/loops.py"} <= sources
    assert "linsep.solvers.perceptron.loops" in compiled_modules()
    here = build_fingerprint()
    same = subprocess.run([sys.executable, "-c", FINGERPRINT], env=_env(tmp_path), capture_output=True, text=True,
                          check=True).stdout.strip()
    checked = subprocess.run([sys.executable, "-c", FINGERPRINT], env=_env(tmp_path, NUMBA_BOUNDSCHECK="1"),
                             capture_output=True, text=True, check=True).stdout.strip()
    assert same == here and len(here) == 64
    assert checked != here  # code compiled with bounds checks is another build


def test_an_entry_keyed_without_the_fingerprint_is_never_loaded(tmp_path):
    assert _load(tmp_path) == 0
    path, = glob.glob(str(tmp_path / "*" / "loops._copy_into-*.nbi"))
    with open(path, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    from linsep._core.numba_cache import build_fingerprint

    assert all(key[-1] == build_fingerprint() for key in overloads)
    # as written by another build (an edit of rows.py, another NumPy, NUMBA_BOUNDSCHECK): not this one's
    overloads = {key[:-1] + ("another build",): name for key, name in overloads.items()}
    with open(path, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, overloads), protocol=-1))
    assert _load(tmp_path) == 0  # compiled anew
    assert _load(tmp_path) == 2


CLEAR = textwrap.dedent('''
    import json
    from linsep._core.numba_cache import clear_cache
    print(json.dumps(clear_cache()))
''')


def test_clear_cache_removes_linseps_entries_and_nothing_else(tmp_path):
    assert _load(tmp_path) == 0
    folder = os.path.dirname(glob.glob(str(tmp_path / "*" / "loops._copy_into-*.nbi"))[0])
    foreign = [os.path.join(folder, name) for name in ("other.f-1.py311.nbi", "other.f-1.py311.1.nbc")]
    for path in foreign:
        open(path, "wb").close()
    linseps = sorted(set(glob.glob(os.path.join(folder, "loops._copy_into-*"))))
    run = subprocess.run([sys.executable, "-c", CLEAR], env=_env(tmp_path), capture_output=True, text=True,
                         check=True)
    removed = json.loads(run.stdout.splitlines()[-1])
    assert sorted(removed) == linseps and len(linseps) == 3  # the index and the float64 and float32 code
    assert all(os.path.exists(path) for path in foreign)
    assert _load(tmp_path) == 0  # compiled anew
