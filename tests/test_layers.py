"""Układ pakietu: importy płyną tylko w dół etapów (wczytanie → wektory → magazyn → indeks pochodny → indeksowanie →
wyszukiwanie → odpowiedź → API → serwer → CLI), bez cykli; indeks pochodny jest jednym składnikiem (reszta widzi
tylko ``chroma_rag.derived``); publiczne importy z README działają."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "chroma_rag"

# Stage order: a module may import from its own stage or an earlier one, never a later one. Top-level modules
# other than the facade are the shared base every stage may use (types, errors, settings, the chat client).
STAGES = ["", "ingest", "embedding", "storage", "derived", "indexing", "retrieval", "answering", "api", "serving",
          "cli"]
# Components whose modules only they import: the rest of the package goes through the component's __init__.
COMPONENTS = ["chroma_rag.derived"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage_of(module: str) -> int:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else ""
    head = "cli" if head == "__main__" else head  # ``python -m chroma_rag`` is the command line
    return STAGES.index(head) if head in STAGES else 0


def package_imports(path: Path) -> set[str]:
    """Moduły pakietu importowane przez plik (także importy wewnątrz funkcji), jako pełne nazwy."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("chroma_rag"):
                continue
            for alias in node.names:  # "from . import snapshot" imports a module, not a name
                if (PACKAGE.parent / (target + "." + alias.name).replace(".", "/")).with_suffix(".py").exists():
                    found.add(target + "." + alias.name)
                    break
            else:
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("chroma_rag"))
    return found


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): package_imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{source} → {target}"
        for source, targets in graph.items()
        if source != "chroma_rag"  # the package root lazily re-exports the facade
        for target in targets
        if target != "chroma_rag" and stage_of(target) > stage_of(source)
    ]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cykle importów między modułami (pakiet ``__init__`` importujący swoje moduły się nie liczy)."""
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if target.startswith(node + ".") or node.startswith(target + "."):
                continue
            if state.get(target) == "open":
                found.append([*stack[stack.index(target):], target])
            elif target not in state:
                visit(target, [*stack, target])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])
    return found


def internal_imports(graph: dict[str, set[str]]) -> list[str]:
    """Importy modułów wewnętrznych składnika spoza niego."""
    return [
        f"{source} → {target}"
        for source, targets in graph.items()
        for component in COMPONENTS
        if not (source == component or source.startswith(component + "."))
        for target in targets
        if target.startswith(component + ".")
    ]


def test_imports_flow_down_the_stages_only():
    assert upward_imports(import_graph()) == []


def test_there_are_no_import_cycles():
    assert cycles(import_graph()) == []


def test_nothing_outside_the_derived_index_imports_its_internals():
    assert internal_imports(import_graph()) == []
    derived = {m for m in import_graph() if m.startswith("chroma_rag.derived.")}
    assert {"chroma_rag.derived.snapshot", "chroma_rag.derived.keyword", "chroma_rag.derived.index"} <= derived


def test_the_walk_catches_an_internal_import_of_a_component():
    graph = {
        "chroma_rag.retrieval.search": {"chroma_rag.derived", "chroma_rag.derived.snapshot"},
        "chroma_rag.derived.keyword": {"chroma_rag.derived.rows"},
    }
    assert internal_imports(graph) == ["chroma_rag.retrieval.search → chroma_rag.derived.snapshot"]


def test_the_walk_catches_an_upward_import_and_a_cycle():
    graph = {
        "chroma_rag.ingest.loading": {"chroma_rag.retrieval.search"},
        "chroma_rag.retrieval.search": {"chroma_rag.retrieval.keyword"},
        "chroma_rag.retrieval.keyword": {"chroma_rag.retrieval.search"},
    }
    assert upward_imports(graph) == ["chroma_rag.ingest.loading → chroma_rag.retrieval.search"]
    assert cycles(graph) == [["chroma_rag.retrieval.search", "chroma_rag.retrieval.keyword",
                              "chroma_rag.retrieval.search"]]


def test_few_modules_stay_at_the_package_top():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= 10, top
    for folder in (p for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and p.name != "static"):
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, f"{folder.name}/__init__.py needs a paragraph saying what the stage does"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("chroma_rag", "Index"),
        ("chroma_rag.filters", "SearchFilters"),
        ("chroma_rag.llm", "LlmSettings"),
        ("chroma_rag.answering", "ask"),
        ("chroma_rag.api", "preview"),
        ("chroma_rag.api", "Index"),
    ],
)
def test_public_imports_from_the_readme_keep_working(module, name):
    assert getattr(importlib.import_module(module), name) is not None
