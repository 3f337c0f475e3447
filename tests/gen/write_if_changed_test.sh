#!/usr/bin/env bash
# tessera-gen rewrites an output only when its content changes, so a rebuilt generator does not
# re-verilate or recompile anything (Ninja restats custom-command outputs).
# Usage: write_if_changed_test.sh PATH/TO/tessera-gen
set -eu
GEN=${1:?usage: write_if_changed_test.sh PATH/TO/tessera-gen}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$GEN" --config small --sv "$WORK/c.svh" --cpp "$WORK/c.h"
before=$(stat -c %y "$WORK/c.svh" "$WORK/c.h")
sleep 0.05
"$GEN" --config small --sv "$WORK/c.svh" --cpp "$WORK/c.h"
[ "$(stat -c %y "$WORK/c.svh" "$WORK/c.h")" = "$before" ] || { echo "FAIL: identical output was rewritten"; exit 1; }
echo "// stale" >> "$WORK/c.svh"
"$GEN" --config small --sv "$WORK/c.svh"
if grep -q stale "$WORK/c.svh"; then echo "FAIL: changed output was not rewritten"; exit 1; fi
"$GEN" --config default --sv "$WORK/c.svh"
grep -q "BLOCK_IN = 16;" "$WORK/c.svh" || { echo "FAIL: another config's output was not written"; exit 1; }
echo "write_if_changed: ok"
