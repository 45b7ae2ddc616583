"""Rozpoznawanie odwołań w pytaniu: numery jednostek i nazwy aktów."""

from chroma_rag.ingest.acts import KNOWN_ACTS
from chroma_rag.retrieval.references import find_references

FILES = {
    "kodeks-karny-DU-1997-553.pdf": "USTAWA z dnia 6 czerwca 1997 r. Kodeks karny",
    "kodeks-wykroczen-DU-1971-114.pdf": "USTAWA z dnia 20 maja 1971 r. Kodeks wykroczeń",
    "kodeks-cywilny-DU-1964-93.pdf": "USTAWA z dnia 23 kwietnia 1964 r. Kodeks cywilny",
    "prawo-oswiatowe-DU-2017-59.txt": "Ustawa z dnia 14 grudnia 2016 r. Prawo oświatowe",
    "prawo-upadlosciowe-DU-2003-535.txt": "Ustawa z dnia 28 lutego 2003 r. Prawo upadłościowe",
    "prawa-pacjenta-DU-2009-417.pdf": "USTAWA z dnia 6 listopada 2008 r. o prawach pacjenta i Rzeczniku Praw Pacjenta",
    "ochrona-danych-osobowych-DU-1997-883.pdf": "USTAWA z dnia 29 sierpnia 1997 r. o ochronie danych osobowych",
    "konstytucja-DU-1997-483.pdf": "KONSTYTUCJA RZECZYPOSPOLITEJ POLSKIEJ z dnia 2 kwietnia 1997 r.",
    "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf":
        "ROZPORZĄDZENIE MINISTRA ZDROWIA z dnia 21 grudnia 2010 r. w sprawie rodzajów i zakresu dokumentacji medycznej",
}


def find_articles(question: str) -> list[str]:
    """Numery jednostek w postaci zapisanej w bazie: ``23``, ``178a``, ``385^1``, ``§ 6`` (paragraf artykułu,
    jak w „art. 148 § 1”, nie jest osobną jednostką)."""
    return find_references(question, {}).articles


def test_article_and_paragraph_numbers():
    assert find_articles("Co mówi art. 178a k.k. i art 23?") == ["178a", "23"]
    assert find_articles("Artykuł 385^1 kodeksu cywilnego") == ["385^1"]
    assert find_articles("art. 505(1) k.p.c.") == ["505^1"]  # a superscript pasted as "(1)"
    assert find_articles("art. 18^3d i 18³ᵉ k.p.") == ["18^3d", "18^3e"]  # a superscript with a letter
    # the superscript written out, as some commentaries and court rulings do
    assert find_articles("art. 505 ind. 1 k.p.c. i art. 479 indeks 12 kpc") == ["505^1", "479^12"]
    assert find_articles("Jak brzmi § 6 i par. 12?") == ["§ 6", "§ 12"]
    assert find_articles("Ile lat ma artysta? Partia 23 osób.") == []


def test_a_range_of_articles_names_every_unit_in_it():
    """„art. 10–12” (półpauza, dywiz, ze spacjami albo bez) to art. 10, 11 i 12; myślnik przed mniejszą liczbą to
    nie zakres („art. 10 – 3 miesiące”), a bardzo długi zakres to tylko jego krańce."""
    for question in ("art. 10–12 k.k.", "art. 10-12 k.k.", "art. 10 – 12 k.k.", "artykuły 10—12 kodeksu karnego"):
        refs = find_references(question, FILES)
        assert refs.articles == ["10", "11", "12"] and [u.articles for u in refs.units] == [["10", "11", "12"]], (
            question, refs.articles)
    assert find_articles("art. 5–7 i 9 k.c.") == ["5", "6", "7", "9"]
    assert find_articles("Czy z art. 10 – 3 miesiące to dużo?") == ["10"]
    assert find_articles("art. 1–400 k.c.") == ["1", "400"]


def test_qualifiers_with_several_numbers_keep_the_act():
    """„§ 1 i 2”, „ust. 1–3”, „i nast.” między numerem a aktem: odwołanie wciąż wskazuje akt."""
    for question in ("art. 10 § 1 i 2 kw", "art. 10 ust. 2 i 3 k.w.", "art. 10 ust. 1–3 kw", "art. 10 § 1, 2 pkt 3 kw",
                     "art. 10 i nast. k.w.", "art. 10 i n. kw",
                     # the number as a statute heads it ("Art. 10."), a sentence of a paragraph in words
                     "Art. 10. § 1 kw", "art. 10. ust. 2 k.w.", "art. 10 § 1 zdanie drugie kw",
                     "art. 10 § 2 zd. pierwsze k.w."):
        refs = find_references(question, FILES)
        assert [(u.articles, u.files) for u in refs.units] == [(["10"], ["kodeks-wykroczen-DU-1971-114.pdf"])], question
    cited = {"art. 10 § 1 i 2 kw": "§ 1 i 2", "art. 10 §1-3 kw": "§ 1–3", "Art. 10. par. 2 pkt. 3 lit. b) kw":
             "§ 2 pkt 3 lit. b", "art. 10 ust 1,2 kw": "ust. 1, 2", "art. 10 § 1 zdanie drugie kw": "§ 1 zd. drugie",
             "art. 10 i nast. kw": "i nast.", "art. 10 kw": "",
             # after the last of several articles the qualifier is that article's: none for them all
             "art. 10 i 12 § 1 kw": ""}
    for question, subunit in cited.items():
        assert [u.subunit for u in find_references(question, FILES).units] == [subunit], question


def test_a_statute_with_its_date_in_any_form_and_qualifiers_without_dots():
    """Data ustawy bez „dnia” albo cyframi i „ust 2”, „par 1” bez kropki – jak pisze się szybko: ten sam akt, a nie
    zdanie, że aktu „ustawy z dnia 29” nie ma."""
    data_protection = "ochrona-danych-osobowych-DU-1997-883.pdf"
    for question in ("art. 23 ustawy z 29 sierpnia 1997 r. o ochronie danych osobowych",
                     "art. 23 ustawy z dnia 29.08.1997 r. o ochronie danych osobowych",
                     "art. 23 ust 1 ustawy o ochronie danych osobowych"):
        refs = find_references(question, FILES)
        assert [u.files for u in refs.units] == [[data_protection]] and not refs.unknown, (question, refs.unknown)
    assert [u.articles for u in find_references("art. 10 par 2 kw", FILES).units] == [["10"]]


def test_a_statute_named_by_its_date_alone():
    """„art. 23 ustawy z dnia 29 sierpnia 1997 r.” (tak pisze się po pierwszym pełnym przytoczeniu, często
    z publikatorem) to akt z tą datą w tytule; data, której nie ma żaden akt indeksu – zdanie, że aktu nie ma."""
    data_protection = "ochrona-danych-osobowych-DU-1997-883.pdf"
    for question in ("art. 23 ustawy z dnia 29 sierpnia 1997 r.", "Co mówi art. 23 ustawy z 29.08.1997 r.?",
                     "art. 23 ust. 1 ustawy z dnia 29 sierpnia 1997 r. (Dz.U. z 2016 r. poz. 922)",
                     "art. 23 ustawy z 29.08.1997 o ochronie danych osobowych"):
        refs = find_references(question, FILES)
        assert [u.files for u in refs.units] == [[data_protection]] and not refs.unknown, (question, refs.unknown)
    refs = find_references("art. 5 ustawy z dnia 1 stycznia 1990 r.", FILES)
    assert not refs.units and [spelled for spelled, _ in refs.unknown] == ["ustawy z dnia 1 stycznia 1990 r."]


def test_a_date_of_several_acts_names_them_all():
    """6 czerwca 1997 r. uchwalono k.k., k.p.k. i k.k.w.: „art. 5 ustawy z dnia 6 czerwca 1997 r.” to art. 5 jednego
    z nich – szukany w tych aktach, nie we wszystkich (ani nie zdanie, że aktu nie ma)."""
    criminal_procedure = "kodeks-postepowania-karnego-DU-1997-555.txt"
    files = {**FILES, criminal_procedure: "USTAWA z dnia 6 czerwca 1997 r. Kodeks postępowania karnego"}
    refs = find_references("art. 5 ustawy z dnia 6 czerwca 1997 r.", files)
    assert [sorted(u.files) for u in refs.units] == [["kodeks-karny-DU-1997-553.pdf", criminal_procedure]]
    assert not refs.unknown


def test_a_number_in_connection_with_another_takes_its_act():
    """„art. 10 w zw. z art. 12 k.k.”: skrót na końcu obejmuje oba przepisy, w kolejności z pytania."""
    for question in ("art. 10 w zw. z art. 12 k.k.", "art. 10 w związku z art. 12 kodeksu karnego"):
        refs = find_references(question, FILES)
        assert [u.articles for u in refs.units] == [["10", "12"]], question
    refs = find_references("art. 10 k.w. w zw. z art. 12 k.k.", FILES)  # each with its own act
    assert [(u.articles, u.files[0][:8]) for u in refs.units] == [(["10"], "kodeks-w"), (["12"], "kodeks-k")]


def test_an_act_named_without_polish_letters_is_the_same_act():
    """Bez polskich znaków (klawiatura bez nich, telefon): „kodeksu wykroczen”, „ustawy o prawach pacjenta
    i rzeczniku praw pacjenta” – ten sam akt, nie „aktu nie ma w dokumentach”."""
    cases = {"art. 10 kodeksu wykroczen": "kodeks-wykroczen-DU-1971-114.pdf",
             "Co mowi art. 5 ustawy o ochronie danych osobowych?": "ochrona-danych-osobowych-DU-1997-883.pdf",
             "art. 3 ustawy o prawach pacjenta i rzeczniku praw pacjenta": "prawa-pacjenta-DU-2009-417.pdf",
             "art. 148 kodeksu karnego": "kodeks-karny-DU-1997-553.pdf",
             "art. 15 prawa oswiatowego": "prawo-oswiatowe-DU-2017-59.txt",  # nominative in the title
             "art. 57 Prawa upadlosciowego": "prawo-upadlosciowe-DU-2003-535.txt",
             "art. 18 Konstytucji Rzeczypospolitej Polskiej": "konstytucja-DU-1997-483.pdf"}
    for question, expected in cases.items():
        refs = find_references(question, FILES)
        assert [u.files for u in refs.units] == [[expected]] and not refs.unknown, (question, refs.unknown)


def test_a_paragraph_of_a_regulation_with_its_name_is_a_unit_reference():
    """Rozporządzenia dzielą się na paragrafy: „§ 10 ust. 1 rozporządzenia w sprawie dokumentacji medycznej” wskazuje
    § 10 tego rozporządzenia (pełną nazwą, skróconą albo z organem), a „§ 1” w „art. 148 § 1 k.k.” dalej nie jest
    osobną jednostką."""
    regulation = "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf"
    for question in ("§ 10 ust. 1 rozporządzenia w sprawie dokumentacji medycznej",
                     "§ 10 rozporządzenia Ministra Zdrowia w sprawie rodzajów i zakresu dokumentacji medycznej",
                     "§ 10 i 11 rozporządzenia w sprawie dokumentacji medycznej",
                     "par. 10 rozporządzenia o dokumentacji medycznej"):
        refs = find_references(question, FILES)
        assert refs.units and refs.units[0].articles[0] == "§ 10" and refs.units[0].files == [regulation], question
    assert [u.articles for u in find_references("art. 148 § 1 k.k.", FILES).units] == [["148"]]
    assert not find_references("§ 10 regulaminu pracy", FILES).units  # an act the index does not hold: no unit


def test_code_abbreviation_names_the_file():
    refs = find_references("Co grozi z art. 178a k.k.?", FILES)
    assert refs.articles == ["178a"] and refs.files == ["kodeks-karny-DU-1997-553.pdf"]


def test_act_names_in_declined_forms():
    cases = {
        "Kogo ustawa o prawach pacjenta uważa za osobę bliską?": "prawa-pacjenta-DU-2009-417.pdf",
        "Co według ustawy o ochronie danych osobowych jest zbiorem danych?": "ochrona-danych-osobowych-DU-1997-883.pdf",
        "Jak Konstytucja RP określa małżeństwo?": "konstytucja-DU-1997-483.pdf",
        "Za co grozi grzywna według kodeksu wykroczeń?": "kodeks-wykroczen-DU-1971-114.pdf",
        "Czy prawo cywilne chroni przed immisjami?": "kodeks-cywilny-DU-1964-93.pdf",
        "Co mówi rozporządzenie w sprawie dokumentacji medycznej?":
            "rozporzadzenie-dokumentacja-medyczna-DU-2010-1697.pdf",
    }
    for question, expected in cases.items():
        assert find_references(question, FILES).files == [expected], question


def test_no_reference_and_ambiguous_or_unknown_act():
    assert not find_references("Czy lekarz musi mi powiedzieć, co mi dolega?", FILES)
    assert find_references("Co mówi kodeks?", FILES).files == []  # too general: every code matches
    assert find_references("Ile dni urlopu daje kodeks pracy?", FILES).files == []  # not indexed


def test_a_longer_abbreviation_that_starts_like_a_known_one_is_another_act():
    # "p.o.p." (Prawo o prokuraturze) starts as "p.o." (Prawo oświatowe) does, "k.c.k." as "k.c.": an act this
    # index does not hold, not art. 5 of the one it does
    for question, written in {"art. 5 p.o.p.": "p.o.p.", "Co mówi art. 12 k.c.k.?": "k.c.k.",
                              "art. 7 u.o.d.o.w.": "u.o.d.o.w."}.items():
        refs = find_references(question, FILES)
        assert not refs.units and [spelled for spelled, _ in refs.unknown] == [written], question
    # the known abbreviation itself, before a sentence that lacks its space, still names its act
    assert [u.files for u in find_references("art. 5 p.o.Czy obowiązuje?", FILES).units] == [
        ["prawo-oswiatowe-DU-2017-59.txt"]]


def test_customary_abbreviations_of_statutes_beyond_the_shared_library():
    files = {**FILES, "uznk.txt": "Ustawa z dnia 16 kwietnia 1993 r. o zwalczaniu nieuczciwej konkurencji",
             "pe.txt": "Ustawa z dnia 10 kwietnia 1997 r. – Prawo energetyczne"}
    for question, file in {"art. 3 u.z.n.k.": "uznk.txt", "Co mówi art. 11 ust. 2 UZNK?": "uznk.txt",
                           "art. 5 pr. energ.": "pe.txt", "art 5 p.e.": "pe.txt"}.items():
        assert [u.files for u in find_references(question, files).units] == [[file]], question
    refs = find_references("art. 61 u.d.i.p.", files)  # known, not indexed: named in the sentence
    assert not refs.units and refs.unknown[0][1].name == "o dostępie do informacji publicznej"


def test_every_customary_abbreviation_names_one_act():
    keys = [key for act in KNOWN_ACTS for key in act.keys]
    assert len(keys) == len(set(keys)) and len({act.name for act in KNOWN_ACTS}) == len(KNOWN_ACTS)


def test_a_team_document_is_named_by_its_title():
    """Regulamin albo umowa zespołu (tytuł bez daty aktu) – „§ 5 regulaminu pracy zdalnej”, „§ 3 umowy najmu”:
    paragraf tego dokumentu; dokument, którego tytułu nie ma w indeksie, to zdanie, że go nie ma, a zwykłe słowa
    („umowa sprzedaży” w pytaniu o kodeks) nie wybierają umowy zespołu."""
    files = {**FILES, "regulamin.md": "Regulamin pracy zdalnej", "najem.md": "Umowa najmu lokalu mieszkalnego"}
    for question, file, unit in (("§ 5 regulaminu pracy zdalnej", "regulamin.md", "§ 5"),
                                 ("Co mówi § 3 umowy najmu?", "najem.md", "§ 3"),
                                 ("§ 2 ust. 1 Regulaminu pracy zdalnej", "regulamin.md", "§ 2")):
        refs = find_references(question, files)
        assert [(u.articles, u.files) for u in refs.units] == [([unit], [file])], question
    # "regulaminu" or "umowy" alone names no document: a plain search, not a guess and not a refusal
    for question in ("§ 5 regulaminu organizacyjnego", "§ 4 umowy o pracę", "§ 4 umowy"):
        refs = find_references(question, files)
        assert not refs.units and not refs.unknown, question
    assert find_references("Ile dni w tygodniu pozwala regulamin pracy zdalnej?", files).files == ["regulamin.md"]
    for question in ("Czy umowa sprzedaży wymaga formy pisemnej?", "Kiedy umowę najmu można wypowiedzieć?"):
        refs = find_references(question, {**FILES, "regulamin.md": "Regulamin pracy zdalnej"})
        assert not refs.files and not refs.units and not refs.unknown, question


def test_the_act_written_before_the_article():
    """W notatkach prawnik pisze też akt przed przepisem: „KK art. 148 § 1”, „Kodeks wykroczeń, art. 10”."""
    for question, file in {"KK art. 148 § 1": "kodeks-karny-DU-1997-553.pdf",
                           "kw art 10": "kodeks-wykroczen-DU-1971-114.pdf",
                           "Kodeks wykroczeń, art. 10 – kto odpowiada?": "kodeks-wykroczen-DU-1971-114.pdf",
                           "Zgodnie z Kodeksem karnym art. 148 § 1 …": "kodeks-karny-DU-1997-553.pdf",
                           "Konstytucja RP: art. 2": "konstytucja-DU-1997-483.pdf",
                           "p.o. art. 5": "prawo-oswiatowe-DU-2017-59.txt"}.items():
        refs = find_references(question, FILES)
        assert [u.files for u in refs.units] == [[file]], question
    assert find_references("KK art. 148 § 1", FILES).units[0].subunit == "§ 1"
    # the act after the article wins; an act further back, or an ordinary word, names nothing
    assert [u.files for u in find_references("kk art. 10 kw", FILES).units] == [["kodeks-wykroczen-DU-1971-114.pdf"]]
    for question in ("Kodeks karny a art. 10", "Co jest po art. 5?", "Co mówi Kodeks karny? Art. 148"):
        assert not find_references(question, FILES).units, question


def test_a_code_article_without_art():
    """„415 kc”, „148 § 1 kk” – szybki zapis bez „art.”: tylko ze skrótem kodeksu (skrót innej ustawy albo „kw” to
    też jednostki miary i liczebniki: „20 kW”, „5 op.”)."""
    civil, criminal = "kodeks-cywilny-DU-1964-93.pdf", "kodeks-karny-DU-1997-553.pdf"
    cases = {"415 kc": (civil, "415"), "Czy z 415 k.c. można żądać zadośćuczynienia?": (civil, "415"),
             "148 § 1 KK": (criminal, "148"), "178a kk a 87 kw": (criminal, "178a")}
    for question, (file, art) in cases.items():
        refs = find_references(question, FILES)
        assert [(u.articles, u.files) for u in refs.units] == [([art], [file])], question
        assert refs.articles == [art], question
    for question in ("Instalacja 20 kW na dachu", "Ile kosztuje 5 op. leku?", "ust. 2 kc", "art. 5 ust. 2 kc"):
        refs = find_references(question, FILES)
        assert [u.articles for u in refs.units] in ([], [["5"]]) and "2" not in refs.articles, question


def test_a_reference_typed_without_spaces():
    """Szybko pisane, bez spacji: „art.148§1kk”, „art.10ust.2 kw”, „art.415kc” – te same jednostki i akty co ze
    spacjami, z kwalifikatorem w cytacie; litera po numerze to wciąż część numeru („art.178akk”)."""
    civil, criminal, petty = ("kodeks-cywilny-DU-1964-93.pdf", "kodeks-karny-DU-1997-553.pdf",
                              "kodeks-wykroczen-DU-1971-114.pdf")
    cases = {"art.148§1kk": (criminal, "148", "§ 1"), "art.10ust.2 kw": (petty, "10", "ust. 2"),
             "art.10ust2kw": (petty, "10", "ust. 2"), "art.415kc": (civil, "415", ""),
             "Co mówi art.5pkt2 k.c.?": (civil, "5", "pkt 2"),
             "art.10§2pkt1lit.a kw": (petty, "10", "§ 2 pkt 1 lit. a"),
             "art.178akk": (criminal, "178a", ""), "148§1kk": (criminal, "148", "§ 1")}
    for question, (file, art, subunit) in cases.items():
        refs = find_references(question, FILES)
        assert [(u.articles, u.files, u.subunit) for u in refs.units] == [([art], [file], subunit)], question
    # digits and letters of ordinary words stay apart from references: no unit, no article
    for question in ("Instalacja 20kW na dachu", "Kwota 500zł za 2szt."):
        assert not find_references(question, FILES).units, question


def test_a_superscript_pasted_as_a_space_and_its_digits():
    """„art. 449 1 kc” – indeks górny wklejony z PDF-u jako spacja i cyfry tuż przed skrótem aktu albo kwalifikatorem:
    art. 449^1, a nie art. 1 (liczba przed skrótem kodeksu bez „art.”); dwie liczby ze spójnikiem to dalej dwa
    przepisy."""
    civil, criminal = "kodeks-cywilny-DU-1964-93.pdf", "kodeks-karny-DU-1997-553.pdf"
    cases = {"art. 449 1 kc": [(["449^1"], [civil], "")], "Co mówi art. 449 1 § 2 k.c.?": [(["449^1"], [civil], "§ 2")],
             "art. 115 20 kk": [(["115^20"], [criminal], "")], "art. 18 3d kk": [(["18^3d"], [criminal], "")],
             "art. 5 i 7 kc": [(["5", "7"], [civil], "")],
             "art. 148 § 1 kk": [(["148"], [criminal], "§ 1")]}
    for question, units in cases.items():
        refs = find_references(question, FILES)
        assert [(u.articles, u.files, u.subunit) for u in refs.units] == units, question
        assert refs.articles == units[0][0], question


def test_a_qualifier_written_before_the_article():
    """„§ 1 art. 148 kk”, „pkt 2 § 1 art. 10 kw”, „ust. 2 art. 10 ustawy o …” – kwalifikator przed numerem: ten sam
    przepis, w cytacie kwalifikatory w zwykłej kolejności („§ 1 pkt 2”), a „§ 1” nie jest osobnym paragrafem."""
    criminal, petty = "kodeks-karny-DU-1997-553.pdf", "kodeks-wykroczen-DU-1971-114.pdf"
    data = "ochrona-danych-osobowych-DU-1997-883.pdf"
    cases = {"§ 1 art. 148 kk": (criminal, "148", "§ 1"), "pkt 2 § 1 art. 10 kw": (petty, "10", "§ 1 pkt 2"),
             "ust. 2 art. 10 ustawy o ochronie danych osobowych": (data, "10", "ust. 2")}
    for question, (file, art, subunit) in cases.items():
        refs = find_references(question, FILES)
        assert [(u.articles, u.files, u.subunit) for u in refs.units] == [([art], [file], subunit)], question
        assert refs.articles == [art], question
    assert find_references("Co mówi § 1 art. 148 kk?", FILES).alone
    # a qualifier right after an earlier reference stays that reference's
    refs = find_references("art. 10 ust. 2 i art. 12 kc", FILES)
    assert [(u.articles, u.subunit) for u in refs.units] == [(["10", "12"], "")]
    # a qualifier that ends a sentence belongs to what went before, not to the article opening the next one
    for question in ("Zgodnie z tym § 3. Art. 148 kk stanowi o zabójstwie.", "Jak w ust. 2. Art. 148 kk mówi…"):
        refs = find_references(question, FILES)
        assert [(u.articles, u.files, u.subunit) for u in refs.units] == [(["148"], [criminal], "")], question


def test_a_statute_with_its_year_alone_before_its_name():
    """„ustawy z 2008 r. o prawach pacjenta …” – sam rok przed nazwą, jak się często pisze: ten sam akt; sam rok bez
    nazwy to, jak data kilku aktów, akty indeksu z tego roku, a rok bez żadnego – akt, którego indeks nie ma."""
    patients = "prawa-pacjenta-DU-2009-417.pdf"
    for question in ("art. 5 ustawy z 2008 r. o prawach pacjenta i Rzeczniku Praw Pacjenta",
                     "art. 5 ustawy z 2008 r. o prawach pacjenta",
                     "Co mówi art. 5 ustawy z 2008 r. o prawach pacjenta?"):
        refs = find_references(question, FILES)
        assert [(u.articles, u.files) for u in refs.units] == [(["5"], [patients])], question
    refs = find_references("art. 5 ustawy z 1997 r.", FILES)
    assert [sorted(u.files) for u in refs.units] == [["kodeks-karny-DU-1997-553.pdf", "konstytucja-DU-1997-483.pdf",
                                                       "ochrona-danych-osobowych-DU-1997-883.pdf"]]
    refs = find_references("art. 5 ustawy z 1990 r.", FILES)
    assert not refs.units and refs.unknown


def test_articles_joined_by_a_conjunction_share_the_act_named_last():
    """„art. 10 § 1 i art. 12 kw”, „art. 10 ust. 2, art. 12 k.w.”, „art. 10 oraz art. 12 kw”: skrót na końcu obejmuje
    oba przepisy, jak przy „w zw. z”; przepis z własnym aktem go nie oddaje."""
    petty, criminal = "kodeks-wykroczen-DU-1971-114.pdf", "kodeks-karny-DU-1997-553.pdf"
    for question in ("art. 10 § 1 i art. 12 kw", "art. 10 ust. 2, art. 12 k.w.", "art. 10 oraz art. 12 kw",
                     "art. 10 § 2 lub art. 12 k.w."):
        refs = find_references(question, FILES)
        assert [(u.articles, u.files) for u in refs.units] == [(["10", "12"], [petty])], question
    # "art. 5, art. 7 i art. 9 kc": one reference to three articles, each of them read once
    refs = find_references("art. 5, art. 7 i art. 9 kc", FILES)
    assert [(u.articles, u.files) for u in refs.units] == [(["5", "7", "9"], ["kodeks-cywilny-DU-1964-93.pdf"])]
    refs = find_references("art. 5 i art. 7 w zw. z art. 9 kc", FILES)
    assert [(u.articles, u.files) for u in refs.units] == [(["5", "7", "9"], ["kodeks-cywilny-DU-1964-93.pdf"])]
    refs = find_references("art. 148 § 1 k.k. i art. 12 kw", FILES)
    assert [(u.articles, u.files) for u in refs.units] == [(["148"], [criminal]), (["12"], [petty])]
    # more than a conjunction between them: the act after the second is not the first one's
    assert [u.articles for u in find_references("Czy art. 10 stosuje się, a art. 12 kw nie?", FILES).units] == [["12"]]


def test_the_family_code_written_with_its_conjunction():
    """„k.r.i.o.” – rzadszy zapis skrótu Kodeksu rodzinnego i opiekuńczego: ten sam akt (tu spoza indeksu)."""
    for question in ("art. 18 k.r.i.o.", "art. 18 krio"):
        refs = find_references(question, FILES)
        assert [known.short for _, known in refs.unknown if known] == ["k.r.o."], question
