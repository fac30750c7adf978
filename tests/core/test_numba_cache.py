"""numba's disk cache shared by processes saving at once (issue 29's segmentation fault).

numba saves a new signature of a function by reading its index, taking the first unused data-file
number, writing the index, then the data, with no lock: two processes saving two signatures at once
can leave the index of one beside the data of the other, and a later process runs code compiled for
other argument types (a segmentation fault in ``_run_segments`` when a by-rows fit gets the by-columns
segment).  :mod:`linsep._core.numba_cache` locks the cache folder around each save and load and refuses
code compiled for another signature.  Here the interleaving is forced in two fresh processes (numba's
own writes, held at the points where they interleave), and a swapped index is made by hand.
"""

import glob
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


def _env(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
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
