from scholargraph.text.lexical import TERM_SYMBOLS, lexical_terms, query_terms_lexical


def test_symbols_survive_whole():
    terms = lexical_terms("IL-6 and BRCA1 carriers (P<0.05; F1 = 0.91), SARS-CoV-2, Ca2+ influx")
    for t in ("il-6", "brca1", "p<0.05", "f1", "0.91", "sars-cov-2", "ca2+"):
        assert t in terms, t


def test_compounds_also_give_their_parts_and_glued_form():
    terms = lexical_terms("IL-6")
    assert {"il-6", "il6", "il", "6"} <= set(terms)
    assert "il6" in lexical_terms("IL6")  # so IL6 finds IL-6
    assert {"graph-based", "graph"} <= set(lexical_terms("graph-based"))
    assert "graphbased" not in lexical_terms("graph-based")  # glued only when a part has a digit


def test_comparisons_in_any_spacing_and_unicode():
    assert "p<0.05" in lexical_terms("p < 0.05")
    assert "p<=.05" in lexical_terms("P ≤ .05")
    assert "n=12" in lexical_terms("n = 12 mice")


def test_words_are_folded_stemmed_and_stopwords_dropped():
    assert lexical_terms("The Mutations were signalling") == ["mutat", "signal"]
    assert lexical_terms("Alzheimer's") == lexical_terms("Alzheimer")
    assert lexical_terms("of the and") == []


def test_dashes_are_one_hyphen():
    assert "il-6" in lexical_terms("IL\u20136") and "il-6" in lexical_terms("IL\u20116")


def test_terms_hold_only_characters_a_whitespace_index_keeps():
    allowed = set(TERM_SYMBOLS)
    for t in lexical_terms("x_y (a) [b] {c} 'quote' \"d\" e:f g;h ~i~ #j @k α-helix µM 3.5% TNF-α/β"):
        assert t and all(ch.isalnum() or ch in allowed for ch in t), t


def test_query_terms_are_distinct_in_order():
    assert query_terms_lexical("IL-6 and IL-6 levels") == ["il-6", "il6", "il", "6", "level"]
