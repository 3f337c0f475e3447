#!/usr/bin/env python3
"""Holds the target names docs/architecture.md's library table gives each plugin to the manifests
the build writes (build/lib/tessera/tessera-NAME.targets, at configure time).

A plugin's row says, in its role cell, "`tessera-NAME.so`: `target`, `target` (a device)" or
"every `PREFIX*` name". For every plugin of the table the build made, the row must name exactly its
manifest's entries: its targets, with "(a device)" (or "(by name only...)", for a target that is
not a device but cannot run without an option either) after each one the manifest marks `device`, and
its name prefixes. A plugin the build did not make is not checked, nor one the table lacks (its
library missing from the table fails docs_layering). Each difference is printed as FILE:LINE: what,
and the check fails.

usage: check_targets.py BUILD/lib/tessera docs/architecture.md
"""
import os
import re
import sys

from library_table import built_only_with, difference, report, table_rows


def read_manifests(directory):
    plugins = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".targets"):
            continue
        entries = set()
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if line:
                    entries.add(line[0] + (" device" if "device" in line[1:] else ""))
        plugins[name[: -len(".targets")] + ".so"] = entries
    return plugins


def read_rows(path):
    rows = {}
    for line, cells in table_rows(path):
        m = re.match(r"`(tessera-[\w-]+\.so)`:\s*(.*)", built_only_with(cells[3])[1])
        if m:
            entries = {target + (" device" if device else "")
                       for target, device in re.findall(r"`([^`]+)`(\s*\((?:a device|by name only)[^)]*\))?", m.group(2))}
            rows[m.group(1)] = (entries, line)
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_targets.py BUILD/lib/tessera docs/architecture.md")
    manifest_dir, doc_path = sys.argv[1:]
    manifests = read_manifests(manifest_dir)
    rows = read_rows(doc_path)
    problems = []
    checked = 0
    for plugin, entries in manifests.items():
        if plugin not in rows:
            continue
        checked += 1
        named, line = rows[plugin]
        what = difference(entries, named, "its manifest also has", "its manifest has no")
        if what:
            problems.append(f"{doc_path}:{line}: {plugin}: {what}")
    report(problems, f"targets: the {checked} plugins of the build that {doc_path} names register what it says")


if __name__ == "__main__":
    main()
