"""Data files as they come: gzip, header detected or declared, label column, delimiter, dropped columns."""

import gzip

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from linsep.cli import main
from linsep.datasets import DataFileError, read_data_file

ROWS = [[1.0, 2.0, 0], [3.0, 4.0, 1], [5.0, 6.5, 0], [7.0, 8.0, 1]]


def _text(rows, header=None, delimiter=","):
    lines = ([delimiter.join(header)] if header else []) + [delimiter.join(map(str, row)) for row in rows]
    return "\n".join(lines) + "\n"


def _assert_rows(X, y, rows=ROWS):
    assert np.array_equal(X, np.array(rows)[:, :2].astype(float))
    assert y.tolist() == [int(r[2]) for r in rows]


def test_headerless_csv_keeps_every_row(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text(_text(ROWS))
    _assert_rows(*read_data_file(path))
    _assert_rows(*read_data_file(path, header=False))


def test_header_is_detected_even_with_numeric_feature_names_once_declared(tmp_path):
    path = tmp_path / "named.csv"
    path.write_text(_text(ROWS, header=["a", "b", "y"]))
    _assert_rows(*read_data_file(path))
    numeric = tmp_path / "numeric_names.csv"
    numeric.write_text(_text(ROWS, header=["1", "2", "label"]))  # the label column gives it away
    _assert_rows(*read_data_file(numeric))
    all_numbers = tmp_path / "all_numbers.csv"
    all_numbers.write_text(_text(ROWS, header=["1", "2", "3"]))
    X, _ = read_data_file(all_numbers)
    assert X.shape[0] == len(ROWS) + 1  # a row of numbers is data unless declared
    _assert_rows(*read_data_file(all_numbers, header=True))


def test_gzip_csv_and_svmlight(tmp_path):
    path = tmp_path / "data.csv.gz"
    path.write_bytes(gzip.compress(_text(ROWS, header=["a", "b", "y"]).encode()))
    _assert_rows(*read_data_file(path))
    svm = tmp_path / "data.svm.gz"
    with gzip.open(svm, "wb") as handle:
        dump_svmlight_file(np.array(ROWS)[:, :2], np.array(ROWS)[:, 2], handle)
    X, y = read_data_file(svm)
    assert np.array_equal(X.toarray(), np.array(ROWS)[:, :2]) and y.tolist() == [0, 1, 0, 1]


def test_label_column_delimiter_and_dropped_columns(tmp_path):
    rows = [[10 + i, r[2], r[0], r[1]] for i, r in enumerate(ROWS)]  # id, label first, then the features
    path = tmp_path / "semicolon.csv"
    path.write_text(_text(rows, header=["id", "class", "a", "b"], delimiter=";"))
    _assert_rows(*read_data_file(path, label_column="class", drop_columns="id"))
    _assert_rows(*read_data_file(path, label_column=1, drop_columns=[0], delimiter=";"))
    tab = tmp_path / "tab.txt"
    tab.write_text(_text(rows, delimiter="\t"))
    _assert_rows(*read_data_file(tab, label_column="1", drop_columns="0", delimiter="tab"))


@pytest.mark.parametrize("content, options, words", [
    (b"a,b,y\n1,2,0\n3,\x004,1\n", {}, "NUL bytes"),
    ("a\0,b,y\n1,2,0\n".encode("utf-16"), {}, "NUL bytes"),
    (b"a,b,y\n1,2,0\n", {"label_column": "nope"}, "not a column of the header"),
    (b"1,2,0\n3,4,1\n", {"label_column": "y"}, "no header row"),
    (b"a,b,y\n1,2,0\n", {"label_column": 7}, "out of range"),
    (b"a,b,y\n1,2,0\n", {"drop_columns": "y", "label_column": "y"}, "also dropped"),
    (b"a;b;y\n1;2;0\n", {"delimiter": ";;"}, "one character"),
    (b"x,y\nfoo,0\nbar,1\n", {}, "non-numeric"),
])
def test_refusals_are_one_line(tmp_path, content, options, words):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(DataFileError, match=words) as info:
        read_data_file(path, **options)
    assert "\n" not in str(info.value)


def test_damaged_gzip_and_svmlight_options_are_refused(tmp_path):
    path = tmp_path / "data.csv.gz"
    path.write_bytes(gzip.compress(b"a,b,y\n1,2,0\n")[:-6])
    with pytest.raises(DataFileError, match="gzip"):
        read_data_file(path)
    svm = tmp_path / "data.svm"
    svm.write_text("0 1:1\n1 1:2\n")
    with pytest.raises(DataFileError, match="svmlight file has no label column"):
        read_data_file(svm, label_column=0)


def test_the_same_options_for_every_command(tmp_path, capsys):
    rows = [[i, r[2], r[0], r[1]] for i, r in enumerate(ROWS * 3)]
    data = tmp_path / "train.csv.gz"
    data.write_bytes(gzip.compress(_text(rows, delimiter=";").encode()))
    options = ["--no-header", "--label-column", "1", "--drop-columns", "0", "--delimiter", ";"]
    model = tmp_path / "m.npz"
    assert main(["fit", "mhks", str(data), "-o", str(model), *options]) == 0
    assert "12 samples, 2 features" in capsys.readouterr().out
    assert main(["predict", str(model), str(data), *options]) == 0
    assert len(capsys.readouterr().out.split()) == 12
    assert main(["separable", str(data), *options]) == 0
    assert capsys.readouterr().out.startswith("separable")  # the id column would have been a feature
    assert main(["trace", "perceptron", str(data), "--steps", "1", *options]) == 0
    assert "perceptron: n_iter_" in capsys.readouterr().out


def test_command_line_refuses_nul_bytes(tmp_path, capsys):
    path = tmp_path / "nul.csv"
    path.write_bytes(b"a,b,y\n1,2,0\n3,4\x00,1\n")
    assert main(["separable", str(path)]) == 2
    err = capsys.readouterr().err
    assert "NUL bytes" in err and len(err.splitlines()) == 1
