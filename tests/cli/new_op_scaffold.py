#!/usr/bin/env python3
"""The ctest new_op_scaffold: scripts/new-op.sh proven on a copy of the tree.

    new_op_scaffold.py --source DIR --build DIR --work DIR [--cmake CMAKE]

1. Copies the source tree (the files git would commit, or every file but
   build folders and .git where DIR is no git checkout) to WORK/tree.
2. Runs the script's refusals (bad name, unknown family, a registered name,
   uncommitted changes): exit code 2, and nothing changed.
3. Scaffolds one operator and checks that the files it made and edited are
   exactly those the table "The files you touch" of
   docs/adding-an-operator.md says, and those the script says.
4. Configures the copy (the build's options; no build), checks that the
   copy's CMake lists take the new files (the operator's sources in mx_op,
   its test in ctest, test_ops_gpu and the coverage list), and that its
   compile flags are the build's.
5. Compiles only what the script made or changed (the operator, its GPU
   kernels when CUDA is on, registry.cc, unexported_ops.cc, the test) and
   links them before the build's static libraries, whose members of the
   same name they replace. A full build of the copy would take tens of
   minutes; this takes well under one.
6. Runs the operator's test (gradient check, reference case, both recorded
   for test_op_coverage), the GPU kernel coverage and ONNX coverage checks
   over the registry with the new operator, and once more with a wrong
   gradient in the kernels, which must fail: the checks have teeth.

Exit code 0 passed, 1 failed.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

NAME, FAMILY, STEM = "ScaffoldProbe", "nn", "scaffold_probe"
DOC = "docs/adding-an-operator.md"
TABLE_HEADING = "## The files you touch"


class Failure(Exception):
    pass


def run(cmd, cwd=None, env=None, check=True, what=None):
    """Runs cmd; returns (exit code, stdout + stderr). check: fail unless 0."""
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if check and proc.returncode != 0:
        raise Failure("%s failed (exit code %d):\n%s\n%s" % (
            what or Path(str(cmd[0])).name, proc.returncode, shlex.join(map(str, cmd)),
            proc.stdout[-6000:]))
    return proc.returncode, proc.stdout


# --- 1. the copy -------------------------------------------------------------------

def source_files(source, build):
    """The files of the tree, relative: git's view where it is a checkout."""
    if shutil.which("git"):
        proc = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                               "--exclude-standard"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
        if proc.returncode == 0:
            names = [n for n in proc.stdout.decode().split("\0") if n]
            # Not deleted files, nor build folders git does not ignore.
            builds = [str(Path(n).parent) + "/" for n in names if Path(n).name == "CMakeCache.txt"]
            if build.is_relative_to(source):
                builds.append(str(build.relative_to(source)) + "/")
            return [n for n in names if (source / n).is_file()
                    and not any(n.startswith(b) for b in builds)]
    files = []
    for folder, dirs, names in os.walk(source):
        here = Path(folder)
        dirs[:] = [d for d in dirs if d != ".git" and d != "__pycache__"
                   and here / d != build and not (here / d / "CMakeCache.txt").exists()]
        files += [str((here / n).relative_to(source)) for n in names]
    return files


def copy_tree(source, build, tree):
    for name in source_files(source, build):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, target)


def snapshot(tree):
    digests = {}
    for folder, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            path = Path(folder) / n
            digests[str(path.relative_to(tree))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return digests


def git(tree, *args):
    return run(["git", "-c", "user.name=new_op_scaffold", "-c", "user.email=test@mx.invalid",
                "-c", "commit.gpgsign=false", *args], cwd=tree, what="git " + args[0])[1]


# --- 2. refusals -------------------------------------------------------------------

def check_refusals(tree, use_git):
    script = tree / "scripts/new-op.sh"
    code, out = run([script, "--help"], check=False)
    if code != 0 or "Usage: scripts/new-op.sh" not in out:
        raise Failure("new-op.sh --help: exit code %d, output:\n%s" % (code, out))
    cases = [
        (["9Lives", "--family", FAMILY], "not a C++ identifier"),
        (["Scaffold-Probe", "--family", FAMILY], "not a C++ identifier"),
        ([NAME, "--family", "layers"], "unknown family"),
        ([NAME], "--family is required"),
        (["Activation", "--family", FAMILY], "already registered"),
        (["relu", "--family", "tensor"], "already registered"),  # an operator of a name table
        ([NAME, "--family", FAMILY, "--stem", "nn"], "already exists"),
    ]
    dirty = tree / "lib/op/registry.cc"
    original = dirty.read_text()
    if use_git:
        cases.append(([NAME, "--family", FAMILY], "uncommitted changes"))
    before = snapshot(tree)
    for args, expected in cases:
        if expected == "uncommitted changes":
            dirty.write_text(original + "// an uncommitted change\n")
            before = snapshot(tree)
        code, out = run([script, *args], check=False)
        if code != 2 or expected not in out:
            raise Failure("new-op.sh %s: expected exit code 2 and '%s', got %d:\n%s" % (
                shlex.join(args), expected, code, out))
        if snapshot(tree) != before:
            raise Failure("new-op.sh %s refused but changed the tree" % shlex.join(args))
    dirty.write_text(original)


# --- 3. the files against the doc ---------------------------------------------------

def doc_table(doc):
    """{'new': set, 'edit': set} of the table's files that new-op.sh makes or edits."""
    lines = doc.read_text().splitlines()
    if TABLE_HEADING not in lines:
        raise Failure("%s has no heading '%s'" % (DOC, TABLE_HEADING))
    rows, started = [], False
    for line in lines[lines.index(TABLE_HEADING) + 1:]:
        if line.startswith("|"):
            started = True
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif started:
            break
    if len(rows) < 3 or rows[0][:3] != ["file", "what goes there", "made by"]:
        raise Failure("%s: the table under '%s' must have the columns file, what goes there, "
                      "made by; found %s" % (DOC, TABLE_HEADING, rows[:1]))
    files = {"new": set(), "edit": set()}
    for row in rows[2:]:
        if len(row) != 3:
            raise Failure("%s: a row of the files table without 3 cells: %s" % (DOC, row))
        kind = {"new-op.sh (new)": "new", "new-op.sh (edit)": "edit"}.get(row[2])
        if kind is None and "new-op.sh" in row[2]:
            raise Failure("%s: 'made by' must be 'new-op.sh (new)' or 'new-op.sh (edit)', "
                          "not '%s'" % (DOC, row[2]))
        names = re.findall(r"`([^`]+)`", row[0])
        if not names:
            raise Failure("%s: a row of the files table names no file: %s" % (DOC, row))
        for n in names:
            n = n.replace("<family>", FAMILY).replace("<stem>", STEM)
            if kind:
                files[kind].add(n)
    return files


def printed_files(output):
    """The 'created:' and 'edited:' lists new-op.sh prints."""
    files, section = {"new": set(), "edit": set()}, None
    for line in output.splitlines():
        if line in ("created:", "edited:"):
            section = "new" if line == "created:" else "edit"
        elif section and line.startswith("  "):
            files[section].add(line.strip())
        else:
            section = None
    return files


def compare(what, table, got):
    if table != got:
        raise Failure("%s differ: only in the doc's table: %s; only in new-op.sh's: %s" % (
            what, ", ".join(sorted(table - got)) or "-", ", ".join(sorted(got - table)) or "-"))


# --- 4. configuration -----------------------------------------------------------------

def configure(cmake, tree, out, build, generator, make_program):
    """Configures the copy with the build's options (no benchmarks, sanitizer builds)."""
    forced = {"MX_SANITIZER_TESTS": "OFF", "MX_BUILD_BENCHMARKS": "OFF",
              "MX_BUILD_FUZZERS": "OFF", "MX_BUILD_TESTS": "ON"}
    options = []
    keep = re.compile(r"^(MX_\w+|CMAKE_BUILD_TYPE|CMAKE_(C|CXX|CUDA)_COMPILER|"
                      r"CMAKE_CUDA_ARCHITECTURES|CMAKE_(C|CXX|CUDA|EXE_LINKER)_FLAGS(_\w+)?)$")
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z_]\w*):(BOOL|STRING|PATH|FILEPATH)=(.*)$", line)
        if m and keep.match(m.group(1)) and m.group(1) not in forced:
            options.append("-D%s:%s=%s" % m.groups())
    options += ["-D%s=%s" % kv for kv in forced.items()]
    cmd = [cmake, "-S", tree, "-B", out, "-G", generator, *options]
    if make_program:
        cmd.append("-DCMAKE_MAKE_PROGRAM=" + make_program)
    run(cmd, what="configuring the copy")


def compile_db(build_dir):
    return json.loads((build_dir / "compile_commands.json").read_text())


def arguments(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    # Dependency files would go into the build's folders: not needed here.
    # Response files (nvcc's include folders with Makefiles) are read in.
    out, skip = [], None
    for a in args:
        if skip == "--options-file":
            out += shlex.split(Path(entry["directory"], a).read_text())
            skip = None
        elif skip:
            skip = None
        elif a == "--options-file":
            skip = a
        elif a in ("-MD", "-MMD"):
            pass
        elif a in ("-MT", "-MF", "-MQ"):
            skip = a
        else:
            out.append(a)
    return out


def output_of(args):
    return args[args.index("-o") + 1] if "-o" in args else ""


def find_entry(db, file, target=None):
    found = [e for e in db if Path(e["directory"], e["file"]) == file
             and (target is None or "/%s.dir/" % target in "/" + output_of(arguments(e)))]
    return found[0] if found else None


def normalized(entry, roots):
    """An entry's arguments but the object, with its source and build folders
    as placeholders."""
    args = arguments(entry)
    if "-o" in args:
        del args[args.index("-o"):args.index("-o") + 2]
    text = shlex.join(args)
    for path, mark in sorted(roots.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(path, mark)
    return text


# --- 5. compile and link --------------------------------------------------------------

def compile_all(entries):
    """Compiles the entries in parallel; returns {file: object path}. Fails on
    errors, and on warnings in the files new-op.sh made."""
    def one(entry):
        args = arguments(entry)
        obj = Path(entry["directory"], output_of(args))
        obj.parent.mkdir(parents=True, exist_ok=True)
        code, out = run(args, cwd=entry["directory"], check=False)
        return entry["file"], obj, code, out

    objects = {}
    workers = max(1, min(len(entries), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for file, obj, code, out in pool.map(one, entries):
            if code != 0:
                raise Failure("compiling %s failed:\n%s" % (file, out[-8000:]))
            warnings = [l for l in out.splitlines() if "warning" in l and STEM in l]
            if warnings:
                raise Failure("warnings compiling %s:\n%s" % (file, out[-8000:]))
            objects[file] = obj
    return objects


def link_command(copy_build, target, generator, make_program, build):
    """The copy's link command of `target` and the folder to run it in (in the
    build, so that its relative paths name the build's libraries)."""
    if "Ninja" in generator:
        _, out = run([make_program or "ninja", "-C", copy_build, "-t", "commands", target],
                     what="ninja -t commands")
        line = [l for l in out.splitlines() if l.strip()][-1]
        cwd = build
    else:
        link_txt = next(copy_build.rglob("CMakeFiles/%s.dir/link.txt" % target), None)
        if link_txt is None:
            raise Failure("no link.txt for %s in the copy's build" % target)
        line = link_txt.read_text().strip().splitlines()[-1]
        cwd = build / link_txt.parent.parent.parent.relative_to(copy_build)
    tokens = shlex.split(line)
    # Ninja wraps it as ': && c++ ... && :'.
    parts, current = [], []
    for t in tokens:
        if t == "&&":
            parts.append(current)
            current = []
        else:
            current.append(t)
    parts.append(current)
    command = [p for p in parts if "-o" in p]
    if len(command) != 1:
        raise Failure("cannot read the link command of %s: %s" % (target, line))
    return command[0], cwd


def link(copy_build, target, objects, exe, keep, generator, make_program, build):
    """Links `objects` (absolute) in place of the copy's objects of `target`
    that do not match `keep`, before the build's libraries."""
    cmd, cwd = link_command(copy_build, target, generator, make_program, build)
    own = "CMakeFiles/%s.dir/" % target
    out, placed = [], False
    i = 0
    while i < len(cmd):
        t = cmd[i]
        if t == "-o":
            out += ["-o", str(exe)]
            i += 2
            continue
        if t.endswith((".o", ".obj")) and own in t:
            if not placed:
                out += [str(o) for o in objects]
                placed = True
            if keep and re.search(keep, t):
                if not (cwd / t).exists():
                    raise Failure("%s is missing: build the tree first" % (cwd / t))
                out.append(t)
        else:
            if t.endswith(".a") and not (cwd / t).exists() and not os.path.isabs(t):
                raise Failure("%s is missing: build the tree first" % (cwd / t))
            out.append(t)
        i += 1
    if not placed:
        raise Failure("no object of %s in its link command: %s" % (target, shlex.join(cmd)))
    run(out, cwd=cwd, what="linking " + exe.name)


def check_passed(output, what, at_least=1):
    """doctest's summary: at least `at_least` test cases ran, and all passed."""
    m = re.search(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", output)
    if not m:
        raise Failure("%s printed no doctest summary:\n%s" % (what, output[-4000:]))
    cases, passed = int(m.group(1)), int(m.group(2))
    if cases < at_least or passed != cases:
        raise Failure("%s: %d test cases, %d passed:\n%s" % (what, cases, passed, output[-4000:]))
    print("%s: %d test cases passed" % (what, cases))


# --- the test ---------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--ctest", default="ctest")
    parser.add_argument("--generator", default="")
    parser.add_argument("--make-program", default="")
    a = parser.parse_args()
    source, build, work = a.source.resolve(), a.build.resolve(), a.work.resolve()
    generator = a.generator
    if not generator:
        m = re.search(r"^CMAKE_GENERATOR:INTERNAL=(.*)$", (build / "CMakeCache.txt").read_text(),
                      re.M)
        generator = m.group(1) if m else "Unix Makefiles"
    times, start = [], time.monotonic()

    def step(what):
        times.append((what, time.monotonic()))
        print("--", what, flush=True)

    step("copy the tree")
    shutil.rmtree(work, ignore_errors=True)
    tree, copy_build, objs = work / "tree", work / "build", work / "bin"
    tree.mkdir(parents=True)
    objs.mkdir()
    copy_tree(source, build, tree)
    use_git = shutil.which("git") is not None
    if use_git:
        git(tree, "init", "-q")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "the tree before new-op.sh")
    else:
        print("git not found: the refusal of uncommitted changes is not checked")

    step("new-op.sh's refusals")
    check_refusals(tree, use_git)

    step("new-op.sh %s --family %s" % (NAME, FAMILY))
    before = snapshot(tree)
    _, output = run([tree / "scripts/new-op.sh", NAME, "--family", FAMILY], what="new-op.sh")
    print(output)
    after = snapshot(tree)
    changed = {
        "new": {f for f in after if f not in before},
        "edit": {f for f in after if f in before and after[f] != before[f]},
    }
    if set(before) - set(after):
        raise Failure("new-op.sh deleted files: %s" % sorted(set(before) - set(after)))
    table = doc_table(tree / DOC)
    for kind in ("new", "edit"):
        word = "made" if kind == "new" else "edited"
        compare("the files %s (%s, 'new-op.sh (%s)') and those new-op.sh %s" % (
            word, DOC, kind, word), table[kind], changed[kind])
        compare("the files %s (%s, 'new-op.sh (%s)') and those new-op.sh printed as %s" % (
            word, DOC, kind, word), table[kind], printed_files(output)[kind])
    op_cc = tree / ("lib/op/%s/%s.cc" % (FAMILY, STEM))
    gpu_cu = tree / ("lib/op/cuda/%s_gpu.cu" % STEM)
    test_cc = tree / ("tests/op/test_ops_%s.cc" % STEM)

    step("configure the copy")
    configure(a.cmake, tree, copy_build, build, generator, a.make_program)
    db, real_db = compile_db(copy_build), compile_db(build)
    roots_copy = {str(tree): "@SOURCE@", str(copy_build): "@BUILD@"}
    roots_real = {str(source): "@SOURCE@", str(build): "@BUILD@"}
    cuda = any(e["file"].endswith(".cu") for e in real_db)
    onnx = find_entry(real_db, source / "lib/onnx/unexported_ops.cc") is not None
    # The copy compiles as the build does (else its objects would not fit the libraries).
    samples = [("lib/op/registry.cc", "mx_op"), ("tests/op/test_ops_nn.cc", "test_ops_nn")]
    if cuda:
        samples.append(("lib/op/cuda/lrn_gpu.cu", "mx_op"))
    for rel, target in samples:
        mine, theirs = find_entry(db, tree / rel, target), find_entry(real_db, source / rel, target)
        if mine is None or theirs is None:
            raise Failure("%s (%s) is missing from compile_commands.json" % (rel, target))
        if normalized(mine, roots_copy) != normalized(theirs, roots_real):
            raise Failure("the copy's configuration compiles %s otherwise than the build:\n%s\n%s"
                          % (rel, normalized(mine, roots_copy), normalized(theirs, roots_real)))
    # The CMake lists take the new files.
    wanted = [(op_cc, "mx_op"), (tree / "lib/op/registry.cc", "mx_op"),
              (test_cc, "test_ops_" + STEM), (test_cc, "test_ops_gpu")]
    if cuda:
        wanted.append((gpu_cu, "mx_op"))
    if onnx:
        wanted.append((tree / "lib/onnx/unexported_ops.cc", "mx_onnx"))
    entries = []
    for file, target in wanted:
        e = find_entry(db, file, target)
        if e is None:
            raise Failure("the copy's CMake lists do not build %s in %s" % (
                file.relative_to(tree), target))
        if target != "test_ops_gpu":
            entries.append(e)
    coverage = find_entry(db, tree / "tests/op/test_op_coverage.cc", "test_op_coverage")
    if coverage is None or ("test_ops_%s.txt" % STEM) not in shlex.join(arguments(coverage)):
        raise Failure("test_op_coverage does not read test_ops_%s's coverage file" % STEM)
    _, listed = run([a.ctest, "-N"], cwd=copy_build, what="ctest -N")
    if not re.search(r"Test\s+#\d+: test_ops_%s$" % STEM, listed, re.M):
        raise Failure("the copy's ctest has no test test_ops_%s" % STEM)
    if not cuda:
        print("this build has no CUDA: %s is not compiled" % gpu_cu.relative_to(tree))

    step("compile %d files" % len(entries))
    objects = compile_all(entries)
    lib_objects = [objects[str(f)] for f in (op_cc, tree / "lib/op/registry.cc")]
    if cuda:
        lib_objects.append(objects[str(gpu_cu)])
    link_args = dict(generator=generator, make_program=a.make_program, build=build)

    step("link and run test_ops_%s" % STEM)
    exe = objs / ("test_ops_" + STEM)
    link(copy_build, "test_ops_" + STEM, [objects[str(test_cc)]] + lib_objects, exe, None,
         **link_args)
    coverage_file = objs / "coverage.txt"
    env = dict(os.environ, MX_OP_COVERAGE_FILE=str(coverage_file))
    _, out = run([exe], env=env, what="test_ops_" + STEM)
    print(out)
    check_passed(out, exe.name, at_least=2)
    recorded = set(coverage_file.read_text().splitlines())
    for kind in ("gradient", "reference"):
        if "%s %s" % (kind, NAME) not in recorded:
            raise Failure("test_ops_%s recorded no %s check of %s for test_op_coverage" % (
                STEM, kind, NAME))

    step("GPU kernel and ONNX coverage with %s registered" % NAME)
    exe = objs / "test_gpu_kernel_coverage"
    link(copy_build, "test_gpu_kernel_coverage", lib_objects, exe, r"test_gpu_kernel_coverage",
         **link_args)
    _, out = run([exe], what="test_gpu_kernel_coverage")
    check_passed(out, exe.name)
    if onnx:
        exe = objs / "test_onnx_coverage"
        onnx_obj = objects[str(tree / "lib/onnx/unexported_ops.cc")]
        link(copy_build, "test_onnx", lib_objects + [onnx_obj], exe, r"test_onnx_coverage",
             **link_args)
        _, out = run([exe], what="test_onnx_coverage")
        check_passed(out, exe.name)
    else:
        print("this build has no ONNX: its coverage is not checked")

    step("a wrong gradient must fail test_ops_%s" % STEM)
    kernels = tree / ("lib/op/%s/%s_kernels.h" % (FAMILY, STEM))
    text = kernels.read_text()
    gradient = "assign(dx + i, req, scale * dyi)"
    if text.count(gradient) != 1:
        raise Failure("%s: cannot find the gradient '%s' to break" % (kernels, gradient))
    kernels.write_text(text.replace(gradient, gradient.replace("scale *", "(scale + scale) *")))
    broken = compile_all([find_entry(db, op_cc, "mx_op")])[str(op_cc)]
    exe = objs / ("test_ops_%s_broken" % STEM)
    link(copy_build, "test_ops_" + STEM, [objects[str(test_cc)], broken] + lib_objects[1:], exe,
         None, **link_args)
    code, out = run([exe], env=env, check=False)
    if code == 0 or "gradient check of " + NAME not in out:
        raise Failure("test_ops_%s passed with a wrong gradient (exit code %d):\n%s" % (
            STEM, code, out[-3000:]))
    kernels.write_text(text)

    step("done")
    shutil.rmtree(work, ignore_errors=True)  # kept only when the test fails
    print("\ntimes (seconds):")
    for (what, t0), (_, t1) in zip(times, times[1:]):
        print("  %6.1f  %s" % (t1 - t0, what))
    print("  %6.1f  in all" % (time.monotonic() - start))


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
