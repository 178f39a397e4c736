#!/usr/bin/env python3
"""Regenerate the Python golden data of core/codeintel from Python's own ast.

The Go Python extractor (PythonSymbols, PythonImports and the dependency
graph's module resolution) is tested against what this script derives with
the interpreter's ast module, an independent parser, over real CPython
standard-library files copied into tree/ (see LICENSE-PSF.txt; the copies
keep the test independent of the machine's Python version).

Run from core/codeintel:

    python3 testdata/python/gen_golden.py          # re-derive golden.json from tree/
    python3 testdata/python/gen_golden.py --copy   # first re-copy tree/ from this Python's stdlib

golden.json holds, per file, the symbols [name, kind, parent, start_line,
end_line] and the imports [module, level, is_from, names]; and for the whole
tree the dependency graph: modules [id, path] and edges [from, to, external].
"""
import ast
import json
import os
import shutil
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.join(HERE, "tree")

# Stdlib file -> where it lives under tree/. The email subset sits under
# src/ so that module ids relative to a src/ directory are exercised.
FILES = {
    "json/__init__.py": "json/__init__.py",
    "json/decoder.py": "json/decoder.py",
    "json/encoder.py": "json/encoder.py",
    "json/scanner.py": "json/scanner.py",
    "json/tool.py": "json/tool.py",
    "concurrent/__init__.py": "concurrent/__init__.py",
    "concurrent/futures/__init__.py": "concurrent/futures/__init__.py",
    "concurrent/futures/_base.py": "concurrent/futures/_base.py",
    "concurrent/futures/process.py": "concurrent/futures/process.py",
    "concurrent/futures/thread.py": "concurrent/futures/thread.py",
    "email/__init__.py": "src/email/__init__.py",
    "email/message.py": "src/email/message.py",
    "email/utils.py": "src/email/utils.py",
    "email/errors.py": "src/email/errors.py",
    "email/_policybase.py": "src/email/_policybase.py",
    "email/charset.py": "src/email/charset.py",
    "tokenize.py": "tokenize.py",
    "dataclasses.py": "dataclasses.py",
    "contextlib.py": "contextlib.py",
    "textwrap.py": "textwrap.py",
    "string.py": "string.py",
}

# Hand-written files (not copied) that exercise corners the stdlib set may
# not: they live in tree/ and are parsed like the rest.
EXTRA = ["corners/__init__.py", "corners/tricky.py", "corners/sub/__init__.py", "corners/sub/leaf.py"]


def copy_tree():
    stdlib = sysconfig.get_paths()["stdlib"]
    for src, dst in FILES.items():
        target = os.path.join(TREE, dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(stdlib, src), target)
    shutil.copyfile(os.path.join(stdlib, "LICENSE.txt"), os.path.join(HERE, "LICENSE-PSF.txt"))


def symbols(tree):
    out = []

    def walk(node, parent, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                is_class = isinstance(child, ast.ClassDef)
                kind = "class" if is_class else ("method" if in_class else "function")
                out.append([child.name, kind, parent, child.lineno, child.end_lineno])
                walk(child, child.name if not parent else parent + "." + child.name, is_class)
            else:
                walk(child, parent, in_class)

    walk(tree, "", False)
    out.sort(key=lambda s: (s[3], s[4]))
    return out


def imports(tree):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(((node.lineno, node.col_offset), [alias.name, 0, False, []]))
        elif isinstance(node, ast.ImportFrom):
            found.append(((node.lineno, node.col_offset),
                          [node.module or "", node.level, True, [a.name for a in node.names]]))
    found.sort(key=lambda f: f[0])
    return [f[1] for f in found]


def module_id(path):
    """The dotted id of a .py file: relative to the tree root, or to a
    top-level src/ directory; a package's __init__ names the package."""
    rel = path[len("src/"):] if path.startswith("src/") else path
    parts = rel[: -len(".py")].split("/")
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    return ".".join(parts), package


def graph(per_file):
    modules = {}
    for path in sorted(per_file):
        mid, package = module_id(path)
        if mid and mid not in modules:
            modules[mid] = (path, package)
    edges = set()
    for mid, (path, package) in modules.items():
        pkg = mid if package else mid.rpartition(".")[0]
        for module, level, is_from, names in per_file[path]:
            if not is_from:
                targets = [module]
            else:
                if level:
                    comps = pkg.split(".") if pkg else []
                    if level > len(comps):
                        continue
                    base = ".".join(comps[: len(comps) - (level - 1)])
                    module = base + ("." + module if module else "")
                targets = []
                for n in names:
                    sub = module + "." + n
                    targets.append(sub if n != "*" and sub in modules else module)
            for t in targets:
                edges.add((mid, t, t not in modules))
    return {
        "modules": sorted([mid, p] for mid, (p, _) in modules.items()),
        "edges": sorted([list(e) for e in edges]),
    }


def main():
    if "--copy" in sys.argv[1:]:
        copy_tree()
    files = sorted(list(FILES.values()) + EXTRA)
    golden = {"python": sys.version.split()[0], "symbols": {}, "imports": {}}
    for rel in files:
        with open(os.path.join(TREE, rel), "rb") as f:
            tree = ast.parse(f.read(), filename=rel)
        golden["symbols"][rel] = symbols(tree)
        golden["imports"][rel] = imports(tree)
    golden["graph"] = graph(golden["imports"])
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
