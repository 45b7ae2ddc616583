"""Kalibracja wyszukiwania w jednym miejscu: próg „nic trafnego”, jego podbicie przy planie bez dokumentów,
wagi fuzji (pytania i planu) i bramki rang. Wartości wybiera ``bench/planning.py`` walidacją krzyżową po aktach
na wszystkich zbiorach dev (docs/BENCHMARKS.md); produkt używa ``DEFAULT_CALIBRATION``. Moduł lekki (bez
Chromy i modelu), żeby pomoc CLI mogła z niego czytać."""

from __future__ import annotations

from dataclasses import dataclass, field

# the threshold lives in ``config`` (the shared base layer may not import ``retrieval``), which the settings
# help prints; the calibration takes it from there so the number is written once
from ..config import DEFAULT_THRESHOLD


@dataclass(frozen=True)
class FusionSettings:
    """Parametry fuzji: nogi pytania dostrojone ``bench/quality.py``, listy planu ``bench/planning.py``."""

    rrf_k: int = 60
    vector_weight: float = 1.0
    keyword_weight: float = 1.5
    reference_weight: float = 1.0
    # An act the question names ("Zgodnie z Kodeksem karnym") adds its own keyword ranking beside its vector one,
    # as the whole index has both legs. Dev, 11 PDFs: egzaminy-dev hit@5 0.936 → 0.941, MRR 0.854 → 0.869, lay sets
    # unchanged (docs/BENCHMARKS.md, "Biblioteka"); a switch, not a tuned number.
    reference_keywords: bool = True
    # The act the question names also gets two graded lists (``FusionList.shares``: first place scaled by the
    # share of the question a fragment holds). Phrases: of all its fragments, those holding pairs of the
    # question's adjacent words side by side, at most ``phrase_window`` lemmas apart (share of the pairs' IDF);
    # quotes: those holding a run of at least ``quote_min_words`` consecutive question words, function words
    # included (share of the question's IDF) – an exam stem repeats its provision's words ("świadkami nie mogą
    # być", one content word and no pair). The act's own title words form neither. Window 2 and run 3 fixed
    # beforehand; weights by act-wise cross-validation over phrase {0, 2, 3, 4, 6} × quote {0, 1, 2, 4, 6} on the
    # library's dev sets: 74 of 77 folds chose 4 / 4 (cross-validated: egzaminy-dev hit@5 0.974, MRR 0.921;
    # egzaminy-biblioteka-dev 0.951, MRR 0.906). Library, 77 documents, against the ranked phrase list (weight 3)
    # before: egzaminy-dev hit@5 0.972 → 0.974, MRR 0.898 → 0.921; egzaminy-biblioteka-dev 0.942 → 0.951, MRR
    # 0.882 → 0.911; lay sets unchanged (bench/biblioteka_pomysly.py, docs/BENCHMARKS.md, "Warianty rankingu
    # w bibliotece").
    phrase_weight: float = 4.0
    phrase_window: int = 2
    quote_weight: float = 4.0
    quote_min_words: int = 3
    depth: int = 50
    one_per_unit: bool = True
    # Planned search (``Plan``): each planned query, the hinted documents and the hinted units add lists to
    # the question's own (those count ``question_weight`` times). Chosen leave-one-out on the dev set.
    question_weight: float = 1.0
    query_weight: float = 1.0
    document_weight: float = 1.0
    unit_weight: float = 2.0
    # RRF constant of the planned lists: a statute-worded query ranks the answering unit first, so its top
    # places must count more than breadth across many lists (k 60 let a fragment ranked 3rd everywhere win)
    plan_rrf_k: int = 5
    # Plan hints are judged by rank, not by a similarity margin (e5 similarities of a colloquial question sit
    # in a narrow band): a planned list whose evidence the question itself ranks within the first
    # ``query_gate`` of all fragments (a planned query's first fragment) or ``unit_gate`` of the hinted files'
    # fragments (the hinted units' best) agrees with the question and counts whole. On the dev plans a right
    # plan's unit is within the first 10 % of its files for 85 of 98, a wrong plan's for 5 of 98 (none below
    # 6 %); a right query's first fragment within the first 2 % for 103 of 118, a wrong one's for 6 (each of
    # them of the right act). ``query_gate`` also admits a query whose first fragment is within that share of
    # the hinted files alone (in the civil code 1.5 % is 15 places, 2 % of all fragments 67). Act-wise
    # cross-validation chose ``query_gate`` 0.02 for every act; ``unit_gate`` 0.05 and 0.1 tie within an MRR
    # of one question's place there and the chooser takes the cautious one (bench/planning.py, BENCHMARKS).
    unit_gate: float = 0.05
    query_gate: float = 0.02
    # A planned query of a plan that names files must also rank high within them: its first fragment there,
    # among their fragments, within ``hinted_gate``. In pytania-dev the questions come in pairs about one act,
    # so a neighbour's query passes ``query_gate`` (dev, per planned query: right plans 164 of 225 within 2 %
    # of all fragments, swapped 7 – 6 of them of pytania-dev, 5 of the same act); within the named files a
    # swapped query is within 10 % for 24 of 219, a right one for 171 (both gates: pytania-dev right 35 of 53,
    # swapped 2; potoczne-dev 123 of 172 and 1). Working script on the product's lists, docs/BENCHMARKS.md.
    hinted_gate: float = 0.1
    # A list that does not agree keeps the earlier sieves of similarity to the question: a planned query less
    # similar to it than its own best fragment (``query_margin``) drops out whole, the rest keep only fragments
    # within ``plan_margin`` of that best one and count ``disagreement_weight`` times the share of their head
    # that is left – a wrong plan brings lists that agree with one another and would outvote the question's.
    query_margin: float = 0.0
    plan_margin: float = 0.06
    disagreement_weight: float = 1.0
    # A plan none of whose queries and units the question ranks within ``support_gate`` (the best of their
    # percentiles above) is taken for another question's plan: its lists outside the gates count
    # ``unsupported_weight`` times (0: not at all). Dev: every right plan but one (117 of 118) has some evidence
    # within 30 %, swapped plans of pytania-dev only 16 of 25, of potoczne-dev 43 of 93; a kept wrong unit
    # list otherwise outranked the question's own first fragments (art. 144 k.c. with the plan of art. 426).
    unsupported_weight: float = 0.0
    support_gate: float = 0.3
    # How many first fragments of a disagreeing planned list show whether it is on the question's subject (the
    # share of them within ``plan_margin`` scales the list): the question's own top 10, as ``ocena`` reports
    # hit@10; chosen with the sieves of 0c2fbc1 (leave-one-out on the dev plans), not tuned since.
    agreement_depth: int = 10

    def weight(self, source: str) -> float:
        """Waga listy fuzji według jej źródła (``FusionList.source``)."""
        base = {
            "slowa": self.keyword_weight,
            "wektor": self.vector_weight,
            "odwolanie": self.reference_weight,
            "frazy": self.phrase_weight,
            "cytat": self.quote_weight,
            # a unit the question names ("art. 3 ustawy o …") counts as much as being first in both legs
            "jednostka": self.vector_weight + self.keyword_weight,
        }
        kind, _, origin = source.partition("/")
        if origin == "pytanie":  # scaling every list alike leaves an unplanned ranking unchanged
            return self.question_weight * base[kind]
        if origin == "plan":
            return self.query_weight * base.get(kind, 1.0)
        if origin == "dokumenty":
            return self.document_weight * base.get(kind, 1.0)
        return self.unit_weight




@dataclass(frozen=True)
class Calibration:
    """Wszystkie liczby, od których zależy ranking i odmowa: próg pewności (``search.confidence``), podbicie
    progu, gdy plan nie wskazał żadnego dokumentu, i parametry fuzji (wagi list, bramki rang)."""

    threshold: float = DEFAULT_THRESHOLD
    # a plan with ``dokumenty: []`` is the planner saying no file answers: demand more of the best hit
    refusal_bump: float = 0.05
    # the plan's unit first after fusion keeps the answer from "nic trafnego" only when the question itself
    # ranks it within this share of the hinted files' fragments: an outside question given a wrong plan ranks
    # the named unit anywhere (dev: wrong plans' units median 0.45), a colloquial question its right unit
    # mostly within the first 5 %, a few as low as 15 % (art. 27 of the patients' act for "papiery ze szpitala")
    confirm_gate: float = 0.2
    # A weak best hit is refused only if the question's words (IDF-weighted) are not all covered by this many first
    # results: dev, pytania-dev – the three outside questions and the weakest answered one differ there (da9cb93,
    # docs/historia/POMIARY.md, "Próg").
    coverage_depth: int = 3
    fusion: FusionSettings = field(default_factory=FusionSettings)


DEFAULT_CALIBRATION = Calibration()
DEFAULT_FUSION = DEFAULT_CALIBRATION.fusion
