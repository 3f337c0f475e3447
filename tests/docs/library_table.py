"""What the docs checks share: the rows of docs/architecture.md's library table, how a difference
between two sets of names is worded, and how a check reports."""
import re
import sys


def table_rows(path):
    """The rows between <!-- layering:begin --> and <!-- layering:end -->, as (line, cells) with
    at least the four cells | layer | library | links | role |."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- layering:begin -->(.*?)<!-- layering:end -->", text, re.S)
    if not m:
        sys.exit(f"{path}: no <!-- layering:begin --> ... <!-- layering:end --> table")
    first_line = text[: m.start()].count("\n") + 1
    rows = []
    for offset, line in enumerate(m.group(1).splitlines()):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4:
            rows.append((first_line + offset, cells))
    return rows


OPTIONAL = re.compile(r"\s*\(built only with `(\w+)`\)")


def built_only_with(role):
    """The CMake option a row's role cell says the library needs ("(built only with `OPTION`)"),
    or None for a library every build has; and the role without that note."""
    m = OPTIONAL.search(role)
    return (m.group(1) if m else None), OPTIONAL.sub("", role)


def difference(actual, stated, also, lacks):
    """How `stated` differs from `actual`, e.g. "the build also links x; the build does not link y"
    with also="the build also links" and lacks="the build does not link"; "" when they agree."""
    what = []
    if actual - stated:
        what.append(also + " " + ", ".join(sorted(actual - stated)))
    if stated - actual:
        what.append(lacks + " " + ", ".join(sorted(stated - actual)))
    return "; ".join(what)


def report(problems, agreed):
    """Prints each problem and fails, or prints what agreed."""
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(agreed)
