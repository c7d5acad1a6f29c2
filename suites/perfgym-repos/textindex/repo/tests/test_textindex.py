import pytest

from textindex import Index, Tokenizer, tokenize
from textindex.postings import PostingList


def test_tokenize_folds_case_stems_and_drops_stopwords():
    assert tokenize("The Cats are RUNNING to the parties") == ["cat", "runn", "party"]
    assert tokenize("") == []
    assert tokenize("don't stop") == ["don't", "stop"]


def test_positions_count_stopwords():
    assert list(Tokenizer().positions("the quick fox")) == [(1, "quick"), (2, "fox")]


def test_and_or_search():
    idx = Index.from_documents(["red apple", "green apple", "red car", "blue sky"])
    assert idx.search("apple") == [0, 1]
    assert idx.search("red apple") == [0]
    assert idx.search("red apple", mode="or") == [0, 1, 2]
    assert idx.search("missing") == []
    assert idx.search("") == []
    with pytest.raises(ValueError):
        idx.search("x", mode="xor")


def test_phrase_search_respects_order_and_gaps():
    idx = Index.from_documents(["new york city", "york new city", "new big york", "new york"])
    assert idx.search('"new york"') == [0, 3]
    assert idx.search('"new of york"') == [2]


def test_repeated_terms_keep_every_position():
    idx = Index.from_documents(["apple apple pie apple"])
    pl = idx._builder.postings["apple"]
    assert pl.positions[0] == [0, 1, 3]
    assert pl.frequency(0) == 3
    assert pl.doc_ids == [0]


def test_out_of_order_ids_stay_sorted():
    idx = Index()
    for doc_id in (5, 2, 9, 0, 7):
        idx.add("shared word", doc_id=doc_id)
    assert idx.postings("shared") == [0, 2, 5, 7, 9]
    assert idx.search("shared word") == [0, 2, 5, 7, 9]
    assert idx.add("later") == 10


def test_positions_added_out_of_order_are_sorted():
    pl = PostingList()
    pl.add(3, 7)
    pl.add(3, 2)
    pl.add(1, 4)
    assert pl.doc_ids == [1, 3] and pl.positions[3] == [2, 7]


def test_duplicate_id_rejected_and_remove():
    idx = Index.from_documents({3: "alpha beta", 1: "beta gamma"})
    with pytest.raises(ValueError):
        idx.add("again", doc_id=3)
    idx.remove(3)
    assert idx.postings("beta") == [1]
    assert "alpha" not in idx.vocabulary
    with pytest.raises(KeyError):
        idx.remove(3)


def test_rank_orders_by_score_then_id():
    idx = Index.from_documents(["cat cat cat", "cat dog", "dog", "cat"])
    ranked = idx.rank("cat")
    assert [d for d, _ in ranked][0] == 0
    assert {d for d, _ in ranked} == {0, 1, 3}
    assert idx.rank("") == []


def test_negative_id_rejected():
    with pytest.raises(ValueError):
        Index().add("x", doc_id=-1)
