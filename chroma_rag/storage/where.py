"""Semantyka filtrów ``where`` Chromy sprawdzana u nas: na metadanych kandydatów HNSW i na kolumnach
lokalnej migawki (``snapshot.py``) – tak, jak sprawdziłaby to Chroma 1.5.9."""

from __future__ import annotations

from typing import Any

MISSING = object()


def _same(value: Any, operand: Any) -> bool:
    # Chroma keeps bool and int apart: {"uchylony": {"$ne": True}} must not treat 1 as True.
    return value is not MISSING and isinstance(value, bool) == isinstance(operand, bool) and value == operand


def _ordered(value: Any, operand: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, operand))


FIELD_OPERATORS = {
    "$eq": _same,
    "$ne": lambda v, x: not _same(v, x),
    "$in": lambda v, xs: any(_same(v, x) for x in xs),
    "$nin": lambda v, xs: not any(_same(v, x) for x in xs),
    "$gt": lambda v, x: _ordered(v, x) and v > x,
    "$gte": lambda v, x: _ordered(v, x) and v >= x,
    "$lt": lambda v, x: _ordered(v, x) and v < x,
    "$lte": lambda v, x: _ordered(v, x) and v <= x,
}


def _is_exclusion(condition: dict[str, Any]) -> bool:
    return all(
        isinstance(ops, dict) and set(ops) <= {"$ne", "$nin"} for key, ops in condition.items() if key[0] != "$"
    ) and not any(key[0] == "$" for key in condition)


def narrowing_part(where: dict[str, Any] | None) -> dict[str, Any] | None:
    """``where`` bez wykluczeń najwyższego poziomu; ``None``, gdy nic nie zawęża (filtr jest szeroki)."""
    if where is None or _is_exclusion(where):
        return None
    if "$and" not in where or len(where) != 1:
        return where
    kept = [c for c in where["$and"] if not _is_exclusion(c)]
    if not kept:
        return None
    if len(kept) == len(where["$and"]):
        return where
    return kept[0] if len(kept) == 1 else {"$and": kept}


def supported(where: dict[str, Any]) -> bool:
    for key, condition in where.items():
        if key in ("$and", "$or"):
            if not all(supported(c) for c in condition):
                return False
        elif key.startswith("$") or (isinstance(condition, dict) and not set(condition) <= set(FIELD_OPERATORS)):
            return False
    return True


def matches_where(metadata: dict[str, Any], where: dict[str, Any]) -> bool:
    """Czy metadane spełniają ``where`` tak, jak sprawdziłaby to Chroma (``$ne``/``$nin`` pasują też,
    gdy klucza brak; porównania tylko liczb)."""
    for key, condition in where.items():
        if key == "$and":
            ok = all(matches_where(metadata, c) for c in condition)
        elif key == "$or":
            ok = any(matches_where(metadata, c) for c in condition)
        else:
            ops = condition if isinstance(condition, dict) else {"$eq": condition}
            value = metadata.get(key, MISSING)
            ok = all(FIELD_OPERATORS[op](value, operand) for op, operand in ops.items())
        if not ok:
            return False
    return True
