"""The module map of ipcgrasp.engine: each module with its lines, its largest class and the first
line of its docstring (its job), then the import graph inside the engine (which engine modules
each module imports). Prints Markdown. Run:
.venv/bin/python benchmarks/engine_map.py
"""

import ast
from pathlib import Path

import ipcgrasp.engine

ENGINE = Path(ipcgrasp.engine.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE.parents[1]).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def engine_imports(tree: ast.Module, name: str, is_package: bool) -> set[str]:
    """The ipcgrasp.engine modules `tree` (module `name`) imports, absolute or relative."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(filter(None, [package.rsplit(".", node.level - 1)[0] if node.level > 1 else package,
                                              base]))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def main() -> None:
    paths = sorted(ENGINE.rglob("*.py"))
    names = {module_name(p): p for p in paths}
    print("| module | lines | largest class (lines) | job |\n|---|---|---|---|")
    graph = {}
    for name, path in names.items():
        source = path.read_text()
        tree = ast.parse(source)
        classes = [(n.end_lineno - n.lineno + 1, n.name) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        largest = f"{max(classes)[1]} ({max(classes)[0]})" if classes else ""
        doc = (ast.get_docstring(tree) or "").strip().split("\n")[0]
        print(f"| {name.removeprefix('ipcgrasp.')} | {len(source.splitlines())} | {largest} | {doc} |")
        imported = engine_imports(tree, name, path.name == "__init__.py")
        graph[name] = sorted(m for m in names if m in imported and m != name and m != "ipcgrasp.engine")
    print("\n| module | imports (inside the engine) |\n|---|---|")
    for name, imported in graph.items():
        short = ", ".join(m.removeprefix("ipcgrasp.engine.") for m in imported)
        print(f"| {name.removeprefix('ipcgrasp.')} | {short} |")


if __name__ == "__main__":
    main()
