"""A generated multi-class text corpus: documents as strings, for text pipelines and their benchmarks.

Text classification is where linsep's sparse solvers meet their users (TF-IDF rows, thousands of columns,
several topics), and no such corpus ships with the package.  :func:`make_topic_corpus` draws one with the
features that make real topic data hard: a large common vocabulary under a Zipf law, a minority of topical
words per document, and words borrowed from a neighbouring topic.
"""

from __future__ import annotations

import numpy as np

__all__ = ["make_topic_corpus"]


def make_topic_corpus(n_docs, n_topics, *, random_state=None, n_common=8000, n_topic_words=300,
                      topic_share=0.12, borrow_share=0.05, length=(20, 80), exponent=1.1):
    """Draw ``n_docs`` documents (strings of space-separated words) on ``n_topics`` topics, and their topics.

    Each word of a document of topic ``k`` is, independently, one of topic ``k``'s ``n_topic_words`` words
    with probability ``topic_share``, one of topic ``(k + 1) mod n_topics``'s with probability
    ``borrow_share``, and otherwise a common word, of rank ``r`` with probability
    :math:`P(r) \\propto r^{-\\text{exponent}}` over ``n_common`` words; topic words follow the flatter law
    :math:`\\propto r^{-0.8}`.  Document lengths are uniform on ``length`` (inclusive); topics are uniform.

    Parameters
    ----------
    n_docs : int
        Documents to draw.
    n_topics : int
        Topics (classes), at least 2.
    random_state : int, numpy.random.Generator or None
        Seed of the draw (``numpy.random.default_rng``).
    n_common : int
        Size of the common vocabulary (words ``w0``, ``w1``, ...).
    n_topic_words : int
        Words of each topic (``t<k>x<i>``).
    topic_share, borrow_share : float
        Probabilities that a word is one of the document's own topic words, or of the next topic's.
    length : (int, int)
        Shortest and longest document, in words.
    exponent : float
        Zipf exponent of the common vocabulary.

    Returns
    -------
    docs : list of str
        The documents.
    topics : ndarray of shape (n_docs,)
        Topic of each document, in ``0 … n_topics − 1``.

    See Also
    --------
    load_benchmark : The bundled IDA data sets of the paper.

    Examples
    --------
    >>> from sklearn.feature_extraction.text import TfidfVectorizer
    >>> from linsep.datasets import make_topic_corpus
    >>> docs, topics = make_topic_corpus(200, 3, random_state=0)
    >>> X = TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)
    >>> X.shape[0], sorted(set(topics.tolist()))
    (200, [0, 1, 2])
    """
    if n_topics < 2:
        raise ValueError(f"n_topics must be at least 2, got {n_topics!r}")
    rng = np.random.default_rng(random_state)
    common = 1.0 / np.arange(1, n_common + 1) ** exponent
    topical = 1.0 / np.arange(1, n_topic_words + 1) ** 0.8
    common, topical = common / common.sum(), topical / topical.sum()
    topics = rng.integers(n_topics, size=n_docs)
    lengths = rng.integers(length[0], length[1] + 1, size=n_docs)
    total = int(lengths.sum())
    doc_topic = np.repeat(topics, lengths)
    kind = rng.random(total)
    common_words = rng.choice(n_common, size=total, p=common)
    topic_words = rng.choice(n_topic_words, size=total, p=topical)
    owner = np.where(kind < topic_share, doc_topic, (doc_topic + 1) % n_topics)
    is_topic = kind < topic_share + borrow_share
    vocabulary_common = np.array([f"w{i}" for i in range(n_common)], dtype=object)
    words = np.where(is_topic, np.char.add(np.char.add("t", owner.astype(str)),
                                          np.char.add("x", topic_words.astype(str))).astype(object),
                     vocabulary_common[common_words])
    ends = np.cumsum(lengths)
    docs = [" ".join(words[end - n:end]) for n, end in zip(lengths, ends)]
    return docs, topics
