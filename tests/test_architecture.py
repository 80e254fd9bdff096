"""The layers of the code hold (docs/DESIGN.md "Layers of the code").

Read with ``ast`` from the source, imports inside functions counted as much as those at the
top: a layer imports only from the layers below it; no module is in an import circle, lazy
or not; Typer and Rich only in ``cli``, the MCP SDK only in ``mcpserver``, the queue,
Postgres and HTTP libraries only in ``serving``, the anthropic SDK only in ``memorytool``, Jinja2 and markdown-it only in ``web``; ``sandbox``
imports nothing of ``scene_engine``; every exception class the engine defines derives from
``core.errors.SceneEngineError`` (one error root); every command is in DESIGN.md's command table and has
help text. A planted wrong-way import makes ``test_the_checker_sees_a_wrong_way_import``'s
checker fail, so the check cannot pass by seeing nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scene_engine"

# layer -> the layers it may import (besides itself). The order of the picture in DESIGN.md.
LAYERS: dict[str, set[str]] = {
    "core": set(),
    "store": {"core"},
    "llm": {"core"},
    "index": {"core", "store"},
    "extraction": {"core", "store", "llm", "index"},
    "batch": {"core", "store", "llm", "index", "extraction"},
    "offline": {"core", "store", "index", "batch"},
    "recall": {"core", "store", "index", "extraction"},
    "services": {"core", "store", "llm", "index", "extraction", "batch", "offline", "recall"},
    "serving": {"core", "store", "services"},
    "mcpserver": {"core", "store", "services"},
    "memorytool": {"core", "store", "services"},
    "web": {"core", "store", "services"},
    "cli": {"core", "store", "services", "serving", "mcpserver", "web"},
}
# Modules at the top of the package: the public API, handed on by name (``importlib``).
TOP = {"scene_engine", "scene_engine.engine"}
FACE_LIBRARIES = {"typer": {"cli"}, "click": {"cli"}, "rich": {"cli"}, "mcp": {"mcpserver"},
                  "anthropic": {"memorytool"},
                  "procrastinate": {"serving"}, "psycopg": {"serving"},
                  "psycopg_pool": {"serving"}, "starlette": {"serving", "web"},
                  "uvicorn": {"serving", "web"}, "jinja2": {"web"}, "markdown_it": {"web"}}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module imported, line) for every import in ``path``, in functions too; a
    ``from package import name`` counts ``package.name`` when that is a module."""
    tree = ast.parse(path.read_text("utf-8"))
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                is_module = (ROOT / sub.replace(".", "/")).with_suffix(".py").exists() or \
                    (ROOT / sub.replace(".", "/") / "__init__.py").exists()
                found.append((sub if is_module else base, node.lineno))
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "scene_engine" and len(parts) > 1 else None


def problems(modules: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import against the layers, and every circle, in ``modules`` (name -> imports)."""
    found = []
    for name, imported in modules.items():
        own = layer_of(name)
        for target, line in imported:
            top = target.split(".")[0]
            if top in FACE_LIBRARIES and (own not in FACE_LIBRARIES[top]):
                found.append(f"{name}:{line} imports {target} (only in "
                             f"{', '.join(sorted(FACE_LIBRARIES[top]))})")
            if name.startswith("sandbox") and top == "scene_engine":
                found.append(f"{name}:{line} imports {target} (sandbox stands alone)")
            if top != "scene_engine" or name in TOP:
                continue
            theirs = layer_of(target)
            if target in TOP:
                found.append(f"{name}:{line} imports {target} (the API is for callers)")
            elif own and theirs and theirs != own and theirs not in LAYERS[own]:
                found.append(f"{name}:{line} imports {target}: {own} may not import {theirs}")
    return found + circles(modules)


def circles(modules: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Import circles among ``modules`` (lazy imports too), each as ``a -> b -> a``."""
    graph = {name: {t for t, _ in imported if t in modules and t != name}
             for name, imported in modules.items()}
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return [f"circle: {c}" for c in found]


def all_modules() -> dict[str, list[tuple[str, int]]]:
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "sandbox").rglob("*.py")]
    return {module_name(p): imports(p) for p in files if "__pycache__" not in p.parts}


def test_every_subpackage_is_a_known_layer_and_says_what_it_may_import():
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages == set(LAYERS)
    for layer in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text("utf-8")))
        assert doc and "May import" in doc, f"{layer}/__init__.py must say what it may import"
    flat = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert flat == ["engine.py"], f"modules outside the layers: {flat}"


def test_imports_point_down_the_layers_and_there_is_no_circle():
    assert problems(all_modules()) == []


@pytest.mark.parametrize("planted, expected", [
    ({"scene_engine.store.history": [("scene_engine.batch.rules", 7)]},
     "store may not import batch"),
    ({"scene_engine.services.add": [("typer", 3)]}, "imports typer (only in cli)"),
    ({"scene_engine.core.fs": [("scene_engine.core.text", 1)],
      "scene_engine.core.text": [("scene_engine.core.fs", 2)]}, "circle:"),
    ({"sandbox.core": [("scene_engine.store.scene", 4)]}, "sandbox stands alone"),
])
def test_the_checker_sees_a_wrong_way_import(planted, expected):
    modules = all_modules()
    for name, extra in planted.items():
        modules[name] = modules.get(name, []) + extra
    assert any(expected in p for p in problems(modules)), problems(modules)


def test_every_command_is_in_the_design_and_has_help():
    from typer.main import get_command

    from scene_engine.cli import app

    design = (ROOT / "docs" / "DESIGN.md").read_text("utf-8")
    table = design.split("## Command line", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^scenes (?:\[--dir DIR\] )?([a-z]+)", table, re.MULTILINE))
    commands = get_command(app).commands
    assert set(commands) <= documented, sorted(set(commands) - documented)
    for name, command in commands.items():
        assert (command.help or "").strip(), f"`scenes {name}` has no help text"



def exception_problems(files: list[Path]) -> list[str]:
    """Every exception class defined in ``files`` whose bases (followed by name through the
    classes the files define) reach a built-in ``Exception`` but not ``SceneEngineError``: a
    second error root. Warnings and ``BaseException`` signals (``Terminated``) are not errors,
    and the disk's ``OSError`` stays what it is (DESIGN "Errors": a link where a file should be,
    ``fs.NotRegularFile``, is a disk fault the faces say apart)."""
    import builtins

    bases: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.attr if isinstance(b, ast.Attribute)
                                    else getattr(b, "id", "") for b in node.bases]
                where[node.name] = f"{path.name}:{node.lineno}"

    def chain(name: str, seen: frozenset = frozenset()) -> set[str]:
        found = {name}
        for base in bases.get(name, []):
            if base not in seen:
                found |= chain(base, seen | {name})
        return found

    def is_error(name: str) -> bool:
        kind = getattr(builtins, name, None)
        return (isinstance(kind, type) and issubclass(kind, Exception)
                and not issubclass(kind, Warning | OSError))

    return [f"{where[name]} {name} is an error outside SceneEngineError"
            for name in bases if name != "SceneEngineError"
            and any(is_error(n) for n in chain(name)) and "OSError" not in chain(name)
            and "SceneEngineError" not in chain(name)]


def test_every_error_the_engine_defines_has_the_one_root():
    assert exception_problems(sorted(PACKAGE.rglob("*.py"))) == []


def test_the_error_checker_sees_a_second_root(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("class _HeaderError(ValueError):\n    pass\n\n"
                       "class Worse(_HeaderError):\n    pass\n")
    found = exception_problems([*sorted(PACKAGE.rglob("*.py")), planted])
    assert [p.split()[1] for p in found] == ["_HeaderError", "Worse"]

