"""OCR stron PDF bez warstwy tekstowej (skanów): Tesseract z modelem polskim, strona po stronie.

Strona jest renderowana przez PDFium (pypdf nie rysuje stron) do obrazu w skali szarości i podawana programowi
``tesseract`` na standardowe wejście. Tekst każdej odczytanej strony trafia od razu do pamięci na dysku (skrót
treści pliku + numer strony), więc ponowne wczytanie – następny przebieg, inny model, przebieg wznowiony po
Ctrl-C – bierze go stamtąd zamiast OCR-ować jeszcze raz."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile

INSTALL_HINT = "zainstaluj Tesseract z modelem polskim (apt-get install tesseract-ocr tesseract-ocr-pol)"


@dataclass(frozen=True)
class OcrSettings:
    """Liczby OCR dobrane pomiarem (bench/ocr.py, docs/BENCHMARKS.md)."""

    # Tesseract's documentation asks for ≥300 dpi. bench/ocr.py: CER 0.034 at 300 and at 200, units found 95 % and
    # 97 % of 88 (a sample too small to tell them apart), 2–4 s a page on one core of the shared machine.
    dpi: int = 300
    # A page with fewer non-space characters than this in its text layer, and with an image, is a scan. The 11
    # shared statutes have ≥225 on every text page; 5 annex pages of the medical-records regulation carry 33–49
    # (journal header and "Załącznik nr N WZÓR" over a scanned form) and stay text pages.
    min_text_chars: int = 20
    language: str = "pol"
    # One page takes seconds; a page still running after this is an engine stuck on a broken image.
    page_timeout_s: float = 300.0
    # Pages of one file to OCR in a run (0: no limit). At 2–4 s a page (bench/ocr.py) 200 pages take 7–13 minutes on
    # 2 cores; a scanned binder of 500 would hold every other file of the run (and the watched folder) for half an
    # hour, so it is skipped with a sentence saying how to index it on its own (indeksuj PLIK --ocr-stron N).
    max_pages: int = 200


# (file, pages done, pages of this file to OCR, the page's text came from the cache rather than the engine)
PageDone = Callable[[Path, int, int, bool], None]


@dataclass(frozen=True)
class OcrEngine:
    """Program OCR (``command``: nazwa w PATH albo ścieżka) i jego ustawienia."""

    command: str = "tesseract"
    settings: OcrSettings = field(default_factory=OcrSettings)

    def missing(self) -> str | None:
        """Czego brakuje do OCR (zdanie „zainstaluj …”), ``None``, gdy program i model języka są."""
        if shutil.which(self.command) is None:
            return INSTALL_HINT
        try:
            listed = subprocess.run([self.command, "--list-langs"], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return INSTALL_HINT
        language = self.settings.language
        if language not in listed.stdout.decode("utf-8", "replace").split():
            return f"zainstaluj model języka „{language}” Tesseracta (apt-get install tesseract-ocr-{language})"
        return None

    def recognize(self, grayscale: bytes, width: int, height: int) -> str:
        """Tekst jednej strony z obrazu 8-bitowego w skali szarości (wiersz po wierszu, ``width`` × ``height``)."""
        # PGM (a header and the raw pixels) is read by Tesseract's image library straight from stdin: no temp file
        image = f"P5 {width} {height} 255\n".encode() + grayscale
        settings = self.settings
        # Tesseract's OpenMP threads fight the embedding model for the 2 cores: 12 s a page instead of 2 s measured
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        done = subprocess.run(
            [self.command, "stdin", "stdout", "-l", settings.language, "--dpi", str(settings.dpi)],
            input=image, capture_output=True, env=env, timeout=settings.page_timeout_s, check=False,
        )
        if done.returncode != 0:
            raise OSError(done.stderr.decode("utf-8", "replace").strip() or f"kod {done.returncode}")
        return done.stdout.decode("utf-8", "replace")


class PageCache:
    """Tekst stron odczytanych OCR w folderze ``folder``: ``<skrót pliku>-<język>-<dpi>/<strona>.txt``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, file_hash: str, settings: OcrSettings, page: int) -> Path:
        return self.folder / f"{file_hash}-{settings.language}-{settings.dpi}" / f"{page}.txt"

    def get(self, file_hash: str, settings: OcrSettings, page: int) -> str | None:
        try:
            return self._path(file_hash, settings, page).read_text(encoding="utf-8")
        except OSError:
            return None

    def put(self, file_hash: str, settings: OcrSettings, page: int, text: str) -> None:
        """Zapis przez plik tymczasowy i zmianę nazwy: Ctrl-C w trakcie nie zostawia uciętej strony."""
        path = self._path(file_hash, settings, page)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, suffix=".tmp",
                                             delete=False) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        except OSError:
            return  # the cache only saves time: a full disk or a read-only folder must not stop reading the file


@dataclass
class Ocr:
    """OCR stron jednego przebiegu: program, pamięć odczytanych stron (``None`` – bez pamięci) i powiadomienie
    o każdej gotowej stronie (z wątku, który czyta plik)."""

    engine: OcrEngine = field(default_factory=OcrEngine)
    cache: PageCache | None = None
    on_page: PageDone | None = None

    def scanned_pages(self, path: Path, text_chars: list[int]) -> list[int]:
        """Numery stron (od 0) bez warstwy tekstowej – mniej niż ``min_text_chars`` znaków – z obrazem."""
        few = [i for i, chars in enumerate(text_chars) if chars < self.engine.settings.min_text_chars]
        if not few:
            return []
        import pypdfium2 as pdfium

        with _opened(path) as pdf:
            images = (pdf[i].get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE]) for i in few)
            return [i for i, found in zip(few, images, strict=True) if next(found, None) is not None]

    def read(self, path: Path, pages: list[int]) -> dict[int, str]:
        """Tekst stron ``pages`` (od 0): z pamięci albo z OCR, każda odczytana strona od razu zapamiętana.
        Brak programu OCR, zepsuty obraz strony – ``UnreadableFile`` z jednym zdaniem."""
        if not pages:  # a text PDF: neither hashed nor opened again
            return {}
        settings = self.engine.settings
        file_hash = _file_hash(path) if self.cache else ""
        known = {i: self.cache.get(file_hash, settings, i + 1) for i in pages} if self.cache else {}
        texts: dict[int, str] = {}
        with _opened(path) as pdf:
            if any(known.get(i) is None for i in pages) and (missing := self.engine.missing()):
                raise UnreadableFile(f"{path.name}: {_scans(pages, len(pdf))} – do odczytania potrzebny jest OCR: "
                                     f"{missing}.")
            unread = sum(known.get(i) is None for i in pages)
            if settings.max_pages and unread > settings.max_pages:
                raise UnreadableFile(
                    f"{path.name}: {_scans(pages, len(pdf))} – to {unread} stron OCR (kilka sekund każda), więcej niż "
                    f"{settings.max_pages} naraz; zaindeksuj go osobno: chroma-rag indeksuj PLIK --ocr-stron "
                    f"{unread}.")
            for done, index in enumerate(pages, start=1):
                text = known.get(index)
                if text is None:
                    text = self._recognize(path, pdf, index)
                    if self.cache:
                        self.cache.put(file_hash, settings, index + 1, text)
                texts[index] = text
                if self.on_page:
                    self.on_page(path, done, len(pages), known.get(index) is not None)
        return texts

    def _recognize(self, path: Path, pdf, index: int) -> str:
        import pypdfium2 as pdfium

        try:
            bitmap = pdf[index].render(scale=self.engine.settings.dpi / 72, grayscale=True)
            pixels = bitmap.to_numpy()
            return self.engine.recognize(pixels.tobytes(), pixels.shape[1], pixels.shape[0])
        except subprocess.TimeoutExpired as exc:
            raise UnreadableFile(f"{path.name}: OCR strony {index + 1} trwał ponad "
                                 f"{self.engine.settings.page_timeout_s:.0f} s – obraz strony jest chyba uszkodzony."
                                 ) from exc
        except (OSError, pdfium.PdfiumError) as exc:
            raise UnreadableFile(f"{path.name}: nie da się odczytać obrazu strony {index + 1} (OCR) – skan jest "
                                 "chyba uszkodzony; zeskanuj stronę ponownie.") from exc


@contextmanager
def _opened(path: Path) -> Iterator[Any]:
    """Dokument PDFium zamykany po użyciu; błąd otwarcia jako ``UnreadableFile``."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise UnreadableFile(f"{path.name}: uszkodzony PDF, nie da się narysować stron do OCR.") from exc
    try:
        yield pdf
    finally:
        pdf.close()


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:32]


def _scans(pages: list[int], total: int) -> str:
    if len(pages) == total:
        return "PDF nie ma warstwy tekstowej (skan)"
    return f"{len(pages)} z {total} stron PDF to skany bez warstwy tekstowej"


# Tesseract's Polish model reads the paragraph sign opening a unit as "8", "$" or "&" (on a skewed page also "5",
# "6"): "8 44. Księga przyjęć" and "5 93.1. Ustawa" are "§ 44." and "§ 93.1." (bench/ocr.py: every § unit of the
# two regulations was lost before this); "891." stays a number, and so does "5 000." (no leading zero)
_PARAGRAPH_SIGN = re.compile(r"^[ \t]*(?:[5-8][ \t]|[$&][ \t]?)([1-9]\d{0,3}[a-z]{0,2}\.)(?=\s|$|\d{1,2}\.)")


def ocr_lines(text: str) -> list[str]:
    """Wiersze tekstu z OCR jak wiersze warstwy tekstowej: bez pustych wierszy między akapitami i znaku końca
    strony (``\\f``), którymi Tesseract rozdziela bloki, z „§” na początku jednostki i z polskim cudzysłowem
    zamykającym."""
    # Polish acts quote „…”; Tesseract reads the closing ” as '"', and an unclosed „ makes cutting take every
    # following unit for quoted text of an amended act (bench/ocr.py: § 86–99 of technika prawodawcza)
    text = text.replace("\f", "\n").replace('"', "”")
    return [_PARAGRAPH_SIGN.sub(r"§ \1", line.rstrip()) for line in text.split("\n") if line.strip()]
