"""Konwencje CLI (issue 14): pomoc po polsku, -h/--version/help, kody wyjścia, odmiana liczebników, 80 kolumn
i potok, kolejność pól JSON, plik ustawień i `konfiguracja`, postęp `indeksuj`, uzupełnianie w powłoce."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from chroma_rag import Index
from chroma_rag.cli.output import shorten
from chroma_rag.cli.progress import PLAIN_EVERY_S, PlainProgress, eta
from chroma_rag.cli.search import header_lines
from chroma_rag.indexing.preparing import part_counts
from chroma_rag.models import Chunk
from chroma_rag.plural import FRAGMENT, TOKEN, count

ENGLISH = re.compile(
    r"Usage:|Options|Arguments|Commands|Show this message|\[required\]|\[default:|<list|<bool>|<int>|<str>|"
    r"<float|<path>|\{[A-Z]+\}|x>=0"
)
COMMANDS = ("indeksuj", "sprawdz", "szukaj", "pytaj", "ocena", "lista", "podglad", "usun", "konfiguracja",
            "uzupelnianie", "help")
LONG_NAME = "regulamin-wewnetrzny-spolki-zielony-las-w-sprawie-pracy-zdalnej-i-urlopow-DU-2024-1234-wersja-koncowa.md"
LONG_UNIT = "§ 2. " + " ".join(
    f"Pracownik może wykonywać pracę zdalną w dniu {day} miesiąca, jeżeli przełożony wyrazi zgodę na piśmie."
    for day in range(1, 36)
)


def command_line() -> list[str]:
    exe = Path(sys.executable).with_name("chroma-rag")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "chroma_rag"]


@pytest.fixture(autouse=True)
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> Path:
    """Plik z bardzo długą nazwą (jednostka w kilku częściach) i plik z jednym fragmentem."""
    folder = tmp_path_factory.mktemp("small-docs")
    (folder / LONG_NAME).write_text(
        "# Regulamin pracy zdalnej\n\n§ 1. Regulamin określa zasady pracy zdalnej w spółce.\n\n" + LONG_UNIT + "\n",
        encoding="utf-8",
    )
    (folder / "notatka.txt").write_text("Zebranie zarządu odbędzie się w piątek o 10:00 w sali 204.", encoding="utf-8")
    db = tmp_path_factory.mktemp("small-db") / "db"
    Index(db).add([folder])
    return db


# --- pomoc ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "args",
    [["--help"], ["-h"], [], ["help"], *([c, "--help"] for c in COMMANDS), ["szukaj", "-h"], ["help", "szukaj"]],
)
def test_help_is_polish_throughout(capsys, args):
    code, out, err = run_cli(capsys, *args)
    assert code == 0 and err == ""
    assert "Użycie: chroma-rag" in out and "Pokaż tę pomoc i zakończ." in out
    assert not ENGLISH.search(out), ENGLISH.search(out)
    assert all(line == line.rstrip() for line in out.splitlines())


def test_bare_command_and_help_command_show_the_same_help(capsys):
    bare = run_cli(capsys)
    assert bare[0] == 0 and "Polecenia" in bare[1] and "szukaj" in bare[1]
    assert run_cli(capsys, "help") == bare
    assert run_cli(capsys, "help", "szukaj") == run_cli(capsys, "szukaj", "--help")


def test_help_of_unknown_command_is_a_usage_error(capsys):
    code, out, err = run_cli(capsys, "help", "szukj")
    assert code == 2 and out == "" and "Nie ma polecenia „szukj”. Może chodziło o: szukaj" in err


def test_every_option_states_its_default():
    from typer.main import get_command

    from chroma_rag.cli.app import app

    group = get_command(app)
    for name, command in group.commands.items():
        for param in command.params:
            if param.param_type_name != "option" or param.is_flag:
                continue
            shown = param.show_default and param.default is not None
            assert shown or "domyślnie" in (param.help or ""), f"{name} {param.opts}"


def test_help_texts_name_the_calibrated_threshold_and_what_k_means_for_pytaj(capsys):
    szukaj = " ".join(run_cli(capsys, "szukaj", "--help")[1].split())
    assert "domyślnie 0.83" in szukaj and "domyślnie 5" in szukaj and "--ile -k LICZBA" in szukaj
    pytaj = " ".join(run_cli(capsys, "pytaj", "--help")[1].replace("│", " ").split())  # a help cell wraps
    assert "Ile najlepszych fragmentów dać modelowi" in pytaj


def test_typer_internals_we_patch_still_exist():
    """Polska pomoc pisze w prywatne miejsca przypiętego Typera (nie ma na to publicznego API): po jego
    aktualizacji ten test, a nie angielska pomoc u użytkownika, mówi, co zniknęło."""
    from typer import rich_utils
    from typer.core import TyperArgument, TyperOption

    from chroma_rag.cli.help import RICH_TEXTS

    assert [name for name in RICH_TEXTS if not isinstance(getattr(rich_utils, name, None), str)] == []
    assert callable(TyperOption.display_type_rich) and callable(TyperOption._get_number_range_help_str)
    assert callable(TyperArgument._usage_display_name) and callable(TyperArgument._get_number_range_help_str)


def test_version(capsys):
    from chroma_rag import __version__

    assert run_cli(capsys, "--version") == (0, f"chroma-rag {__version__}\n", "")


def test_console_script_help_has_no_english(tmp_path):
    for args in (["--help"], ["szukaj", "--help"]):
        result = subprocess.run([*command_line(), *args], capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == 0 and not ENGLISH.search(result.stdout)


# --- kody wyjścia -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["szukaj", "urlop", "--tryb", "losowy"], "Nieznana wartość --tryb „losowy”"),
        (["szukaj", "urlop", "-k", "0"], "musi być dodatnia"),
        (["szukaj", "urlop", "--prog", "1.5"], "od 0 do 1"),
        (["szukaj", "   "], "Pytanie jest puste"),
        (["sprawdz", "--czekaj", "-1"], "Zła wartość opcji --czekaj: musi być co najmniej 0."),
    ],
)
def test_bad_values_found_by_our_code_are_usage_errors(capsys, two_acts_db, args, expected):
    code, out, err = run_cli(capsys, *args, "--baza", two_acts_db)
    assert code == 2 and out == "" and expected in " ".join(err.split())


def test_bad_document_type_for_indeksuj_is_a_usage_error(capsys, tmp_path):
    (tmp_path / "a.txt").write_text("Krótki tekst.", encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", tmp_path / "a.txt", "--typ", "wiersz", "--baza", tmp_path / "db")
    assert code == 2 and "Nieznana wartość --typ „wiersz”" in err


def test_closed_pipe_ends_quietly(two_acts_db):
    """`chroma-rag szukaj … | head -1`: czytelnik zamyka potok, zanim padnie pierwszy wiersz."""
    process = subprocess.Popen(
        [*command_line(), "szukaj", "kopia dokumentacji medycznej", "-k", "5", "--baza", str(two_acts_db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0
    assert stderr == ""


# --- tekst ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 fragmentów"), (1, "1 fragment"), (2, "2 fragmenty"), (4, "4 fragmenty"), (5, "5 fragmentów"),
     (12, "12 fragmentów"), (14, "14 fragmentów"), (22, "22 fragmenty"), (112, "112 fragmentów"),
     (123, "123 fragmenty"), (125, "125 fragmentów")],
)
def test_polish_plural(n, expected):
    assert count(n, FRAGMENT) == expected


def test_plural_of_tokens_and_dimensions():
    from chroma_rag.plural import DIMENSION

    assert count(123, TOKEN) == "123 tokeny" and count(384, DIMENSION) == "384 wymiary"
    assert count(1, TOKEN) == "1 token" and count(1024, DIMENSION) == "1024 wymiary"


def test_preview_title_and_removal_use_the_plural_helper(capsys, small_db, tmp_path):
    note = tmp_path / "notatka.txt"
    note.write_text("Zebranie zarządu odbędzie się w piątek.", encoding="utf-8")
    assert "notatka.txt: 1 fragment\n" in run_cli(capsys, "podglad", note)[1].replace("fragmentów", "?")
    db = tmp_path / "db"
    import shutil

    shutil.copytree(small_db, db)
    code, out, _ = run_cli(capsys, "usun", "notatka.txt", "--baza", db)
    assert code == 0 and out == "Usunięto 1 fragment pliku notatka.txt.\n"


def test_ocena_prints_paragraphs_without_art_prefix(capsys, samples_db, tmp_path):
    questions = tmp_path / "pytania.jsonl"
    row = {"pytanie": "Ile dni urlopu przysługuje pracownikowi?", "plik": "regulamin-pracy-zielony-las.md",
           "art": ["§ 17"]}
    questions.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "ocena", questions, "--baza", samples_db)
    assert code == 0
    text = " ".join(out.split())
    assert "oczekiwano: regulamin-pracy-zielony-las.md § 17; pierwsze: regulamin-pracy-zielony-las.md § 6" in text
    assert "art. §" not in text


def test_skipped_file_is_named_once(capsys, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "binarny.txt").write_bytes(b"\x00\x01\x02\xff" * 100)
    (folder / "notatka.txt").write_text("Zebranie zarządu w piątek o 10:00.", encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", folder, "--baza", tmp_path / "db", "--cicho")
    assert code == 3
    line = next(line for line in err.splitlines() if line.startswith("Pominięto"))
    assert line.count("binarny.txt") == 1 and line.endswith("to plik binarny, nie tekst.")


def test_snippet_ends_at_a_word_boundary():
    text = "Pracownik ma prawo do urlopu wypoczynkowego w wymiarze dwudziestu dni."
    assert shorten(text, 30) == "Pracownik ma prawo do urlopu…"
    assert shorten(text, 200) == text
    assert shorten("słowo " * 3, 100) == "słowo słowo słowo"


def test_a_hit_header_wraps_between_its_parts_never_inside_one():
    """Nagłówek wyniku o jeden znak za długi na 80 kolumn: „trafność 1.00” przechodzi do wiersza wcięcia w całości,
    a nie „trafność” na końcu wiersza i „1.00” pod spodem."""
    parts = ["art. 12 u.w.l.", "str. 1", "trafność 1.00"]
    first, *rest = (line.plain for line in header_lines(1, "o-wlasnosci-lokali-DU-1994-388.txt", parts, 77))
    assert first == "1. o-wlasnosci-lokali-DU-1994-388.txt · art. 12 u.w.l. · str. 1" and rest == ["trafność 1.00"]
    assert [line.plain for line in header_lines(2, "a.txt", parts, 77)] == ["2. a.txt · " + " · ".join(parts)]
    name = "x" * 90  # a name longer than the line stays whole, with its parts after it (folded as it comes)
    assert [line.plain for line in header_lines(3, name, parts, 77)] == [f"3. {name} · " + " · ".join(parts)]


def test_part_counts_of_long_units():
    chunks = [Chunk("", "1", 1, 1, part=1), Chunk("", "2", 1, 1, part=1), Chunk("", "2", 1, 1, part=2),
              Chunk("", "2", 1, 1, part=3), Chunk("", "3", 1, 1, part=1)]
    assert part_counts(chunks) == [1, 3, 3, 3, 1]


def first_column(out: str) -> str:
    """Złączona treść pierwszej kolumny tabeli rich (nazwa zawinięta w kilka wierszy)."""
    return "".join(line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│"))


def test_long_file_names_are_never_cut_at_80_columns(capsys, small_db):
    code, out, _ = run_cli(capsys, "lista", "--baza", small_db)
    assert code == 0 and "…" not in out
    # issue 21: a name stays whole on one line (copied, grepped), even when it is longer than the terminal
    assert LONG_NAME in out.splitlines() and "notatka.txt" in out.splitlines()
    assert all(len(line) <= 80 and line == line.rstrip() for line in out.splitlines() if LONG_NAME not in line)

    code, out, _ = run_cli(capsys, "szukaj", "praca zdalna za zgodą przełożonego", "--plik", LONG_NAME, "-k", "3",
                           "--prog", "0", "--baza", small_db)
    assert code == 0
    assert LONG_NAME in "".join(out.split("\n   ")[0].splitlines())  # header wrapped, the name complete
    *hits, hint = out.strip().split("\n\n")
    assert hint.startswith("Całą jednostkę pokaże: chroma-rag pokaz") and "\n" not in hint  # kept whole to copy
    assert all(len(line) <= 80 and line == line.rstrip() for line in "\n\n".join(hits).splitlines())
    assert re.search(r"§ 2, część \d/\d", out)
    for block in hits:  # each hit: header, chapter, snippet; the snippet ends the block
        assert block.endswith(("…", ".")), block


def test_lista_keeps_the_table_when_names_fit(small_db):
    # a process of its own: the console reads COLUMNS once, when it starts (as for a user in a wide terminal)
    run = subprocess.run([sys.executable, "-m", "chroma_rag", "lista", "--baza", str(small_db)], capture_output=True,
                         text=True, env={**os.environ, "COLUMNS": "200"}, timeout=120)
    assert run.returncode == 0 and any(LONG_NAME in line and "│" in line for line in run.stdout.splitlines())


def test_ocena_table_keeps_file_names_whole(capsys, small_db, tmp_path):
    questions = tmp_path / "pytania.jsonl"
    row = {"pytanie": "Kiedy można pracować zdalnie?", "plik": LONG_NAME, "art": ["§ 2"]}
    questions.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "ocena", questions, "--baza", small_db, "--prog", "0")
    assert code == 0 and "…" not in out and LONG_NAME in first_column(out)


# --- JSON -------------------------------------------------------------------------------------------------------

HIT_KEYS = ["id", "plik", "art", "fragment", "czesci", "strona", "strona_do", "typ", "rok", "tytul", "dz_u",
            "rozdzial", "sciezka"]


def test_search_json_has_fixed_keys_without_internal_fields(capsys, small_db):
    code, out, _ = run_cli(capsys, "szukaj", "praca zdalna", "--json", "--prog", "0", "--baza", small_db)
    data = json.loads(out)
    assert code == 0 and list(data) == ["wyniki", "powod", "plan"]
    for hit in data["wyniki"]:
        keys = list(hit)
        assert keys[: len(HIT_KEYS)] == HIT_KEYS and keys[-3:] == ["podobienstwo", "wynik", "tekst"]
        assert not {"hash", "tekst_hash", "strona_od"} & set(hit)
    parts = [hit for hit in data["wyniki"] if hit["art"] == "§ 2"]
    assert parts and all(hit["czesci"] > 1 for hit in parts)


def test_empty_search_says_why_in_json(capsys, small_db):
    code, out, _ = run_cli(capsys, "szukaj", "przepisy ruchu drogowego na autostradach", "--json", "--prog", "0.99",
                           "--baza", small_db)
    assert code == 0 and json.loads(out) == {"wyniki": [], "powod": "prog", "plan": None}


def test_pytaj_lista_ocena_json_key_order(capsys, small_db, tmp_path):
    code, out, _ = run_cli(capsys, "pytaj", "Jak jest pogoda na Marsie?", "--json", "--prog", "0.99",
                           "--baza", small_db)
    assert code == 0
    assert list(json.loads(out)) == ["odpowiedz", "fragmenty", "uzycie", "model", "niepasujace_cytaty",
                                     "plan", "powod", "pytanie_samodzielne", "tury_dla_modelu", "pominiete_tury",
                                     "uwaga_rozmowy", "rozmowa"]
    listed = json.loads(run_cli(capsys, "lista", "--json", "--baza", small_db)[1])
    listed_keys = ["plik", "sciezka", "typ", "rok", "fragmenty", "modele", "inne_sciezki", "tytul", "akt", "skrot"]
    assert [list(item) for item in listed] == [listed_keys] * 2
    questions = tmp_path / "pytania.jsonl"
    questions.write_text(json.dumps({"pytanie": "Kiedy zebranie?", "plik": "notatka.txt", "art": []}) + "\n")
    result = json.loads(run_cli(capsys, "ocena", questions, "--json", "--baza", small_db)[1])
    assert list(result) == ["n", "hit@1", "hit@3", "hit@5", "hit@10", "mrr", "per_rodzaj", "per_plik", "odmowy",
                            "pudla", "czas_s", "pominiete"]


# --- konfiguracja -----------------------------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path, monkeypatch, two_acts_db) -> Path:
    """Projekt z chroma-rag.toml (baza względem pliku) i podfolder jako bieżący katalog."""
    for name in ("CHROMA_RAG_K", "CHROMA_RAG_BAZA", "CHROMA_RAG_PROG", "CHROMA_RAG_LLM_KEY"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "projekt"
    (root / "akta" / "2024").mkdir(parents=True)
    relative = os.path.relpath(two_acts_db, root)
    (root / "chroma-rag.toml").write_text(
        f'CHROMA_RAG_BAZA = "{relative}"\nCHROMA_RAG_K = 1\nCHROMA_RAG_LLM_KEY = "sk-or-v1-0123456789abcdef"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(root / "akta" / "2024")
    return root


def hits_count(capsys, *args: str) -> int:
    code, out, err = run_cli(capsys, "szukaj", "dokumentacja medyczna pacjenta", "--json", "--prog", "0", *args)
    assert code == 0, err
    return len(json.loads(out)["wyniki"])


def test_config_file_precedence_flag_env_dotenv_file(capsys, project, monkeypatch):
    assert hits_count(capsys) == 1  # baza i k z chroma-rag.toml dwa foldery wyżej
    (project / ".env").write_text("CHROMA_RAG_K=2\n", encoding="utf-8")
    assert hits_count(capsys) == 2  # .env przed plikiem toml
    monkeypatch.setenv("CHROMA_RAG_K", "3")
    assert hits_count(capsys) == 3  # środowisko przed plikami
    assert hits_count(capsys, "-k", "4") == 4  # opcja przed wszystkim
    assert "CHROMA_RAG_BAZA" not in os.environ  # values from files only for the duration of a command


def test_python_api_reads_the_config_file_too(project, monkeypatch, two_acts_db):
    monkeypatch.setattr(os, "environ", dict(os.environ))  # Index() copies file values into the environment
    assert Index().store.path.resolve() == two_acts_db.resolve()
    assert os.environ["CHROMA_RAG_K"] == "1"


def test_user_config_folder_is_the_last_file(capsys, project, monkeypatch, tmp_path):
    home = tmp_path / "xdg"
    (home / "chroma-rag").mkdir(parents=True)
    (home / "chroma-rag" / "chroma-rag.toml").write_text("CHROMA_RAG_K = 2\nCHROMA_RAG_PROG = 0.5\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    assert hits_count(capsys) == 1  # the project's file wins over the user's
    out = run_cli(capsys, "konfiguracja", "--json")[1]
    settings = {s["klucz"]: s for s in json.loads(out)}
    assert settings["CHROMA_RAG_PROG"]["wartosc"] == "0.5"
    assert settings["CHROMA_RAG_PROG"]["zrodlo"] == f"plik {home / 'chroma-rag' / 'chroma-rag.toml'}"


def test_konfiguracja_shows_sources_and_masks_keys(capsys, project, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_LLM_MODEL", "qwen2.5:7b")
    code, out, _ = run_cli(capsys, "konfiguracja", "--json")
    assert code == 0
    settings = {s["klucz"]: s for s in json.loads(out)}
    assert settings["CHROMA_RAG_LLM_MODEL"] == {"klucz": "CHROMA_RAG_LLM_MODEL", "wartosc": "qwen2.5:7b",
                                               "zrodlo": "zmienna środowiska", "opcja": "", "opis": "model czatu"}
    assert settings["CHROMA_RAG_K"]["zrodlo"] == f"plik {project / 'chroma-rag.toml'}"
    assert settings["CHROMA_RAG_LLM_KEY"]["wartosc"] == "sk-o…cdef"
    assert settings["CHROMA_RAG_PROG"]["wartosc"] == "0.83" and settings["CHROMA_RAG_PROG"]["zrodlo"] == "domyślnie"
    code, out, _ = run_cli(capsys, "konfiguracja")
    assert "0123456789" not in out and "zmienna środowiska" in out and "domyślnie" in out


def test_unknown_key_in_config_file_is_one_sentence(capsys, project):
    (project / "chroma-rag.toml").write_text('CHROMA_RAG_BAZA_X = "b"\n', encoding="utf-8")
    code, _, err = run_cli(capsys, "lista")
    assert code == 1 and "nieznane klucze: CHROMA_RAG_BAZA_X" in err and "Traceback" not in err


def test_bad_threshold_in_config_names_the_setting(capsys, project, monkeypatch):
    monkeypatch.setenv("CHROMA_RAG_PROG", "wysoki")
    code, _, err = run_cli(capsys, "szukaj", "urlop")
    assert code == 1 and "CHROMA_RAG_PROG" in err and "„wysoki”" in err


def test_pytaj_without_a_chat_model_says_how_to_set_one_up(capsys, two_acts_db, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in ("CHROMA_RAG_LLM_URL", "CHROMA_RAG_LLM_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = run_cli(capsys, "pytaj", "Czy pacjent może odmówić zgody na badanie?", "--baza", two_acts_db)
    text = " ".join(err.split())
    assert code == 1
    for hint in ("OPENROUTER_API_KEY", "https://openrouter.ai/keys", "https://api.openai.com/v1", "OPENAI_API_KEY",
                 "Ollama", "llama.cpp", "http://localhost:11434/v1", "nie potrzebuje"):
        assert hint in text
    assert text.count(". ") <= 2


# --- postęp -----------------------------------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_prints_every_ten_seconds_and_per_file():
    from rich.console import Console

    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    clock = Clock()
    progress = PlainProgress(console, clock)
    progress.start(2, 100)
    progress.start_file(Path("a.pdf"), 60)
    clock.now = 4
    progress.advance(20)  # after 4 s: no line yet
    clock.now = PLAIN_EVERY_S + 1
    progress.advance(20)
    progress.advance(20)
    progress.finish_file(Path("a.pdf"))
    lines = console.export_text().splitlines()
    assert lines[0] == "Do zaindeksowania: 2 pliki, 100 fragmentów."
    assert lines[1].startswith("plik 1/2 · fragmenty 40/100 · 3.6 fragm./s · zostało ~16 s · a.pdf")
    assert lines[2].startswith("Gotowe: a.pdf (plik 1/2 · fragmenty 60/100 ·")
    assert len(lines) == 3


def test_progress_of_a_run_that_reuses_every_vector_still_has_a_rate_and_eta():
    """Po nowej wersji cięcia każdy plik tnie się od nowa, a wektory bierze z bazy: model nic nie liczy, więc tempo
    i czas do końca to tempo samego cięcia i zapisu, a nie „0.0 fragm./s · zostało ?”."""
    from rich.console import Console

    console = Console(record=True, width=200, file=open(os.devnull, "w"))  # noqa: SIM115
    clock = Clock()
    progress = PlainProgress(console, clock)
    progress.start(2, 1000)
    progress.start_file(Path("a.pdf"), 500)
    clock.now = PLAIN_EVERY_S
    progress.reuse(500)
    progress.finish_file(Path("a.pdf"))
    assert "fragmenty 500/1000 · 50.0 fragm./s · zostało ~10 s" in console.export_text()


def test_eta_format():
    assert (eta(45), eta(200), eta(3900)) == ("~45 s", "~3 min 20 s", "~1 h 05 min")


def test_indeksuj_progress_when_piped_in_given_order_and_quiet(capsys, tmp_path):
    files = []
    for name in ("b.txt", "a.txt"):
        files.append(tmp_path / name)
        files[-1].write_text(f"Notatka {name}: zebranie w piątek o 10:00.", encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", *files, "--baza", tmp_path / "db")
    assert code == 0
    assert "Do zaindeksowania: 2 pliki, 2 fragmenty." in err
    assert err.index("Gotowe: b.txt (plik 1/2 · fragmenty 1/2") < err.index("Gotowe: a.txt (plik 2/2 · fragmenty 2/2")
    (tmp_path / "a.txt").write_text("Zmieniona notatka.", encoding="utf-8")
    code, _, err = run_cli(capsys, "indeksuj", *files, "--baza", tmp_path / "db", "--cicho")
    assert code == 0 and err == ""


# --- uzupełnianie -----------------------------------------------------------------------------------------------

def complete(words: str, cwd: Path) -> list[str]:
    env = {**os.environ, "_CHROMA_RAG_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - 1)}
    result = subprocess.run(command_line(), env=env, capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_shell_completion_of_commands_options_and_indexed_files(small_db, tmp_path):
    assert complete("chroma-rag szu", tmp_path) == ["szukaj"]
    assert complete("chroma-rag szukaj urlop --pl", tmp_path) == ["--plik"]
    assert complete(f"chroma-rag szukaj urlop --baza {small_db} --plik not", tmp_path) == ["notatka.txt"]
    assert complete(f"chroma-rag usun --baza {small_db} reg", tmp_path) == [LONG_NAME]


@pytest.mark.parametrize(("shell", "rc_file"), [("bash", ".bashrc"), ("zsh", ".zshrc"),
                                                 ("fish", ".config/fish/completions/chroma-rag.fish")])
def test_completion_script_and_install(tmp_path, shell, rc_file):
    env = {**os.environ, "HOME": str(tmp_path)}
    script = subprocess.run([*command_line(), "uzupelnianie", shell], capture_output=True, text=True, env=env)
    assert script.returncode == 0 and "_CHROMA_RAG_COMPLETE" in script.stdout
    installed = subprocess.run([*command_line(), "uzupelnianie", shell, "--instaluj"], capture_output=True,
                               text=True, env=env)
    assert installed.returncode == 0 and f"Uzupełnianie dla {shell} zapisane w" in installed.stdout
    assert (tmp_path / rc_file).is_file()


def test_completion_for_unknown_shell_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "uzupelnianie", "tcsh")
    assert code == 2 and "Nieobsługiwana powłoka „tcsh”" in err

