"""The notice while numba compiles (:mod:`linsep._core.compilation`): said once, only when compiling takes time."""

import logging
import time

import numpy as np
from numba import njit

from linsep._core import compilation


def _slow_to_compile():
    @njit  # a fresh dispatcher each time: nothing compiled yet
    def add(x, y):
        return x + y
    return add


def test_prepare_says_once_that_it_compiles(caplog):
    add = _slow_to_compile()
    with caplog.at_level(logging.WARNING, logger="linsep.compilation"):
        compilation.prepare(add, (np.ones(3), 1.0), "the test loop", delay=0.0)
        time.sleep(0.05)  # the notice comes from a timer thread
        other = _slow_to_compile()
        compilation.prepare(other, (np.ones(3), 1.0), "the test loop", delay=0.0)
        time.sleep(0.05)
    notices = [record.getMessage() for record in caplog.records if "the test loop" in record.getMessage()]
    assert len(notices) == 1 and "compiling the test loop" in notices[0] and "linsep warm-up" in notices[0]
    assert add.signatures and other.signatures  # compiled by prepare, before any call


def test_prepare_is_silent_for_quick_compiles_and_loaded_code(caplog):
    add = _slow_to_compile()
    with caplog.at_level(logging.WARNING, logger="linsep.compilation"):
        compilation.prepare(add, (np.ones(3), 1.0), "a quick loop", delay=60.0)  # done before the notice
        compilation.prepare(add, (np.ones(3), 1.0), "a loaded loop", delay=0.0)  # already there: no compile
        time.sleep(0.05)
    assert not [record for record in caplog.records if record.name == "linsep.compilation"]
    assert len(add.signatures) == 1


def test_no_notice_while_notices_are_paused(caplog):
    with caplog.at_level(logging.WARNING, logger="linsep.compilation"), compilation.notices_paused():
        compilation.prepare(_slow_to_compile(), (1.0, 2.0), "a paused loop", delay=0.0)
        time.sleep(0.05)
    assert not [record for record in caplog.records if "a paused loop" in record.getMessage()]


def test_a_prepared_key_skips_the_signature_look_up():
    # A caller's cheap key (its dtypes and selectors) stands for the signature: once ready, prepare returns
    # without typing the arguments again (that typing costs a noticeable share of a small fit).
    add = _slow_to_compile()
    compilation.prepare(add, (np.ones(3), 1.0), "a keyed loop", key=("float64",))
    assert len(add.signatures) == 1
    compilation.prepare(add, (np.ones(3, dtype=np.int64), 1), "a keyed loop", key=("float64",))
    assert len(add.signatures) == 1  # the key said ready: nothing typed or compiled
    compilation.prepare(add, (np.ones(3, dtype=np.int64), 1), "a keyed loop", key=("int64",))
    assert len(add.signatures) == 2
