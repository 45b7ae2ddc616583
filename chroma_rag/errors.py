"""Błędy, które użytkownik widzi jako jedno polskie zdanie (CLI nie pokazuje tracebacku)."""

from __future__ import annotations

import errno
import re
from pathlib import PurePath
from typing import Literal
from urllib.parse import urlsplit

from .models import distinct_names

Surface = Literal["cli", "web", "mcp"]
_QUOTED_PATH = re.compile(r"„(/[^”]*)”")


class UserError(Exception):
    """Błąd po stronie danych wejściowych lub środowiska; treść to gotowy komunikat po polsku.

    ``str(exc)`` to zdanie dla CLI (opcje, polecenia ``chroma-rag``). Strona/API i MCP mówią do członka zespołu,
    nie do administratora: ``web`` i ``mcp`` to ich własne zdania, gdy CLI-owe by nie pasowało (``mcp`` bez
    wartości bierze ``web``); ``message(surface)`` wybiera właściwe."""

    exit_code = 1
    kind = "zle_wejscie"  # what went wrong, for a surface's own status code (HTTP), not for the wording

    def __init__(
        self, message: str = "", *, web: str | None = None, mcp: str | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.web = web
        self.mcp = mcp
        if kind is not None:
            self.kind = kind

    def message(self, surface: Surface) -> str:
        """Zdanie dla powierzchni: ``cli`` – wiersz poleceń, ``web`` – strona i JSON API, ``mcp`` – narzędzia MCP."""
        if surface == "mcp" and self.mcp is not None:
            return self.mcp
        if surface in ("web", "mcp") and self.web is not None:
            return self.web
        if surface == "cli":
            return str(self)
        # a sentence written for the operator may name a server path ("Błąd dostępu do pliku „/srv/…/a.md”"):
        # a team member gets the file's name, never the server's folders
        return _QUOTED_PATH.sub(lambda found: f"„{PurePath(found.group(1)).name}”", str(self))


def without_credentials(url: str) -> str:
    """Adres do komunikatów: bez ``użytkownik:hasło@`` (``http://user:secret@host/v1`` → ``http://host/v1``)."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


class UsageError(UserError):
    """Zła wartość opcji albo argumentu, odrzucona przez nasz kod (jak błędy składni click: kod 2)."""

    exit_code = 2


class ServiceError(UserError):
    """Usługa, od której zależy wynik (model czatu, serwer embeddingów, serwer Chromy), zawiodła, odrzuciła
    nasze zapytanie albo jest nieosiągalna – to nie wina pytającego; serwer HTTP odpowiada wtedy 502."""


class UnknownFile(UserError):
    """Nazwa pliku, której nie ma w indeksie; ``suggestions`` – najbliższe nazwy z indeksu. W CLI zła wartość
    opcji (``--plik``) albo argumentu (``pokaz``, ``usun``): kod 2."""

    exit_code = 2
    kind = "nieznany_plik"

    def __init__(self, file: str, suggestions: list[str] | None = None) -> None:
        self.file, self.suggestions = file, list(suggestions or [])
        said = f"W indeksie nie ma pliku „{file}”."
        if self.suggestions:
            said += f" Może chodziło o: {', '.join(self.suggestions)}?"
        super().__init__(
            f"{said} Listę plików pokazuje: chroma-rag lista.",
            web=f"{said} Wybierz plik z listy filtrów.",
            mcp=f"{said} Nazwy plików zwraca narzędzie lista_plikow.",
        )


class UnknownAct(UserError):
    """Akt wskazany nazwą albo skrótem (``art. 5 k.p.k.``, ``--akt kpk``), którego nie ma w indeksie, albo nazwa
    pasująca do kilku aktów (``ambiguous``); ``act`` – znany akt o tym skrócie (``ingest.acts.KnownAct``);
    ``in_filter`` – podany filtrem (``--akt``; zła wartość opcji: kod 2), a nie w pytaniu."""

    kind = "nieznany_akt"

    def __init__(self, spelled: str, act: object | None = None, *, ambiguous: bool = False,
                 in_filter: bool = False) -> None:
        self.spelled, self.act, self.ambiguous = spelled, act, ambiguous
        name = getattr(act, "name", "")
        # a statute's name alone begins "o …": "(ustawa o zwalczaniu nieuczciwej konkurencji)", "(Kodeks morski)"
        shown = f"ustawa {name}" if name.startswith("o ") else f"{name[:1].upper()}{name[1:]}"
        described = f" ({shown})" if name and name.lower() not in spelled.lower() else ""
        if ambiguous:
            said, cli, web = f"„{spelled}” pasuje do kilku aktów", "podaj pełniejszą nazwę albo skrót aktu", ""
        else:
            said = f"Aktu „{spelled}”{described} nie ma w dokumentach"
            cli = "podaj inny akt albo go zaindeksuj" if in_filter else "zapytaj bez tego odwołania albo go zaindeksuj"
            web = "wybierz akt z listy plików" if in_filter else "zapytaj bez tego odwołania"
        if in_filter:
            self.exit_code = 2
        super().__init__(
            f"{said} – {cli}; zaindeksowane akty pokazuje: chroma-rag lista.",
            web=f"{said} – {web or 'podaj pełniejszą nazwę albo skrót aktu'}.",
            mcp=f"{said} – {web or 'podaj pełniejszą nazwę albo skrót aktu'}; akty w dokumentach zwraca narzędzie "
                "lista_plikow.",
        )


class AmbiguousFile(UserError):
    """Nazwa kilku różnych plików (w różnych folderach); ``paths`` – ich pełne ścieżki (w CLI, operatorowi), strona
    i MCP mówią nazwami z folderem, jak w cytatach – bez folderów serwera."""

    kind = "niejednoznaczny_plik"

    def __init__(self, file: str, paths: list[str], cli_example: str) -> None:
        self.file, self.paths = file, list(paths)
        said = f"„{file}” to nazwa kilku różnych plików:"
        named = f"{said} {', '.join(sorted(distinct_names(self.paths).values()))} –"
        super().__init__(
            f"{said} {', '.join(self.paths)} – podaj pełną ścieżkę jednego z nich, np. {cli_example}.",
            web=f"{named} wybierz jeden z nich z listy filtrów albo otwórz go z wyników wyszukiwania.",
            mcp=f"{named} podaj w parametrze „plik” jedną z tych nazw.",
        )


class MissingUnit(UserError):
    """W pliku nie ma jednostki (artykułu, paragrafu) o tym numerze."""

    kind = "brak_jednostki"

    def __init__(self, file: str, art: str) -> None:
        self.file, self.art = file, art
        said = f"W pliku „{file}” nie ma jednostki {art}."
        super().__init__(
            f'{said} Numery jednostek pokazuje: chroma-rag szukaj "…" --plik {file}.',
            web=f"{said} Numery jednostek widać w wynikach wyszukiwania w tym pliku.",
            mcp=f"{said} Numery jednostek pokazuje narzędzie szukaj z parametrem „plik”.",
        )


# the filters that exclude a cited unit, in the words of each surface: (CLI options, the page's choices, MCP parameters)
ExcludingFilters = Literal["files", "kind_or_year"]
_EXCLUDING_FILTERS: dict[str, tuple[str, str, str]] = {
    "files": ("--akt, --plik, --art", "wybrane pliki albo artykuł", "„akt”, „plik”, „art”"),
    "kind_or_year": ("--typ, --rok, --od-roku, --do-roku", "rodzaj albo lata", "„typ”, „rok”, „od_roku”, „do_roku”"),
}


class CitedOutsideFilters(UsageError):
    """Pytanie wskazuje jednostkę z aktem („art 10 kw”), a filtry wykluczają każdą wskazaną: zawężenie do plików albo
    jednostek (``--akt``, ``--plik``, ``--art``) albo rodzaj i lata (``--typ``, ``--rok`` …). Bez tego zdania pierwszy
    byłby artykuł o tym numerze z innego aktu albo inny artykuł, jakby o niego pytano, albo „nic nie znaleziono”,
    jakby takiej jednostki nie było."""

    def __init__(self, cited: str, by: ExcludingFilters = "files") -> None:
        self.cited = cited
        options, choices, parameters = _EXCLUDING_FILTERS[by]
        said = f"Pytanie wskazuje {cited}, a filtry wyszukiwania go wykluczają"
        super().__init__(
            f"{said} ({options}) – zmień je albo zdejmij.",
            web=f"{said} – zmień {choices}, albo zdejmij filtry.",
            mcp=f"{said} (parametry {parameters}) – zmień je albo zdejmij.",
        )


class FiltersMatchNothing(UserError):
    """Same filtry nie pasują do żadnego fragmentu (a nie: nic nie jest dość trafne). Nie jest rzucany: wynik
    z powodem „filtry” pokazuje to zdanie tam, gdzie byłaby odpowiedź."""

    kind = "filtry"

    def __init__(self) -> None:
        super().__init__(
            "Podane filtry (--plik, --typ, --rok, --od-roku, --do-roku, --art) nie pasują do żadnego fragmentu "
            "w indeksie – zmień je albo zdejmij; pliki, ich rodzaje i lata pokazuje: chroma-rag lista.",
            web="Żaden fragment nie spełnia wybranych filtrów – zmień plik, rodzaj, lata albo artykuł, "
                "albo zdejmij filtry.",
            mcp="Żaden fragment nie spełnia podanych filtrów (plik, typ, rok, od_roku, do_roku, art) – zmień je "
                "albo zdejmij; pliki, ich rodzaje i lata zwraca narzędzie lista_plikow.",
        )


class UnreadableFile(UserError):
    """Pliku nie da się przeczytać; indeksowanie pomija go i idzie dalej."""


_OS_REASONS = {
    errno.ENOENT: "nie istnieje",
    errno.EACCES: "brak uprawnień",
    errno.EPERM: "operacja niedozwolona",
    errno.EROFS: "system plików jest tylko do odczytu",
    errno.ENOSPC: "brak miejsca na dysku",
    errno.EDQUOT: "przekroczony limit miejsca na dysku",
    errno.ENOTDIR: "część ścieżki nie jest folderem",
    errno.EISDIR: "to folder, a nie plik",
    errno.EEXIST: "już istnieje i nie jest folderem",
    errno.ENAMETOOLONG: "za długa nazwa",
    errno.ELOOP: "link wskazuje na samego siebie albo tworzy pętlę linków",
    errno.EIO: "błąd wejścia-wyjścia dysku",
    errno.EBUSY: "zasób jest zajęty",
}


def os_reason(exc: OSError) -> str:
    """Przyczyna błędu systemu po polsku (zamiast angielskiego ``strerror``)."""
    if exc.errno in _OS_REASONS:
        return _OS_REASONS[exc.errno]
    name = errno.errorcode.get(exc.errno or 0)
    return f"błąd systemu {name}" if name else f"błąd systemu ({type(exc).__name__})"


def os_error_message(exc: OSError, what: str = "ścieżki") -> str:
    """Jedno zdanie o błędzie systemu plików z nazwą ścieżki."""
    path = exc.filename if exc.filename is not None else "?"
    return f"Błąd dostępu do {what} „{path}”: {os_reason(exc)}."
