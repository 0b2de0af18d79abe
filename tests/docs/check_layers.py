#!/usr/bin/env python3
"""The layers of lib/ as the build declares them, against what the docs say.

Reads every layer's link dependencies from the build (`mx_layer(NAME ... DEPS
...)` and `target_link_libraries(mx_NAME ...)` in lib/NAME/CMakeLists.txt)
and fails, naming the edge, when they differ from

  - the table "layer | links | and through them" in docs/architecture.md
    ("Layers and how they link"), both columns;
  - the mermaid graph in the same section (one `layer --> dependency` per edge);
  - the list in lib/CMakeLists.txt's comment (`#   layer: deps`).

It also fails when a file in lib/Y/ includes a header of a layer X
(`#include "X/..."`) that Y does not link, directly or through others: an
upward (or sideways) include that only builds because every layer puts lib/
on the include path.

Python 3 standard library only. Usage: check_layers.py [SOURCE_DIR]
"""

import os
import re
import sys

# Libraries that are layers without living in lib/: recordio/ (stand-alone)
# and include/mx/ (the C API's public headers, part of capi).
EXTRA_LAYERS = {"recordio": []}
INCLUDE_OWNER = {"mx": "capi"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_cmake_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def declared_deps(source_dir):
    """{layer: set of layers it links} from lib/*/CMakeLists.txt."""
    lib = os.path.join(source_dir, "lib")
    top = read(os.path.join(lib, "CMakeLists.txt"))
    subdirs = re.findall(r"add_subdirectory\((\w+)\)", strip_cmake_comments(top))
    raw = {}
    layers = set(EXTRA_LAYERS)
    links = {}  # target_link_libraries(mx_NAME ...) of any target; layers' kept below
    for sub in subdirs:
        text = strip_cmake_comments(
            read(os.path.join(lib, sub, "CMakeLists.txt")))
        for m in re.finditer(r"mx_layer\(\s*(\w+)(.*?)\)", text, re.S):
            name, body = m.group(1), m.group(2)
            layers.add(name)
            deps = re.search(r"\bDEPS\b(.*)", body, re.S)
            raw.setdefault(name, set()).update(
                re.findall(r"\bmx_(\w+)", deps.group(1)) if deps else [])
        for m in re.finditer(r"target_link_libraries\(\s*mx_(\w+)\b(.*?)\)", text, re.S):
            links.setdefault(m.group(1), set()).update(re.findall(r"\bmx_(\w+)", m.group(2)))
    for name, ds in links.items():
        if name in layers:
            raw[name].update(ds)
    deps = {name: {d for d in ds if d in layers} for name, ds in raw.items()}
    for name, ds in EXTRA_LAYERS.items():
        deps[name] = set(ds)
    return deps


def closure(deps):
    """{layer: every layer it reaches through its links}."""
    out = {}

    def visit(name, seen):
        for d in deps.get(name, ()):
            if d not in seen:
                seen.add(d)
                visit(d, seen)
        return seen

    for name in deps:
        out[name] = visit(name, set())
    return out


def layers_section(architecture_text):
    start = architecture_text.find("\n## Layers and how they link\n")
    if start < 0:
        raise ValueError("docs/architecture.md has no '## Layers and how they link' section")
    end = architecture_text.find("\n## ", start + 1)
    return architecture_text[start:end if end >= 0 else None]


def names_in_cell(cell):
    """Layer names in a table cell: `a`, `b` ...; parenthetical remarks and '-' ignored."""
    cell = re.sub(r"\([^)]*\)", "", cell)
    return set(re.findall(r"`(\w+)`", cell))


def documented_table(section):
    """{layer: (links, through them)} from the section's table."""
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3:
            continue
        name = names_in_cell(cells[0])
        if len(name) != 1:
            continue  # the header, the separator
        rows[name.pop()] = (names_in_cell(cells[1]), names_in_cell(cells[2]))
    if not rows:
        raise ValueError("docs/architecture.md: no 'layer | links | and through them' table "
                         "in 'Layers and how they link'")
    return rows


def documented_graph(section):
    """{layer: links} from the section's mermaid block (`a --> b` lines)."""
    m = re.search(r"```mermaid\n(.*?)```", section, re.S)
    if not m:
        raise ValueError("docs/architecture.md: no mermaid graph in 'Layers and how they link'")
    edges = {}
    for a, b in re.findall(r"^\s*(\w+)\s*-+\.?-*>\s*(\w+)", m.group(1), re.M):
        edges.setdefault(a, set()).add(b)
        edges.setdefault(b, set())
    return edges


def cmake_comment_list(lib_cmake_text):
    """{layer: links} from lines '#   layer: a, b' in lib/CMakeLists.txt's comment."""
    edges = {}
    for name, rest in re.findall(r"^#\s+(\w+):\s*(.*)$", lib_cmake_text, re.M):
        rest = re.sub(r"\([^)]*\)", "", rest)
        edges[name] = set(re.findall(r"\w+", rest)) - {"none"}
    if not edges:
        raise ValueError("lib/CMakeLists.txt: no '#   layer: links' list in its comment")
    return edges


def compare(where, documented, actual, what="links"):
    """Messages for every difference between two {layer: set} maps."""
    problems = []
    for layer in sorted(set(actual) | set(documented)):
        if layer not in documented:
            problems.append(f"{where}: layer {layer} is missing (the build has it)")
            continue
        if layer not in actual:
            problems.append(f"{where}: layer {layer} is not a layer of the build")
            continue
        for dep in sorted(actual[layer] - documented[layer]):
            problems.append(f"{where}: {layer} {what} {dep} in the build, "
                            f"but the edge {layer} -> {dep} is missing")
        for dep in sorted(documented[layer] - actual[layer]):
            problems.append(f"{where}: the edge {layer} -> {dep} is documented, "
                            f"but {layer} does not {what.rstrip('s')} {dep} in the build")
    return problems


def upward_includes(source_dir, reach):
    """Messages for includes of layers a file's layer does not reach."""
    problems = []
    roots = [("lib", None), ("recordio", "recordio")]
    for root, fixed in roots:
        base = os.path.join(source_dir, root)
        for dirpath, _, files in os.walk(base):
            rel = os.path.relpath(dirpath, base)
            layer = fixed or rel.split(os.sep)[0]
            if layer == ".":
                continue
            for f in sorted(files):
                if not f.endswith((".h", ".cc", ".cu", ".cuh", ".hpp")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as source:
                    lines = source.read().splitlines()
                for n, line in enumerate(lines, 1):
                    m = re.match(r'\s*#\s*include\s+"(\w+)/', line)
                    if not m:
                        continue
                    target = INCLUDE_OWNER.get(m.group(1), m.group(1))
                    if target not in reach or target == layer:
                        continue  # not a layer (a sub-folder of this one, a system path)
                    if target not in reach.get(layer, set()):
                        problems.append(
                            f"{os.path.relpath(path, source_dir)}:{n}: layer {layer} includes "
                            f"{m.group(1)}/ but does not link {target} (directly or through "
                            f"others): an upward include")
    return problems


def check(source_dir):
    deps = declared_deps(source_dir)
    reach = closure(deps)
    arch = read(os.path.join(source_dir, "docs", "architecture.md"))
    lib_cmake = read(os.path.join(source_dir, "lib", "CMakeLists.txt"))
    section = layers_section(arch)
    table = documented_table(section)
    problems = []
    problems += compare("docs/architecture.md table, 'links' column",
                        {k: v[0] for k, v in table.items()}, deps)
    problems += compare("docs/architecture.md table, 'and through them' column",
                        {k: v[1] for k, v in table.items()},
                        {k: reach[k] - deps[k] for k in deps}, what="reaches")
    problems += compare("docs/architecture.md mermaid graph", documented_graph(section), deps)
    problems += compare("lib/CMakeLists.txt comment", cmake_comment_list(lib_cmake), deps)
    problems += upward_includes(source_dir, reach)
    return problems, deps


def main(argv):
    source_dir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems, deps = check(os.path.abspath(source_dir))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} difference(s) between the layers the build declares "
              "(lib/*/CMakeLists.txt) and docs/architecture.md / lib/CMakeLists.txt, or upward "
              "includes; fix the docs (or the code), then rerun tests/docs/check_layers.py")
        return 1
    print(f"{len(deps)} layers, {sum(len(d) for d in deps.values())} links: the docs match the "
          "build, and no file includes a layer its layer does not link")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
