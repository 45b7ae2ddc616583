"""Przejście po folderach: linki, pętle, ukryte pliki, dziwne nazwy – każdy plik raz, nic się nie wysypuje."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from chroma_rag.errors import UserError
from chroma_rag.indexing.discovery import FileLimits, collect_files, fingerprint

GOOD_NAMES = [
    "Regulamin pracy (wersja 2) – zmiana.TXT",
    "zażółć-gęślą-jaźń [kopia].md",
    "podfolder/głęboko/Umowa najmu.txt",
    "katalog.pdf/w środku.txt",
]


def make_tree(root: Path) -> Path:
    """Drzewo ze wszystkimi przypadkami przejścia; zwraca folder do indeksowania."""
    docs = root / "dokumenty"
    for i, name in enumerate(GOOD_NAMES):
        path = docs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Dokument numer {i}. Pracownik ma prawo do przerwy w pracy trwającej {i + 10} minut.",
                        encoding="utf-8")
    (docs / ".ukryty.txt").write_text("ukryty plik", encoding="utf-8")
    (docs / ".git").mkdir()
    (docs / ".git" / "notatka.txt").write_text("ukryty folder", encoding="utf-8")
    (docs / "arkusz.xlsx").write_bytes(b"PK\x03\x04 nie arkusz")
    (docs / "obraz.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (docs / "zepsuty-link.pdf").symlink_to(docs / "nie-ma-takiego.pdf")
    (docs / "sam-na-siebie.txt").symlink_to(docs / "sam-na-siebie.txt")
    (docs / "podfolder" / "petla").symlink_to(docs)  # directory loop
    (docs / "link-do-pliku.md").symlink_to(docs / GOOD_NAMES[1])  # same file twice
    return docs


def test_walk_finds_each_supported_file_once(tmp_path):
    docs = make_tree(tmp_path)
    found = collect_files([docs])
    assert sorted(p.resolve() for p in found.files) == sorted((docs / n).resolve() for n in GOOD_NAMES)
    assert set(found.skipped) == {str(docs / "zepsuty-link.pdf"), str(docs / "sam-na-siebie.txt")}
    assert all("link" in reason for reason in found.skipped.values())


def test_missing_path_and_empty_folder_are_errors(tmp_path):
    with pytest.raises(UserError, match="nie istnieje"):
        collect_files([tmp_path / "literowka"])
    (tmp_path / "pusty").mkdir()
    with pytest.raises(UserError, match="nie ma plików"):
        collect_files([tmp_path / "pusty"])
    assert collect_files([tmp_path / "pusty"], allow_empty=True).files == []


def test_explicit_hidden_file_is_taken_and_unsupported_is_an_error(tmp_path):
    hidden = tmp_path / ".notatka.txt"
    hidden.write_text("tekst", encoding="utf-8")
    assert collect_files([hidden]).files == [hidden]
    (tmp_path / "a.xlsx").write_bytes(b"x")
    with pytest.raises(UserError, match="nieobsługiwany typ"):
        collect_files([tmp_path / "a.xlsx"])


def bytes_read() -> int:
    """Ile bajtów ten proces przeczytał wywołaniami read (``rchar`` z /proc/self/io)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


def test_very_large_text_file_is_skipped_without_reading(tmp_path):
    big = tmp_path / "log.txt"
    with big.open("wb") as handle:
        handle.truncate(3 * 1024 * 1024)  # sparse: instant to make
    small = tmp_path / "maly.txt"
    small.write_text("mały", encoding="utf-8")
    skipped: dict[str, str] = {}
    sources = fingerprint([big, small], skipped, FileLimits(text_bytes=1024 * 1024, document_bytes=1024 * 1024))
    assert [s.path for s in sources] == [small]
    assert "limit" in skipped[str(big)] and "3 MB" in skipped[str(big)]


@pytest.mark.parametrize("name", ["obraz.pdf", "kopia.docx"])
def test_a_2_gb_document_is_skipped_before_hashing(tmp_path, name):
    big = tmp_path / name
    with big.open("wb") as handle:
        handle.truncate(2 * 1024**3)  # sparse: nothing written to the disk
    skipped: dict[str, str] = {}
    before = bytes_read()
    assert fingerprint([big], skipped) == []
    assert bytes_read() - before < 1024 * 1024  # not hashed: 2 GB of zeros would have been read
    assert skipped[str(big)].startswith("plik ma 2048 MB, limit to 500 MB"), skipped


def test_indeksuj_says_why_a_huge_document_was_skipped(capsys, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nArt. 1. Pracownik ma prawo do urlopu.\n", encoding="utf-8")
    with (tmp_path / "skan.pdf").open("wb") as handle:
        handle.truncate(2 * 1024**3)
    code, _, err = run_cli(capsys, "indeksuj", tmp_path, "--baza", tmp_path / "db")
    said = " ".join(err.split())
    assert code == 3 and f"Pominięto {tmp_path / 'skan.pdf'}: plik ma 2048 MB, limit to 500 MB" in said, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root czyta każdy plik")
def test_unreadable_file_is_skipped(tmp_path):
    locked = tmp_path / "tajne.txt"
    locked.write_text("x", encoding="utf-8")
    locked.chmod(0)
    skipped: dict[str, str] = {}
    assert fingerprint([locked], skipped) == []
    assert str(locked) in skipped


def test_indeksuj_on_the_tree(capsys, tmp_path):
    docs = make_tree(tmp_path)
    db = tmp_path / "db"
    code, out, err = run_cli(capsys, "indeksuj", docs, "--baza", db)
    assert code == 3, err  # broken links are skipped, the rest indexed
    assert "zepsuty-link.pdf" in err and "Traceback" not in err
    listed = json.loads(run_cli(capsys, "lista", "--json", "--baza", db)[1])
    assert sorted(f["plik"] for f in listed) == sorted(Path(n).name for n in GOOD_NAMES)
    assert len({f["sciezka"] for f in listed}) == len(GOOD_NAMES)
    code, out, _ = run_cli(capsys, "indeksuj", docs, "--baza", db)
    assert code == 3 and f"bez zmian: {len(GOOD_NAMES)}" in " ".join(out.split())
