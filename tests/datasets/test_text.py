"""The generated topic corpus: reproducible, documents of the stated lengths, the stated topics."""

import numpy as np
import pytest

from linsep.datasets import make_topic_corpus


def test_same_seed_same_corpus_and_lengths_in_range():
    docs, topics = make_topic_corpus(50, 4, random_state=3, length=(5, 9))
    again, topics_again = make_topic_corpus(50, 4, random_state=3, length=(5, 9))
    assert docs == again and np.array_equal(topics, topics_again)
    assert all(5 <= len(doc.split()) <= 9 for doc in docs)
    assert set(topics.tolist()) <= {0, 1, 2, 3}


def test_topic_words_belong_to_the_topic_or_its_neighbour():
    docs, topics = make_topic_corpus(200, 3, random_state=0, borrow_share=0.0)
    for doc, topic in zip(docs, topics):
        owners = {int(word[1:word.index("x")]) for word in doc.split() if word.startswith("t")}
        assert owners <= {int(topic)}


def test_one_topic_is_refused():
    with pytest.raises(ValueError, match="n_topics"):
        make_topic_corpus(10, 1)
