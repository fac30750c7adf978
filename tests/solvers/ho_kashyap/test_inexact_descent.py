"""Inexact W-steps that break Ho–Kashyap's descent are made exact (the run goes on instead of overflowing).

On a 3 000-document text problem, one fold of ``hkes_cv_c`` (C = None, 2 400 rows, 5 756 columns) fed the
inexact solves' error back into the margins, which grew by about 4 a step until ``FloatingPointError``
("Ho–Kashyap diverged at iteration 95") ended the whole search.
"""

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from linsep import make_classifier
from linsep.datasets import make_topic_corpus


def test_hkes_cv_on_wide_text_fits_where_the_inexact_solves_diverged():
    docs, topics = make_topic_corpus(4000, 2, random_state=0)  # the first 3 000 (the benchmark's training rows)
    docs, topics = docs[:3000], topics[:3000]
    X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)
    model = make_classifier("hkes_cv_c", random_state=0).fit(X, topics)
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_).all()
    assert model.score(X, topics) > 0.9
