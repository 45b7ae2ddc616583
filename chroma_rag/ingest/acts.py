"""Tożsamość aktu z jego tytułu: nazwa, jaką się go cytuje („Kodeks postępowania cywilnego”, „o własności
lokali”, „Prawo bankowe”) i zwyczajowy skrót („k.p.c.”, „u.w.l.”, „pr. bank.”).

Tytuł pochodzi z samego dokumentu (``metadata.detect_title``: pierwsza linia pliku tekstowego, blok tytułowy
PDF-a), więc skrót nie zależy od nazwy pliku. Moduł bez lematów: dopasowanie odwołań w pytaniu (odmiana,
„Kodeksem karnym”, „ustawy o …”) robi ``retrieval.references`` na lematach nazw stąd."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownAct:
    """Akt o zwyczajowym skrócie: ``name`` – nazwa z tytułu, małymi literami, w mianowniku (jak w tytule
    aktu po dacie), ``short`` – skrót pokazywany przy cytacie, ``spellings`` – inne zapisy skrótu."""

    short: str
    name: str
    spellings: tuple[str, ...] = ()
    cited: str = ""  # the abbreviation after a unit when it declines: "art. 23 Konstytucji RP"
    other_names: tuple[str, ...] = ()  # names its title does not give: "art. 45 ustawy zasadniczej"

    @property
    def keys(self) -> tuple[str, ...]:
        """Skrót i jego inne zapisy bez kropek, spacji i wielkości liter („kpc”, „prbank”)."""
        return tuple(dict.fromkeys(abbreviation_key(s) for s in (self.short, *self.spellings)))


# Customary abbreviations of Polish legal writing (codes first). A reference spelled with any of them, with or
# without dots and in any case ("art 90 kc", "art. 148 § 1 KK"), names the act whose title names it.
KNOWN_ACTS = (
    KnownAct("k.c.", "kodeks cywilny"),
    KnownAct("k.p.c.", "kodeks postępowania cywilnego"),
    KnownAct("k.k.", "kodeks karny"),
    KnownAct("k.p.k.", "kodeks postępowania karnego"),
    KnownAct("k.k.w.", "kodeks karny wykonawczy"),
    KnownAct("k.k.s.", "kodeks karny skarbowy"),
    KnownAct("k.w.", "kodeks wykroczeń"),
    KnownAct("k.p.w.", "kodeks postępowania w sprawach o wykroczenia", ("k.p.s.w.",)),
    KnownAct("k.p.", "kodeks pracy"),
    KnownAct("k.p.a.", "kodeks postępowania administracyjnego"),
    KnownAct("k.r.o.", "kodeks rodzinny i opiekuńczy", ("k.r.i.o.",)),
    KnownAct("k.s.h.", "kodeks spółek handlowych"),
    KnownAct("k.m.", "kodeks morski"),
    KnownAct("k. wyb.", "kodeks wyborczy", ("k.wyb.",)),
    KnownAct("Konstytucja RP", "konstytucja rzeczypospolitej polskiej", ("Konstytucja", "Konst.", "Konst. RP"),
             cited="Konstytucji RP", other_names=("ustawa zasadnicza",)),
    KnownAct("p.p.s.a.", "prawo o postępowaniu przed sądami administracyjnymi"),
    KnownAct("o.p.", "ordynacja podatkowa", ("ord. pod.",)),
    KnownAct("pr. bank.", "prawo bankowe", ("pr.bank.",)),
    KnownAct("pr. bud.", "prawo budowlane", ("p.b.", "p.bud.")),  # "art. 48 p.b." is construction law
    KnownAct("p.z.p.", "prawo zamówień publicznych", ("pzp",), other_names=("ustawa o zamówieniach publicznych",)),
    KnownAct("p.u.", "prawo upadłościowe", ("pr. upadł.",)),
    KnownAct("p.r.", "prawo restrukturyzacyjne", ("pr. restr.",)),
    KnownAct("p.o.ś.", "prawo ochrony środowiska"),
    KnownAct("p.w.p.", "prawo własności przemysłowej", other_names=("ustawa o własności przemysłowej",)),
    KnownAct("p.p.m.", "prawo prywatne międzynarodowe", other_names=("ustawa o prawie prywatnym międzynarodowym",)),
    KnownAct("pr. not.", "prawo o notariacie", ("p.n.", "pr. o not.")),
    KnownAct("u.s.p.", "prawo o ustroju sądów powszechnych", ("p.u.s.p.", "pr. o u.s.p.")),
    KnownAct("pr. adw.", "prawo o adwokaturze", ("p.o.a.", "pr. o adw.")),
    KnownAct("p.a.s.c.", "prawo o aktach stanu cywilnego", ("pr. o a.s.c.",)),
    KnownAct("pr. farm.", "prawo farmaceutyczne"),
    KnownAct("pr. pras.", "prawo prasowe"),
    KnownAct("p.r.d.", "prawo o ruchu drogowym", ("PoRD",)),
    KnownAct("pr. spółdz.", "prawo spółdzielcze"),
    KnownAct("pr. łow.", "prawo łowieckie"),
    KnownAct("p.o.", "prawo oświatowe"),
    KnownAct("p.s.w.n.", "prawo o szkolnictwie wyższym i nauce"),
    KnownAct("pr. aut.", "o prawie autorskim i prawach pokrewnych", ("u.p.a.p.p.",), other_names=("prawo autorskie",)),
    KnownAct("u.k.w.h.", "o księgach wieczystych i hipotece"),
    KnownAct("u.g.n.", "o gospodarce nieruchomościami"),
    KnownAct("u.w.l.", "o własności lokali"),
    KnownAct("u.s.g.", "o samorządzie gminnym"),
    KnownAct("u.s.pow.", "o samorządzie powiatowym"),
    KnownAct("u.s.w.", "o samorządzie województwa"),
    KnownAct("u.o.k.k.", "o ochronie konkurencji i konsumentów", other_names=("ustawa antymonopolowa",)),
    KnownAct("u.p.k.", "o prawach konsumenta"),
    KnownAct("u.k.k.", "o kredycie konsumenckim"),
    KnownAct("u.p.d.o.f.", "o podatku dochodowym od osób fizycznych", other_names=("ustawa o pit",)),
    KnownAct("u.p.t.u.", "o podatku od towarów i usług", ("VAT",),
             other_names=("ustawa o vat", "ustawa o podatku vat")),
    KnownAct("u.k.s.c.", "o kosztach sądowych w sprawach cywilnych"),
    KnownAct("u.k.r.s.", "o krajowym rejestrze sądowym", ("u.KRS",)),
    KnownAct("u.o.r.", "o rachunkowości"),
    KnownAct("u.s.u.s.", "o systemie ubezpieczeń społecznych", other_names=("ustawa systemowa",)),
    KnownAct("u.e.r.f.u.s.", "o emeryturach i rentach z funduszu ubezpieczeń społecznych",
             other_names=("ustawa emerytalna",)),
    KnownAct("u.f.p.", "o finansach publicznych"),
    KnownAct("u.p.z.p.", "o planowaniu i zagospodarowaniu przestrzennym",
             other_names=("ustawa o planowaniu przestrzennym", "ustawa o zagospodarowaniu przestrzennym")),
    KnownAct("u.o.p.l.", "o ochronie praw lokatorów, mieszkaniowym zasobie gminy i o zmianie kodeksu cywilnego",
             other_names=("ustawa lokatorska",)),
    KnownAct("u.s.m.", "o spółdzielniach mieszkaniowych"),
    KnownAct("u.z.r.", "o zastawie rejestrowym i rejestrze zastawów"),
    KnownAct("u.z.z.", "o związkach zawodowych"),
    KnownAct("u.k.s.", "o komornikach sądowych"),
    KnownAct("u.k.kom.", "o kosztach komorniczych"),
    KnownAct("u.p.p.f.t.", "o przeciwdziałaniu praniu pieniędzy oraz finansowaniu terroryzmu"),
    KnownAct("u.o.d.o.", "o ochronie danych osobowych"),
    KnownAct("u.p.p.", "o prawach pacjenta i rzeczniku praw pacjenta"),
    KnownAct("u.z.l.", "o zawodach lekarza i lekarza dentysty"),
    KnownAct("u.d.l.", "o działalności leczniczej"),
    KnownAct("u.o.z.p.", "o ochronie zdrowia psychicznego"),
    KnownAct("u.p.e.a.", "o postępowaniu egzekucyjnym w administracji"),
    KnownAct("u.o.p.z.", "o odpowiedzialności podmiotów zbiorowych za czyny zabronione pod groźbą kary"),
    KnownAct("u.r.p.", "o radcach prawnych"),
    KnownAct("u.f.r.", "o fundacji rodzinnej"),
    KnownAct("u.o.c.", "o cudzoziemcach"),
    KnownAct("u.p.i.p.", "o państwowej inspekcji pracy"),
    KnownAct("u.o.l.", "o lasach"),
    KnownAct("u.o.p.", "o policji"),
    KnownAct("KN", "karta nauczyciela", ("k.n.",)),
    # statutes a larger library is likely to hold: recognised when indexed, named when a reference cites them
    # but they are not
    KnownAct("u.z.n.k.", "o zwalczaniu nieuczciwej konkurencji"),
    KnownAct("u.d.i.p.", "o dostępie do informacji publicznej"),
    KnownAct("u.p.o.l.", "o podatkach i opłatach lokalnych"),
    KnownAct("u.p.d.o.p.", "o podatku dochodowym od osób prawnych", other_names=("ustawa o cit",)),
    KnownAct("u.p.c.c.", "o podatku od czynności cywilnoprawnych"),
    KnownAct("u.p.s.d.", "o podatku od spadków i darowizn"),
    KnownAct("u.p.a.", "o podatku akcyzowym"),
    KnownAct("u.d.j.s.t.", "o dochodach jednostek samorządu terytorialnego"),
    KnownAct("u.p.s.", "o pomocy społecznej"),
    KnownAct("u.ś.r.", "o świadczeniach rodzinnych"),
    KnownAct("u.ś.o.z.", "o świadczeniach opieki zdrowotnej finansowanych ze środków publicznych"),
    KnownAct("u.ś.p.", "o świadczeniach pieniężnych z ubezpieczenia społecznego w razie choroby i macierzyństwa",
             other_names=("ustawa zasiłkowa",)),
    KnownAct("u.p.z.i.r.p.", "o promocji zatrudnienia i instytucjach rynku pracy"),
    KnownAct("u.z.f.ś.s.", "o zakładowym funduszu świadczeń socjalnych"),
    KnownAct("u.m.w.", "o minimalnym wynagrodzeniu za pracę"),
    KnownAct("u.z.p.t.", "o zatrudnianiu pracowników tymczasowych"),
    KnownAct("u.r.z.s.", "o rehabilitacji zawodowej i społecznej oraz zatrudnianiu osób niepełnosprawnych"),
    KnownAct("u.s.c.", "o służbie cywilnej"),
    KnownAct("u.p.sam.", "o pracownikach samorządowych"),
    KnownAct("u.s.o.", "o systemie oświaty"),
    KnownAct("u.p.n.", "o postępowaniu w sprawach nieletnich"),
    KnownAct("u.w.r.n.", "o wspieraniu i resocjalizacji nieletnich"),
    KnownAct("u.o.p.n.", "o przeciwdziałaniu narkomanii"),
    KnownAct("u.w.t.p.a.", "o wychowaniu w trzeźwości i przeciwdziałaniu alkoholizmowi"),
    KnownAct("u.p.p.d.", "o przeciwdziałaniu przemocy domowej"),
    KnownAct("u.w.r.s.p.z.", "o wspieraniu rodziny i systemie pieczy zastępczej"),
    KnownAct("u.o.z.o.z.", "o ochronie zabytków i opiece nad zabytkami"),
    KnownAct("u.o.g.r.l.", "o ochronie gruntów rolnych i leśnych"),
    KnownAct("u.o.o.", "o odpadach"),
    KnownAct("u.c.p.g.", "o utrzymaniu czystości i porządku w gminach"),
    KnownAct("u.g.k.", "o gospodarce komunalnej"),
    KnownAct("u.k.u.r.", "o kształtowaniu ustroju rolnego"),
    KnownAct("u.o.z.", "o ochronie zwierząt"),
    KnownAct("u.b.a.", "o broni i amunicji"),
    KnownAct("u.b.i.m.", "o bezpieczeństwie imprez masowych"),
    KnownAct("u.t.d.", "o transporcie drogowym"),
    KnownAct("u.d.p.", "o drogach publicznych"),
    KnownAct("u.o.i.n.", "o ochronie informacji niejawnych"),
    KnownAct("u.r.t.", "o radiofonii i telewizji"),
    KnownAct("u.g.h.", "o grach hazardowych"),
    KnownAct("u.s.d.g.", "o swobodzie działalności gospodarczej"),
    KnownAct("u.d.p.p.w.", "o działalności pożytku publicznego i o wolontariacie"),
    KnownAct("u.u.o.", "o ubezpieczeniach obowiązkowych, ubezpieczeniowym funduszu gwarancyjnym i polskim biurze "
             "ubezpieczycieli komunikacyjnych"),
    KnownAct("u.d.u.r.", "o działalności ubezpieczeniowej i reasekuracyjnej"),
    KnownAct("u.o.i.f.", "o obrocie instrumentami finansowymi"),
    KnownAct("u.u.p.", "o usługach płatniczych"),
    KnownAct("u.ś.u.d.e.", "o świadczeniu usług drogą elektroniczną"),
    KnownAct("u.SN", "o sądzie najwyższym", ("u.s.n.",)),
    KnownAct("u.RPO", "o rzeczniku praw obywatelskich"),
    KnownAct("p.o.p.", "prawo o prokuraturze", ("pr. o prok.",)),
    KnownAct("p.u.s.a.", "prawo o ustroju sądów administracyjnych"),
    KnownAct("p.g.g.", "prawo geologiczne i górnicze"),
    KnownAct("p.g.k.", "prawo geodezyjne i kartograficzne"),
    KnownAct("pr. wod.", "prawo wodne", ("p.w.",)),
    KnownAct("pr. energ.", "prawo energetyczne", ("p.e.",)),
    KnownAct("pr. tel.", "prawo telekomunikacyjne", ("pr. telekom.",)),
    KnownAct("p.k.e.", "prawo komunikacji elektronicznej"),
    KnownAct("pr. przeds.", "prawo przedsiębiorców"),
    KnownAct("pr. lot.", "prawo lotnicze"),
    KnownAct("pr. poczt.", "prawo pocztowe"),
    KnownAct("pr. stow.", "prawo o stowarzyszeniach"),
    KnownAct("pr. dew.", "prawo dewizowe"),
    KnownAct("pr. atom.", "prawo atomowe"),
)

_DATE = r"z\s+dnia\s+\d{1,2}\s+\w+\s+\d{4}\s*r\.?"
# "USTAWA z dnia 23 kwietnia 1964 r. Kodeks cywilny", "Ustawa z dnia … r. - Prawo bankowe",
# "ROZPORZĄDZENIE MINISTRA ZDROWIA z dnia … r. w sprawie …": the name is what follows the date
_NAME_AFTER_DATE = re.compile(r"^[^\n]{0,120}?" + _DATE + r"\s*[-–—:]?\s*(.+)$", re.IGNORECASE | re.DOTALL)
# "KONSTYTUCJA RZECZYPOSPOLITEJ POLSKIEJ z dnia 2 kwietnia 1997 r.": the name comes before it
_NAME_BEFORE_DATE = re.compile(r"^(.+?)\s+" + _DATE + r"\s*$", re.IGNORECASE | re.DOTALL)
_QUOTES = str.maketrans({"„": "", "”": "", "“": "", '"': "", "«": "", "»": ""})


def act_name(title: str) -> str:
    """Nazwa, pod jaką akt się cytuje, wzięta z tytułu: „Kodeks cywilny”, „o własności lokali”,
    „Konstytucja Rzeczypospolitej Polskiej”; pusty napis, gdy tytuł nie ma postaci tytułu aktu."""
    text = " ".join(title.translate(_QUOTES).split()).rstrip(".")
    after = _NAME_AFTER_DATE.match(text)
    name = after.group(1) if after else ""
    if not name:
        before = _NAME_BEFORE_DATE.match(text)
        name = before.group(1) if before and before.group(1).lower().startswith("konstytucja") else ""
    name = name.strip(" -–—").rstrip(".")
    if name.isupper():  # "KODEKS CYWILNY" in a print's title block
        name = name.lower()
    return name[:1].upper() + name[1:] if name and not name.startswith(("o ", "w ")) else name


_MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
           "października", "listopada", "grudnia")
# "z dnia 24 czerwca 1994 r.", "z 24 czerwca 1994", "z dnia 24.06.1994 r.": the date an act is cited by
_ACT_DATE = re.compile(r"\bz\s+(?:dnia\s+)?(\d{1,2})(?:\s+(\w+)\s+|\.(\d{1,2})\.)(\d{4})\b", re.IGNORECASE)


def act_date(text: str) -> tuple[int, int, int] | None:
    """Data aktu (rok, miesiąc, dzień) z pierwszego „z dnia …” w tekście: tytułu albo odwołania."""
    found = _ACT_DATE.search(text)
    if found is None:
        return None
    day, month_name, month_number, year = found.groups()
    month = int(month_number) if month_number else (
        _MONTHS.index(month_name.lower()) + 1 if month_name.lower() in _MONTHS else 0)
    return (int(year), month, int(day)) if 1 <= month <= 12 else None


# a team's own document, named by its title in a question: "§ 5 regulaminu pracy zdalnej", "§ 3 umowy najmu"
TEAM_DOCUMENT_WORDS = ("regulamin", "umowa", "statut", "polityka", "instrukcja", "procedura")
_TEAM_DOCUMENT = re.compile(r"^(?:" + "|".join(TEAM_DOCUMENT_WORDS) + r")\b", re.IGNORECASE)


def cited_name(title: str) -> str:
    """Nazwa, pod jaką pytanie wskazuje dokument: nazwa aktu (``act_name``) albo tytuł regulaminu, umowy …
    zespołu („Regulamin pracy zdalnej”); pusty napis, gdy tytuł nie jest żadnym z nich."""
    text = " ".join(title.split())
    return act_name(title) or (text if _TEAM_DOCUMENT.match(text) else "")


def known_act(title: str) -> KnownAct | None:
    """Akt o zwyczajowym skrócie, którego nazwę podaje tytuł (nowelizacja „o zmianie ustawy – Kodeks …” nim
    nie jest)."""
    return _BY_NAME.get(_name_key(act_name(title)))


def short_name(title: str) -> str:
    """Zwyczajowy skrót aktu („k.p.c.”) albo pusty napis."""
    act = known_act(title)
    return act.short if act else ""


def cited_short_name(title: str) -> str:
    """Skrót aktu, jak stoi po numerze jednostki: „k.p.c.”, „Konstytucji RP”; pusty napis, gdy akt go nie ma."""
    act = known_act(title)
    return (act.cited or act.short) if act else ""


def abbreviation_key(text: str) -> str:
    """Skrót bez kropek, spacji i wielkości liter: „K.P.C.”, „k. p. c.” i „kpc” to ten sam klucz."""
    return re.sub(r"[\s.]", "", text).lower()


def _name_key(name: str) -> str:
    return " ".join(re.sub(r"[,–—-]", " ", name.lower()).split())


_BY_NAME = {_name_key(act.name): act for act in KNOWN_ACTS}
