#!/usr/bin/env python3
"""The docs checks find what they are for: each runs on a copy of the files it
reads with one mistake planted, and must report that mistake (and pass on the
unchanged copy). Python 3 standard library only.

Usage: test_doc_checks.py [SOURCE_DIR]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import check_build_options  # noqa: E402
import check_layers  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Copy:
    """A scratch copy of some of the source tree's files (paths relative to it)."""

    def __init__(self, paths):
        self.dir = tempfile.mkdtemp(prefix="mx_doc_checks_")
        for rel in paths:
            src = os.path.join(SOURCE, rel)
            dst = os.path.join(self.dir, rel)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.o", "*.a"))
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(src, dst)

    def edit(self, rel, old, new):
        path = os.path.join(self.dir, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert old in text, f"{rel} no longer contains {old!r}: update this test"
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def close(self):
        shutil.rmtree(self.dir)


def joined(problems):
    return "\n".join(problems)


class Layers(unittest.TestCase):
    def setUp(self):
        self.copy = Copy(["lib", "recordio", "docs/architecture.md"])

    def tearDown(self):
        self.copy.close()

    def problems(self):
        return joined(check_layers.check(self.copy.dir)[0])

    def test_unchanged_copy_passes(self):
        self.assertEqual(self.problems(), "")

    def test_a_new_link_in_the_build_is_named(self):
        self.copy.edit("lib/metric/CMakeLists.txt", "DEPS mx_op", "DEPS mx_op mx_graph")
        found = self.problems()
        self.assertIn("metric links graph in the build, but the edge metric -> graph is missing",
                      found)
        self.assertIn("docs/architecture.md mermaid graph", found)
        self.assertIn("lib/CMakeLists.txt comment", found)

    def test_a_documented_edge_the_build_lacks_is_named(self):
        self.copy.edit("docs/architecture.md", "  kvstore --> optim\n",
                       "  kvstore --> optim\n  kvstore --> io\n")
        self.assertIn("mermaid graph: the edge kvstore -> io is documented, but kvstore does "
                      "not link io", self.problems())

    def test_a_wrong_transitive_column_is_named(self):
        self.copy.edit("docs/architecture.md",
                       "| `io` | `ndarray`, `recordio` | `storage`, `engine`, `base` |",
                       "| `io` | `ndarray`, `recordio` | `storage`, `base` |")
        self.assertIn("'and through them' column: io reaches engine in the build",
                      self.problems())

    def test_a_missing_row_is_named(self):
        self.copy.edit("lib/CMakeLists.txt", "#   viz: graph\n", "")
        self.assertIn("lib/CMakeLists.txt comment: layer viz is missing", self.problems())

    def test_an_upward_include_is_named(self):
        self.copy.write("lib/storage/planted.cc", '#include "base/error.h"\n#include "op/registry.h"\n')
        found = self.problems()
        self.assertIn("lib/storage/planted.cc:2: layer storage includes op/", found)
        self.assertNotIn("planted.cc:1", found)


class BuildOptions(unittest.TestCase):
    def setUp(self):
        paths = ["README.md", "CMakeLists.txt", "cmake", "tests/CMakeLists.txt"]
        self.copy = Copy(paths)

    def tearDown(self):
        self.copy.close()

    def problems(self):
        return joined(check_build_options.check(self.copy.dir)[0])

    def test_unchanged_copy_passes(self):
        self.assertEqual(self.problems(), "")

    def test_an_option_without_a_row_is_named(self):
        self.copy.edit("CMakeLists.txt", 'option(MX_WERROR "Treat warnings as errors" OFF)',
                       'option(MX_WERROR "Treat warnings as errors" OFF)\n'
                       'option(MX_USE_PLANTED "A planted option" ON)')
        self.assertIn("MX_USE_PLANTED (CMakeLists.txt) has no row", self.problems())

    def test_a_cache_variable_without_a_row_is_named(self):
        self.copy.edit("README.md", "| `MX_USE_ONNX` |", "| `MX_USE_ONNX_PLANTED` |")
        found = self.problems()
        self.assertIn("MX_USE_ONNX (CMakeLists.txt) has no row", found)
        self.assertIn("MX_USE_ONNX_PLANTED has a row in README.md's build options table but no "
                      "CMake file declares it", found)

    def test_a_changed_default_is_named(self):
        self.copy.edit("CMakeLists.txt", 'option(MX_NATIVE "Optimize for this machine\'s '
                       'instruction set (-march=native)" OFF)',
                       'option(MX_NATIVE "Optimize for this machine\'s instruction set '
                       '(-march=native)" ON)')
        self.assertIn("MX_NATIVE: README.md gives the default `OFF`, CMakeLists.txt sets ON",
                      self.problems())

    def test_internal_cache_variables_and_comments_do_not_count(self):
        self.copy.edit("CMakeLists.txt", "project(mx ",
                       'set(MX_HIDDEN 1 CACHE INTERNAL "")\n# option(MX_IN_COMMENT "x" ON)\n'
                       "project(mx ")
        self.assertEqual(self.problems(), "")


class BenchmarkTable(unittest.TestCase):
    """scripts/gen_benchmark_table.py --check on a copy of the docs."""

    def setUp(self):
        self.copy = Copy(["README.md", "docs", "scripts/gen_benchmark_table.py"])

    def tearDown(self):
        self.copy.close()

    def run_script(self, *args):
        return subprocess.run(
            [sys.executable, os.path.join(self.copy.dir, "scripts", "gen_benchmark_table.py"),
             "--source-dir", self.copy.dir, *args],
            capture_output=True, text=True)

    def test_unchanged_copy_passes(self):
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_an_edited_figure_in_the_table_fails_and_says_how_to_regenerate(self):
        md = read(os.path.join(self.copy.dir, "docs/benchmarks.md"))
        begin = md.index("<!-- current-figures:begin")
        row = md.index("\n| ", md.index("| --- |", begin))
        line_end = md.index("\n", row + 1)
        self.copy.write("docs/benchmarks.md",
                        md[:line_end] + " planted" + md[line_end:])
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("scripts/gen_benchmark_table.py", result.stdout + result.stderr)
        # Regenerating puts it right.
        self.assertEqual(self.run_script().returncode, 0)
        self.assertEqual(self.run_script("--check").returncode, 0)

    def test_an_edited_results_file_fails_until_regenerated(self):
        tsv = os.path.join(self.copy.dir, "docs/benchmarks/results.tsv")
        text = read(tsv)
        lines = text.splitlines(keepends=True)
        header = lines[0].rstrip("\n").split("\t")
        first = next(i for i, l in enumerate(lines) if i > 0 and l.strip() and not l.startswith("#"))
        cells = lines[first].rstrip("\n").split("\t")
        cells[header.index("mx")] = "12345 planted"
        lines[first] = "\t".join(cells) + "\n"
        self.copy.write("docs/benchmarks/results.tsv", "".join(lines))
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("12345 planted", result.stdout)

    def test_a_link_to_a_missing_log_section_fails(self):
        tsv = os.path.join(self.copy.dir, "docs/benchmarks/results.tsv")
        text = read(tsv)
        header = text.splitlines()[0].split("\t")
        lines = text.splitlines(keepends=True)
        first = next(i for i, l in enumerate(lines) if i > 0 and l.strip() and not l.startswith("#"))
        cells = lines[first].rstrip("\n").split("\t")
        cells[header.index("details")] = "no-such-section"
        lines[first] = "\t".join(cells) + "\n"
        self.copy.write("docs/benchmarks/results.tsv", "".join(lines))
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no-such-section", result.stdout + result.stderr)

    def test_a_link_to_a_missing_heading_fails(self):
        self.copy.edit("docs/gpu.md", "(benchmarks.md#mx-vs-pytorch-on-one-gpu)",
                       "(benchmarks.md#mx-vs-pytorch-on-two-gpus)")
        result = self.run_script("--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("docs/gpu.md:", result.stdout)
        self.assertIn("the link to benchmarks.md#mx-vs-pytorch-on-two-gpus names no heading",
                      result.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
