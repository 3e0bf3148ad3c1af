#!/usr/bin/env python3
"""Fails when a module of libredio.so imports upward, or files import each
other in a circle.

The layers of preload/src, top to bottom (docs/architecture.md, "Layers of
libredio.so"); each is one directory, and a module may import only from
its own layer or the layers below it:

    exports > lifecycle > io > coord > {parity, ft} > state > comm > sys

parity and ft share a level and never import each other. Imports are read
from `crate::...` paths (and `super::` inside a layer); `crate::log!` counts
as an import of sys::log. Prints the measures the layering issue asked for:
files in import cycles, the longest file, and upward imports.

Usage: scripts/check_layers.py [preload/src]
"""
import os
import re
import sys

LEVEL = {"exports": 7, "lifecycle": 6, "io": 5, "coord": 4, "parity": 3,
         "ft": 3, "state": 2, "comm": 1, "sys": 0}


def modules(root):
    """Module path (a::b) -> source text, for every .rs file under root."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            module = os.path.relpath(path, root)[:-3].replace("/", "::")
            if module.endswith("::mod"):
                module = module[: -len("::mod")]
            if module == "lib":
                module = ""
            with open(path, encoding="utf-8") as f:
                found[module] = (path, f.read())
    return found


def split_top(text):
    """Splits `a, b::{c, d}, e` at its top-level commas."""
    depth, item, items = 0, "", []
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(item)
            item = ""
        else:
            item += ch
    items.append(item)
    return [i.strip() for i in items if i.strip()]


PATH = re.compile(r"crate::((?:[a-z_0-9]+::)*\{[^;]*?\}|(?:[a-z_0-9]+::)*[A-Za-z_0-9]+)")


def imports(module, source, known):
    """The modules of `known` that `module` names."""
    def resolve(path):
        parts = path.split("::")
        for i in range(len(parts), 0, -1):
            candidate = "::".join(parts[:i])
            if candidate in known:
                return candidate
        return None

    code = re.sub(r"//.*", "", source)
    parent = module.rsplit("::", 1)[0] if "::" in module else ""
    code = re.sub(r"\bsuper::", "crate::" + (parent + "::" if parent else ""), code)
    found = set()
    for match in PATH.finditer(code):
        path = match.group(1)
        if "{" in path:
            prefix, rest = path.split("{", 1)
            for item in split_top(rest.rsplit("}", 1)[0]):
                item = item.split("{")[0].rstrip(":").strip()
                if item == "self":
                    target = resolve(prefix.rstrip(":"))
                else:
                    target = resolve(prefix + item.split(" as ")[0])
                if target is not None:
                    found.add(target)
        else:
            target = resolve(path)
            if target is not None:
                found.add(target)
    if "crate::log!" in code and "sys::log" in known:
        found.add("sys::log")
    found.discard(module)
    return found


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def layer(module):
    return module.split("::")[0] if module else None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "preload", "src")
    found = modules(root)
    graph = {m: imports(m, src, found) for m, (_, src) in found.items()}
    # A parent module (mod.rs) only declares its children: not an import.
    for m in graph:
        graph[m] = {t for t in graph[m] if not t.startswith(m + "::") or m == ""}
    problems = []
    for m, targets in sorted(graph.items()):
        here = layer(m)
        if here is None:
            continue
        if here not in LEVEL:
            problems.append(f"{found[m][0]}: module outside every layer ({here})")
            continue
        for t in sorted(targets):
            there = layer(t)
            if there is None or there == here:
                continue
            if there not in LEVEL:
                continue
            if LEVEL[there] > LEVEL[here] or (LEVEL[there] == LEVEL[here]):
                problems.append(f"{found[m][0]}: {m} ({here}) imports {t} ({there}), "
                                "a layer that is not below it")
    circles = cycles(graph)
    for circle in circles:
        problems.append("import cycle: " + " -> ".join(circle))
    longest = max((len(src.splitlines()), path) for path, src in found.values())
    pmpi = sorted({layer(m) for m, (_, src) in found.items() if "pmpi::" in src})
    print(f"files in import cycles: {sum(len(c) for c in circles)}")
    print(f"longest file: {longest[1]} ({longest[0]} lines)")
    print(f"layers that call PMPI: {', '.join(l or 'lib' for l in pmpi)}")
    for problem in problems:
        print("error:", problem)
    if problems:
        print(f"{len(problems)} layering errors (rules: preload/src/lib.rs, docs/architecture.md)")
        return 1
    print("layers: every import runs downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
