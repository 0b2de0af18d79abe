#!/usr/bin/env python3
"""README.md's table of build options against the CMake files, both ways.

Every user-settable cache variable named MX_* that mx's CMake files declare
(`option(MX_... "help" DEFAULT)` and `set(MX_... VALUE CACHE TYPE "help")`,
INTERNAL ones aside) must have a row in the table under "## Build options",
with the same default; every row must name one of them. Cache entries that
find_path/find_library/find_program fill in (MX_DNNL_LIBRARY, MX_PYTHON3...)
are results of a search, not options, and are not counted. examples/ holds
separate projects built against an installed mx and is not scanned.

Python 3 standard library only. Usage: check_build_options.py [SOURCE_DIR]
"""

import os
import re
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def cmake_files(source_dir):
    for dirpath, dirnames, files in os.walk(source_dir):
        rel = os.path.relpath(dirpath, source_dir)
        # No hidden folders, no build trees, not the separate example projects.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt"))
                             and not (rel == "." and d == "examples"))
        for f in sorted(files):
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                yield os.path.join(dirpath, f)


def strip_comments(text):
    # CMake comments run from # to the end of the line (no # inside our strings' defaults).
    return "\n".join(re.sub(r'#(?=(?:[^"]*"[^"]*")*[^"]*$).*', "", line)
                     for line in text.splitlines())


def declared_options(source_dir):
    """{name: (default, file)} of the MX_* options and cache variables."""
    found = {}
    for path in cmake_files(source_dir):
        text = strip_comments(read(path))
        rel = os.path.relpath(path, source_dir)
        for m in re.finditer(r'\boption\(\s*(MX_\w+)\s+"(?:[^"\\]|\\.)*"\s*(\w*)\s*\)', text):
            found[m.group(1)] = (m.group(2) or "OFF", rel)
        for m in re.finditer(
                r'\bset\(\s*(MX_\w+)\s+("(?:[^"\\]|\\.)*"|[^\s)]*)\s+CACHE\s+(\w+)', text):
            if m.group(3) == "INTERNAL":
                continue
            found[m.group(1)] = (m.group(2).strip('"'), rel)
    return found


def documented_options(readme):
    """{name: default cell} from README.md's '## Build options' table."""
    start = readme.find("\n## Build options\n")
    if start < 0:
        raise ValueError("README.md has no '## Build options' section")
    end = readme.find("\n## ", start + 1)
    section = readme[start:end if end >= 0 else None]
    rows = {}
    for m in re.finditer(r"^\| `(MX_\w+)` \| ([^|]*) \|", section, re.M):
        rows[m.group(1)] = m.group(2).strip()
    return rows


def normalise_default(cell):
    cell = cell.strip()
    if cell in ("empty", "(empty)", "''", '""'):
        return ""
    return cell.strip("`")


def check(source_dir):
    declared = declared_options(source_dir)
    readme = read(os.path.join(source_dir, "README.md"))
    documented = documented_options(readme)
    problems = []
    for name, (default, where) in sorted(declared.items()):
        if name not in documented:
            problems.append(f"{name} ({where}) has no row in README.md's build options table")
        elif normalise_default(documented[name]) != default:
            problems.append(f"{name}: README.md gives the default {documented[name]}, "
                            f"{where} sets {default or 'empty'}")
    for name in sorted(set(documented) - set(declared)):
        problems.append(f"{name} has a row in README.md's build options table but no CMake "
                        "file declares it (option() or set(... CACHE ...))")
    return problems, declared


def main(argv):
    source_dir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems, declared = check(os.path.abspath(source_dir))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} difference(s): edit the table under '## Build options' in "
              "README.md, then rerun tests/docs/check_build_options.py")
        return 1
    print(f"README.md's build options table lists the {len(declared)} MX_* options "
          "with their defaults")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
