"""The Ho–Kashyap rules written once for every driver (:mod:`linsep._hk_rules`)."""

from linsep._hk_rules import NO_PATIENCE, patience_spent, validation_improved


def test_patience_rule():
    assert not patience_spent(100, 0, NO_PATIENCE)
    assert not patience_spent(9, 0, 10) and patience_spent(10, 0, 10)
    assert validation_improved(0.1, 0.2, 0.0) and not validation_improved(0.2, 0.2, 0.0)
    assert not validation_improved(0.15, 0.2, 0.1)
