#!/usr/bin/env python3
"""Holds docs/architecture.md's library table to the build's link graph (build/layering.txt).

The table sits between the markers <!-- layering:begin --> and <!-- layering:end -->; each row is
| layer | library | links | role |, with library and links written as `tessera_x` code spans
("-" for none). The check fails, naming each difference, when
  - a library of the build is missing from the table, or the table names one the build lacks (a
    row whose role says "(built only with `OPTION`)" may be absent: it is checked where it is built);
  - a library's links in the table differ from its links in the build;
  - a library links one of a higher layer (dependencies flow one way: the table lists the layers
    bottom up, each layer's rows together, and a library may link its own layer or one below);
  - the layer map above the table (a fenced block under "## Layers", one line per layer:
    "LAYER (what it holds) -> LAYER, LAYER (note), ...") leaves out a layer, names one the table
    lacks, or says a layer links other layers than its libraries' rows do.
"""
import re
import sys

from library_table import built_only_with, difference, report, table_rows


def read_build(path):
    graph = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            name, _, deps = line.partition(":")
            graph[name.strip()] = set(deps.split())
    return graph


def read_table(path):
    rows, layers = {}, []
    for line, cells in table_rows(path):
        if not cells[1].startswith("`"):
            continue
        layer, names, links = cells[0], re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2])
        if layer and layer in layers and layers[-1] != layer:
            sys.exit(f"{path}:{line}: layer {layer} is split: list each layer's libraries together, layers bottom up")
        if layer and layer not in layers:
            layers.append(layer)
        for name in names:
            if name in rows:
                sys.exit(f"{path}:{line}: {name} is listed twice")
            rows[name] = (layer, set(links), line, built_only_with(cells[3])[0])
    return rows, layers


def read_map(path):
    """The layer map: {layer: (set of linked layers, line)} from the first fenced block after
    "## Layers"."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^## Layers\n.*?^```\n(.*?)^```", text, re.S | re.M)
    if not m:
        sys.exit(f"{path}: no fenced layer map under '## Layers'")
    first_line = text[: m.start(1)].count("\n") + 1
    layers = {}
    for offset, line in enumerate(m.group(1).splitlines()):
        name, _, links = line.partition("->")
        name = re.sub(r"\(.*", "", name).strip()
        links = {re.sub(r"\(.*?\)", "", l).strip() for l in links.split(",")} - {""}
        if name:
            layers[name] = (links, first_line + offset)
    return layers


def check_map(doc_path, layer_map, table, layers):
    """The map against the table: each layer links exactly the layers its libraries' rows link
    (the rows themselves are held to the build in main)."""
    problems = []
    for name in layers:
        if name not in layer_map:
            problems.append(f"{doc_path}: the layer map leaves out the layer {name}")
    for name, (links, line) in layer_map.items():
        if name not in layers:
            problems.append(f"{doc_path}:{line}: the layer map names {name}, which the table has no library in")
            continue
        linked = {table[dep][0] for layer, deps, _, _ in table.values() if layer == name
                  for dep in deps if dep in table and table[dep][0] != name}
        what = difference(linked, links, "its libraries also link", "none of its libraries links")
        if what:
            problems.append(f"{doc_path}:{line}: layer {name}: {what}")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_layering.py BUILD/layering.txt docs/architecture.md")
    build_path, doc_path = sys.argv[1:]
    build = read_build(build_path)
    table, layers = read_table(doc_path)
    problems = []
    for name in sorted(build.keys() - table.keys()):
        problems.append(f"{doc_path}: library {name} (links: {' '.join(sorted(build[name])) or '-'}) is not in the table")
    for name in sorted(table.keys() - build.keys()):
        if table[name][3] is None:  # a library only some builds have may be absent from this one
            problems.append(f"{doc_path}:{table[name][2]}: {name} is in the table but the build has no such library")
    rank = {layer: i for i, layer in enumerate(layers)}
    for name in sorted(build.keys() & table.keys()):
        layer, links, line, _ = table[name]
        # A link to a library only some builds have is checked where that library is built.
        stated = {l for l in links if l in build or l not in table or table[l][3] is None}
        what = difference(build[name], stated, "the build also links", "the build does not link")
        if what:
            problems.append(f"{doc_path}:{line}: {name}: {what}")
        for dep in sorted(build[name]):
            if dep in table and rank[table[dep][0]] > rank[layer]:
                problems.append(f"{doc_path}:{line}: {name} (layer {layer}) links {dep} of the higher layer {table[dep][0]}")
    problems += check_map(doc_path, read_map(doc_path), table, layers)
    report(problems, f"layering: {len(build)} libraries in {len(layers)} layers, as {doc_path}'s table and map say")


if __name__ == "__main__":
    main()
