"""The ``>>>`` examples of the user-guide pages on model files, data files and separability run as doctests."""

import doctest
from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[2] / "docs" / "user_guide"


@pytest.mark.parametrize("page", ["persistence.rst", "data_files.rst", "separability_classes.rst"])
def test_page_examples(page):
    result = doctest.testfile(str(PAGES / page), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
