"""Polecenia indeksu: indeksuj, sprawdz, lista, podglad i usun – zapis plików do bazy, jej spójność i zawartość."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import UserError
from ..ingest.ocr import OcrEngine, OcrSettings
from ..plural import FILE, FRAGMENT, ORPHAN, count
from .completion import complete_indexed_files
from .options import DbOption, DimensionsOption, JsonOption, ModelOption, ServerOption, open_index
from .output import err, out, page_range, print_json, printable, shorten

if TYPE_CHECKING:
    from ..api import Index
    from ..indexing.report import IndexReport

WaitOption = Annotated[
    float,
    typer.Option("--czekaj", metavar="SEKUNDY", help="Ile sekund (co najmniej 0) czekać, gdy bazę blokuje inny proces.",
                 min=0),
]

WatchOption = Annotated[
    bool, typer.Option("--obserwuj", help="Po zaindeksowaniu działaj dalej i utrzymuj indeks zgodny z folderami: "
                       "nowe, zmienione, przeniesione i usunięte pliki trafiają do indeksu (lub znikają) kilka sekund "
                       "po zakończeniu zmian. Ctrl-C kończy.")
]
PollingOption = Annotated[
    bool, typer.Option("--odpytuj", help="Z --obserwuj: sprawdzaj folder co pół sekundy zamiast powiadomień systemu "
                       "– dla udziałów sieciowych (SMB/NFS); dla nich wybierane samo.")
]

# Exit codes of `indeksuj`: all fine / some files skipped / nothing could be indexed.
EXIT_PARTIAL = 3
PREVIEW_TABLE_WIDTH = 120  # narrower, the six columns leave the text too little room: a block per fragment


def index_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="SCIEZKI", help="Pliki lub foldery (PDF, DOCX, ODT, RTF, HTML, TXT, MD).", show_default=False
        ),
    ],
    doc_type: Annotated[
        str | None,
        typer.Option("--typ", metavar="RODZAJ", help="Wymuś rodzaj dokumentu dla wszystkich plików (domyślnie "
                     "rozpoznawany z nazwy i treści każdego pliku).", show_default=False),
    ] = None,
    prune: Annotated[
        bool, typer.Option("--usun-brakujace", help="Usuń z indeksu pliki, których nie ma już w podanych folderach.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--wymus", help="Z --usun-brakujace: pozwól usunąć wszystko z pustego folderu.")
    ] = False,
    wait: WaitOption = 120.0,
    quiet: Annotated[bool, typer.Option("--cicho", help="Bez postępu na stderr (domyślnie postęp widać).")] = False,
    ocr_pages: Annotated[
        int, typer.Option("--ocr-stron", metavar="N", min=0, help="Najwięcej stron skanu jednego pliku do OCR "
                          "w tym przebiegu (kilka sekund każda); dłuższy skan jest pomijany z informacją; 0 – bez "
                          "limitu.")
    ] = OcrSettings().max_pages,
    watch: WatchOption = False,
    polling: PollingOption = False,
    db: DbOption = None,
    model: ModelOption = None,
    dimensions: DimensionsOption = None,
    server: ServerOption = None,
) -> None:
    """Synchronizuje indeks z plikami: nowe i zmienione indeksuje, niezmienione pomija (po hashu).

    Kod wyjścia: 0 – wszystko w porządku, 3 – część plików pominięto, 1 – nic nie dało się zaindeksować
    (z --obserwuj Ctrl-C kończy z kodem 0, a w trakcie zapisu – 130).
    """
    started = time.perf_counter()
    index = open_index(db, model, dimensions, server)
    if watch:
        _watch(index, paths, doc_type, force, wait, polling or None)
        return
    from .progress import progress_for

    with progress_for(err, quiet) as progress:
        report = index.add(
            paths, doc_type=doc_type, progress=progress, prune=prune, force=force, wait=wait,
            on_wait=lambda message: err.print(f"[yellow]{message}[/]"),
            ocr=OcrEngine(settings=OcrSettings(max_pages=ocr_pages)),
        )
    _print_report(report, started)
    if report.skipped and not (report.indexed or report.unchanged):
        raise UserError("Nie udało się zaindeksować żadnego pliku – powody są wypisane wyżej.")
    if report.skipped:
        raise typer.Exit(EXIT_PARTIAL)


def _print_report(report: IndexReport, started: float) -> None:
    for path, reason in report.skipped.items():
        reason = reason.removeprefix(f"{Path(path).name}: ")  # readers' messages start with the file name
        err.print(f"[yellow]Pominięto[/] {escape(printable(path))}: {escape(printable(reason))}")
    for note in report.notes:
        err.print(f"[yellow]Uwaga:[/] {note}")
    if report.indexed:
        table = Table(title="Zaindeksowano")
        for column in ("Plik", "Fragmenty"):
            table.add_column(column, overflow="fold")
        for path, chunks in report.indexed.items():
            table.add_row(Path(path).name, str(chunks))
        out.print(table)
    for old, new in report.moved.items():
        out.print(f"Przeniesiony: {old} → {new}")
    for path, owner in report.same_document.items():
        out.print(f"Ten sam dokument co {owner}: {path} (zapisany jako druga ścieżka, bez nowych fragmentów)")
    for path in report.removed:
        out.print(f"Usunięto z indeksu (brak pliku): {path}")
    if report.orphans_removed:
        out.print(f"Usunięto {count(report.orphans_removed, ORPHAN)} po przerwanym wcześniej zapisie.")
    out.print(
        f"Zaindeksowano: {len(report.indexed)} (fragmentów: {report.chunks}, nowych wektorów: {report.embedded}, "
        f"użytych ponownie: {report.reused}), bez zmian: {len(report.unchanged)}, "
        f"pominięto: {len(report.skipped)}, usunięto: {len(report.removed)}, "
        f"{f'drugich ścieżek tych samych dokumentów: {len(report.same_document)}, ' if report.same_document else ''}"
        f"czas: {time.perf_counter() - started:.1f} s"
    )


def _watch(index: Index, paths: list[Path], doc_type: str | None, force: bool, wait: float,
           polling: bool | None) -> None:
    """Pętla --obserwuj: synchronizacja z usuwaniem brakujących po każdej serii zmian, aż do Ctrl-C."""
    from ..indexing.watch import network_filesystem, watch_folders

    not_folders = [str(p) for p in paths if not p.is_dir()]
    if not_folders:
        raise UserError(f"--obserwuj działa tylko na folderach, a to nie są foldery: {', '.join(not_folders)}.")
    started = [time.perf_counter()]
    syncing = [False]

    def sync() -> IndexReport:
        started[0], syncing[0] = time.perf_counter(), True
        report = index.add(paths, doc_type=doc_type, prune=True, force=force, wait=wait,
                           on_wait=lambda message: err.print(f"[yellow]{message}[/]"))
        syncing[0] = False
        return report

    def on_report(report: IndexReport) -> None:
        if report.indexed or report.removed or report.moved or report.skipped or report.same_document:
            _print_report(report, started[0])
            out.file.flush()  # a long-running watcher's log (stdout to a file) shows each sync as it happens

    auto = polling is None and any(network_filesystem(p) for p in paths)
    mode = "odpytywanie co pół sekundy" if polling or auto else "powiadomienia systemu"
    err.print(f"Obserwuję {', '.join(str(p) for p in paths)} – {mode}{' (udział sieciowy)' if auto else ''}; "
              "Ctrl-C kończy.")
    try:
        watch_folders(paths, sync, polling=polling, ignore=[index.store.path], on_report=on_report,
                      on_error=lambda message: err.print(f"[yellow]Uwaga:[/] {message} Spróbuję przy następnej "
                                                         "zmianie."))
    except KeyboardInterrupt:
        if syncing[0]:  # an interrupted write: the command line's usual Ctrl-C message and exit code 130
            raise
        err.print("Zakończono obserwowanie; indeks jest zgodny z folderami.")


def check_command(
    repair: Annotated[bool, typer.Option(
        "--napraw", help="Napraw, co się da (sieroty, niepełne pliki, fragmenty zgubione przez Chromę).")] = False,
    wait: WaitOption = 120.0,
    as_json: JsonOption = False,
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Sprawdza spójność bazy: rejestr plików a fragmenty, każdy fragment odnajdywalny po własnym wektorze."""
    report = open_index(db, server=server).check(repair=repair, wait=wait)
    if as_json:
        print_json({
            "ok": report.ok, "pliki": report.files, "fragmenty": report.chunks, "sieroty": len(report.orphans),
            "niepelne": report.incomplete, "nieodnajdywalne": report.unfindable,
            "brak_na_dysku": report.missing_on_disk, "stara_wersja_ciecia": report.old_chunker,
            "naprawiono": report.repaired,
        })
    else:
        for action in report.repaired:
            out.print(f"Naprawa: {action}")
        for path in report.missing_on_disk:
            out.print(f"Brak na dysku: {path} (usuń z indeksu: chroma-rag indeksuj FOLDER --usun-brakujace)")
        if report.old_chunker:
            old = count(len(report.old_chunker), FILE)
            err.print(f"[yellow]Uwaga:[/] {old} pocięto starą wersją – zaindeksuj ponownie.")
        out.print(
            f"Plików: {report.files}, fragmentów: {report.chunks}, sierot: {len(report.orphans)}, "
            f"niepełnych plików: {len(report.incomplete)}, nieodnajdywalnych fragmentów: {len(report.unfindable)}, "
            f"brak na dysku: {len(report.missing_on_disk)}."
        )
    if not report.ok:
        raise UserError("Baza jest niespójna – uruchom: chroma-rag sprawdz --napraw, potem indeksuj ponownie.")
    if not as_json:
        out.print("[green]Baza jest spójna.[/]")


def list_command(as_json: JsonOption = False, db: DbOption = None, server: ServerOption = None) -> None:
    """Wypisuje zaindeksowane pliki pogrupowane według rodzaju, z nazwą aktu, skrótem, rokiem i liczbą fragmentów."""
    from .listing import print_files

    infos = open_index(db, server=server).files()
    if as_json:
        print_json([info.to_json() for info in infos])
        return
    print_files(infos)


def preview_command(
    path: Annotated[
        Path, typer.Argument(metavar="PLIK", help="Plik PDF, DOCX, ODT, RTF, HTML, TXT lub MD.", show_default=False)
    ],
    as_json: JsonOption = False,
) -> None:
    """Pokazuje, jak plik zostanie pocięty (bez embeddingu i bez bazy)."""
    from ..ingest.preview import preview

    rows = preview(path)
    if as_json:
        print_json(rows)
        return
    title = f"{path.name}: {count(len(rows), FRAGMENT)}"
    described = [(row, _preview_notes(row)) for row in rows]
    if out.width < PREVIEW_TABLE_WIDTH:  # six columns at 80 leave the text ~15 characters: a block per fragment
        out.print(escape(title), soft_wrap=True, highlight=False)
        for row, notes in described:
            facts = [f"art. {row['art']}" if row["art"] else "–", f"str. {page_range(row)}",
                     f"część {row['fragment']}", row["rozdzial"][-60:], notes]
            out.print()
            out.print(escape(shorten(" · ".join(f for f in facts if f), out.width)), highlight=False)
            text = textwrap.fill(shorten(row["tekst"], 2 * (out.width - 2)), out.width, initial_indent="  ",
                                 subsequent_indent="  ")
            out.print(escape(text), soft_wrap=True, highlight=False)
        return
    table = Table(title=title)
    for column in ("Art.", "Strony", "Część", "Rozdział", "Uwagi", "Tekst"):
        table.add_column(column, overflow="fold")
    for row, notes in described:
        table.add_row(row["art"] or "–", page_range(row), str(row["fragment"]), row["rozdzial"][-60:], notes,
                      shorten(row["tekst"], 120))
    out.print(table)


def _preview_notes(row: dict) -> str:
    return ", ".join(
        note
        for note in (
            "uchylony" if row.get("uchylony") else "",
            f"wersja {row['wersja']}" if row.get("wersja") else "",
            f"zmienia: {row['akt_zmieniany']}" if row.get("akt_zmieniany") else "",
            f"załącznik {row['zalacznik']}" if row.get("zalacznik") else "",
        )
        if note
    )


def remove_command(
    name: Annotated[
        str, typer.Argument(metavar="NAZWA", help="Nazwa pliku, jak w `chroma-rag lista`.", show_default=False,
                            autocompletion=complete_indexed_files)
    ],
    db: DbOption = None,
    server: ServerOption = None,
) -> None:
    """Usuwa z indeksu wszystkie fragmenty jednego pliku."""
    index = open_index(db, server=server)
    name = index.indexed_file(name)
    removed = index.remove(name)
    if removed:
        out.print(f"Usunięto {count(removed, FRAGMENT)} pliku {name}.")
    else:
        out.print(f"Usunięto z indeksu ścieżkę {name}; ten sam dokument zostaje pod inną ścieżką (chroma-rag lista).")
