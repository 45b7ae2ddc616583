from chroma_rag.filters import SearchFilters, article_key, build_where, normalize_article


def test_no_filters_only_hides_repealed_units():
    assert build_where(SearchFilters()) == {"uchylony": {"$ne": True}}
    assert build_where(SearchFilters(include_repealed=True)) is None


def test_single_condition_stays_top_level_key():
    where = build_where(SearchFilters(files=["a.pdf"], include_repealed=True))
    assert where == {"plik": "a.pdf"}


def test_combination_goes_under_and_with_int_years():
    where = build_where(
        SearchFilters(files=["a.pdf", "b.pdf"], types=["ustawa"], year_from=2000, year_to=2010, year=2009)
    )
    assert where == {
        "$and": [
            {"plik": {"$in": ["a.pdf", "b.pdf"]}},
            {"typ": "ustawa"},
            {"rok": 2009},
            {"rok": {"$gte": 2000}},
            {"rok": {"$lte": 2010}},
            {"uchylony": {"$ne": True}},
        ]
    }


def test_article_forms_are_normalised():
    assert [normalize_article(a) for a in ("385^1", "385¹", "385[1]", "Art. 178A", "§6", "par. 3", "23.")] == [
        "385^1", "385^1", "385^1", "178a", "§ 6", "§ 3", "23"
    ]
    assert article_key("§ 6") == article_key("6")
    # a superscript pasted from a web page as "(1)" right after the number; "art. 5 (1)" apart is not one
    assert [normalize_article(a) for a in ("505(1)", "art. 505(1)", "5 (1)")] == ["505^1", "505^1", "5 (1)"]
    # a superscript with a letter: art. 18³ᵈ of the labour code
    assert {normalize_article(a) for a in ("18^3d", "18³ᵈ", "18[3d]", "18(3d)", "art. 18^3D")} == {"18^3d"}
    # a superscript pasted from a PDF as a space and its digits, as find_references reads it in a question:
    # a unit filter holds one unit, so the second number is no list
    assert [normalize_article(a) for a in ("22 1", "art. 22 1", "18 3d", "art. 22 1 § 2", "5 7 9")] == [
        "22^1", "22^1", "18^3d", "22^1", "5 7 9"
    ]


def test_article_filter_matches_articles_and_paragraphs():
    where = build_where(SearchFilters(articles=["6"], include_repealed=True))
    assert where == {"art": {"$in": ["6", "§ 6"]}}
    # "--art '22 1'" pasted from a PDF: art. 22^1, not a unit nobody has
    where = build_where(SearchFilters(articles=["art. 22 1"], include_repealed=True))
    assert where == {"art": "22^1"}
