"""Małe dokumenty generowane w testach (kilka fragmentów każdy): szybkie z prawdziwym modelem."""

from __future__ import annotations

from pathlib import Path

TOPICS = ["urlop", "przerwa", "delegacja", "szkolenie", "nadgodziny", "premia", "zwolnienie", "praca zdalna"]


def regulation(title: str, paragraphs: int = 4, variant: int = 0) -> str:
    """Regulamin z paragrafami § 1..n; każdy paragraf to jeden fragment o innej treści."""
    body = [f"REGULAMIN {title.upper()}"]
    for n in range(1, paragraphs + 1):
        topic = TOPICS[(n + variant) % len(TOPICS)]
        body.append(
            f"§ {n}. W sprawie {topic} w dokumencie {title} obowiązuje zasada numer {n}. "
            f"Pracownik zgłasza {topic} przełożonemu co najmniej {n + 2} dni wcześniej."
        )
    return "\n".join(body) + "\n"


def write_docs(folder: Path, names: list[str], paragraphs: int = 4) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        path = folder / name
        path.write_text(regulation(Path(name).stem, paragraphs), encoding="utf-8")
        paths.append(path)
    return paths
