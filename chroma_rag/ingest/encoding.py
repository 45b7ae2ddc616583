"""Bajty pliku tekstowego jako tekst (UTF-16/UTF-8 z BOM, UTF-8, cp1250/ISO-8859-2, detektor kodowania) – wspólne
dla plików tekstowych i stron HTML bez deklaracji kodowania."""

from __future__ import annotations

import codecs

from ..errors import UnreadableFile

_CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32))
_MAX_CONTROL_SHARE = 0.01
_POLISH_LETTERS = "ąćęłńóśźżĄĆĘŁŃÓŚŹŻ"


def decode_text(raw: bytes, name: str, kind: tuple[str, str] = ("tekstowy", "tekstowego")) -> str:
    """Bajty pliku tekstowego jako tekst: UTF-16 z BOM, UTF-8 (z BOM i bez), cp1250/ISO-8859-2 po polskich
    literach, inaczej detektor kodowania; plik binarny – ``UnreadableFile``. ``kind`` nazywa plik w komunikacie
    (mianownik, dopełniacz)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Notepad's "Unicode": NUL bytes, yet text
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"{name}: uszkodzony plik {kind[0]} UTF-16.") from exc
    sample = raw[:65536]
    if b"\x00" in sample or sum(sample.count(b) for b in _CONTROL_BYTES) > _MAX_CONTROL_SHARE * len(sample):
        raise UnreadableFile(f"{name}: to plik binarny, nie tekst.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    polish = _polish_single_byte(raw)
    if polish is not None:
        return polish
    from charset_normalizer import from_bytes

    best = from_bytes(raw, cp_isolation=["cp1250", "iso8859_2", "utf_8", "cp1252"]).best()
    if best is None:
        raise UnreadableFile(f"{name}: nie da się rozpoznać kodowania znaków pliku {kind[1]}.")
    return str(best)


def _polish_single_byte(raw: bytes) -> str | None:
    """Tekst w cp1250 albo ISO-8859-2 rozpoznany po polskich literach: te kodowania różnią się właśnie na ą, ś,
    ź (i wielkich), więc właściwe daje ich więcej, a błędne – „±”, „¶”, znaki sterujące. Krótkiego tekstu
    statystyka ogólnego detektora nie rozstrzyga („Zał±cznik”). ``None``, gdy nie ma polskich liter."""
    scores = {}
    for encoding in ("cp1250", "iso8859_2"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        scores[encoding] = (sum(text.count(c) for c in _POLISH_LETTERS), text)
    if not scores:
        return None
    best, text = max(scores.values(), key=lambda pair: pair[0])
    return text if best else None
