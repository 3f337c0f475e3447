#!/usr/bin/env python3
"""Holds every repository path the docs name to the tree, so a renamed or removed file leaves no
dead reference behind.

The docs are README.md, docs/*.md and every other README.md of the tree; CHANGELOG.md is left out,
since it names files as they were. Fenced blocks (examples, output) are not read. Looked up:
  - in code spans, every word shaped like a path:
    - one whose first part is a top-level entry of the tree (`compiler/graph/src/link.cpp`,
      `scripts/README.md`) must exist from the root (or from the doc's own directory);
    - one in a directory's README (`src/board.cpp` in runtime/README.md) must exist under that
      directory, as written or as the end of a path below it (the README's table says which
      subdirectory it speaks of), not elsewhere;
    - an include path (`tessera/support/error.h`, `vta/driver.h`) must exist under some include/;
    - any other path with a slash that ends in a file name or a slash must be the end of some
      path of the tree;
    - a bare file name with a source or document extension (`emit.cpp`, `graph.md`) must be the
      name of some file of the tree;
  - in prose, every path that starts at a top-level directory and ends in such a file name
    (docs/rtl.md, tests/runtime/label_target_tests.cmake.in).
Skipped: paths under build/ (and build-*/), absolute paths, URLs and `remote:` names (a colon),
placeholders (<...>, *, ..., {a,b}, [..], upper-case names such as DIR/ or PREFIX/), an install
prefix's bin/, lib/, share/, and the names below that are not files of this repository. Each dead
reference is printed as FILE:LINE: path, and the check fails.

usage: check_paths.py [SOURCE_DIR]
"""
import os
import re
import sys

# Written by the build or by a run, not kept in the tree (hw/README.md, docs/graph.md, gls/README.md,
# tsim/README.md).
GENERATED = {
    "tessera_config.h", "tessera_config.svh", "tessera_config.tcl", "hls_config.h",
    "host_registers.md", "hls_registers.md", "shipped_configs.cpp", "layering.txt",
    "netlist.ys", "netlist.v", "report.txt", "manifest.txt", "config.json", "yosys.log",
    "mutants.v", "mutant_count.h", "chosen.json", "explore.json",
}
GENERATED_PREFIXES = ("tessera/gen/", "gen/")
# Other projects' files the docs name: VTA's, standalone-vta's, Yosys', Xilinx's.
FOREIGN = {
    "hw_spec.h", "main_vta_compiler.py", "settings64.sh", "cells_sim.v", "sim_driver.cc",
    "vta/src/sim/sim_driver.cc", "memory_addresses.csv", "expected_out.bin",
}
EXTENSIONS = (".cpp", ".h", ".hpp", ".cc", ".c", ".py", ".sh", ".cmake", ".sv", ".svh", ".v",
              ".tcl", ".md", ".json", ".in", ".ys", ".pcf", ".s", ".txt")
SKIP_DIRS = {".git", "build", "node_modules"}
# The top directories of an install prefix (docs/install.md), not the tree's.
INSTALL_DIRS = {"bin", "lib", "share"}


class Tree:
    def __init__(self, root):
        files, dirs = [], []
        for base, subdirs, names in os.walk(root):
            subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and not d.startswith("build-")]
            rel = os.path.relpath(base, root).replace(os.sep, "/")
            if rel != ".":
                dirs.append(rel)
            files += [n if rel == "." else rel + "/" + n for n in names]
        self.files = files
        self.paths = set(files) | set(dirs)
        self.top = {p.split("/")[0] for p in self.paths}
        self.names = {p.rsplit("/", 1)[-1] for p in self.paths}
        self.includes = set()
        for p in self.paths:
            parts = p.split("/")
            if "include" in parts:
                self.includes.add("/".join(parts[parts.index("include") + 1:]))

    def ends(self, path, under=""):
        suffix = "/" + path
        return any(p.startswith(under) and ("/" + p).endswith(suffix) for p in self.paths)

    def included(self, path):
        return path in self.includes or ("tessera/" + path) in self.includes

    def code_path_exists(self, doc_dir, word):
        """Whether a path-shaped word of a code span names something of the tree (or is not ours)."""
        path = word.rstrip("/")
        name = path.rsplit("/", 1)[-1]
        if word in FOREIGN or name in FOREIGN or name in GENERATED or word.startswith(GENERATED_PREFIXES):
            return True
        if word.startswith(("/", "build/", "build-", "../")):
            return True
        if "/" not in word:
            return path in self.names
        first = path.split("/")[0]
        if doc_dir and (doc_dir + "/" + first in self.paths or first not in self.top):
            if doc_dir + "/" + path in self.paths or self.ends(path, doc_dir + "/"):
                return True
            if first not in self.top and first not in ("tessera", "vta") and first not in INSTALL_DIRS:
                return not (word.endswith("/") or name.endswith(EXTENSIONS))
        if first in self.top:
            return path in self.paths or self.included(path)
        if first in ("tessera", "vta"):
            return path in self.includes
        if first in INSTALL_DIRS:
            return True
        if not (word.endswith("/") or name.endswith(EXTENSIONS)):
            return True  # a/b in prose: I/N, xc7/xcup, a benchmark's name
        return self.ends(path) or self.included(path)


def docs(tree):
    found = ["README.md"] + sorted(p for p in tree.files if re.fullmatch(r"docs/[^/]+\.md", p))
    found += sorted(p for p in tree.files if p.endswith("/README.md") and not p.startswith("tests/fuzz/corpus/"))
    return found


def path_words(span):
    """The words of a code span shaped like a path: letters, digits, _ . + - and slashes only (no
    formula, option, URL or remote: name), no placeholder (<...>, ..., an upper-case first part such
    as DIR/ or FILE.json), and a slash or a file extension."""
    for w in span.split():
        w = w.strip(",;()'\"").rstrip(".")
        if "=" in w:  # CONFIG_JSON=scripts/fpga/tiny.json
            w = w.split("=", 1)[1]
        if not re.fullmatch(r"[A-Za-z0-9_.+/-]+", w) or w.startswith(("-", ".")) or "..." in w:
            continue
        first = w.split("/")[0]
        if re.fullmatch(r"[A-Z][A-Z0-9_]*(\.[a-z]+)?", first) and first != "README.md":
            continue
        if "/" in w or w.endswith(EXTENSIONS):
            yield w


def dead_references(tree, doc, text):
    doc_dir = os.path.dirname(doc)
    if doc_dir == "docs":
        doc_dir = ""  # docs/ name paths from the root, and each other by bare name
    # Blank out fenced blocks, keeping the line count.
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    text = "\n".join(lines)

    def line_of(offset):
        return text.count("\n", 0, offset) + 1

    for m in re.finditer(r"`([^`]+)`", text):  # a code span may run over a line break
        for w in path_words(m.group(1)):
            if not tree.code_path_exists(doc_dir, w):
                yield line_of(m.start()), w
    prose = re.sub(r"`[^`]+`", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in re.finditer(r"(?<![\w/.-])([A-Za-z0-9_.-]+/[A-Za-z0-9_.+/-]*[A-Za-z0-9_])", prose):
        w = m.group(1)
        if w.split("/")[0] in tree.top and w.split("/")[0] != "build" and w.endswith(EXTENSIONS):
            if w not in tree.paths:
                yield line_of(m.start()), w


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    tree = Tree(root)
    checked = docs(tree)
    dead = 0
    for doc in checked:
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for line, word in dead_references(tree, doc, f.read()):
                print(f"{doc}:{line}: {word}")
                dead += 1
    if dead:
        sys.exit(f"{dead} dead path(s) in the docs: name the files where they are now, or drop them")
    print(f"paths: every path the {len(checked)} docs name exists")


if __name__ == "__main__":
    main()
