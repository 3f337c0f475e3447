#!/usr/bin/env bash
# End-to-end tests of tessera regress at scale: shards, JUnit reports, reproducer files and their replay, progress.
# Usage: regress_cli_test.sh PATH/TO/tessera PATH/TO/scripts/regress-slurm.sh [TSIM_CONFIGS]
set -u
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
TESSERA=$(realpath "${1:?usage: regress_cli_test.sh PATH/TO/tessera PATH/TO/regress-slurm.sh}")
SLURM_SCRIPT=$(realpath "${2:?usage: regress_cli_test.sh PATH/TO/tessera PATH/TO/regress-slurm.sh}")
TSIM_CONFIGS=${3:-}
PYTHON=/usr/bin/python3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# Checks that need a model the build left out make the whole test a skip (exit 77, ctest
# SKIP_RETURN_CODE) rather than a pass that silently ran less.
skipped=()


# Per-program outcome without the position and the timings: "seed S: I insns (W work), ~C cycles ok".
outcomes() { sed -nE 's/^\[ *[0-9]+\/[0-9]+\] (seed [0-9]+: [0-9]+ insns \([0-9]+ work\), ~[0-9]+ cycles).*\| (ok|MISMATCH)$/\1 \2/p' "$@" | sort; }

# junit_check FILE TESTS|any FAILURES ERRORS SKIPPED: well-formed XML with those counts, every
# testcase named and timed, and every failure message naming the seed, a target and an address.
junit_check() {
  "$PYTHON" - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
path = sys.argv[1]
failures, errors, skipped = map(int, sys.argv[3:])
root = ET.parse(path).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1, len(suites)
s = suites[0]
cases = s.findall("testcase")
tests = len(cases) if sys.argv[2] == "any" else int(sys.argv[2])
got = (int(s.get("tests")), int(s.get("failures")), int(s.get("errors")), int(s.get("skipped")))
assert got == (tests, failures, errors, skipped), f"counts {got}, expected {(tests, failures, errors, skipped)}"
assert len(cases) == tests, len(cases)
assert sum(1 for c in cases if c.find("failure") is not None) == failures
assert sum(1 for c in cases if c.find("skipped") is not None) == skipped
for c in cases:
    assert c.get("classname") and c.get("name", "").startswith("seed "), c.attrib
    float(c.get("time"))
    f = c.find("failure")
    if f is not None:
        m = f.get("message")
        seed = c.get("name").split()[1]
        assert f"seed {seed}," in m and "target " in m and "first difference at 0x" in m, m
print("\n".join(c.get("name") for c in cases))
PY
}

# --- shards: the union of shards 0..N-1 is the single run, each program exactly once
targets=fsim,fsim:kernels=generic
"$TESSERA" regress --config small --targets $targets --programs 23 --seed 100 --junit single.xml > single.txt 2>&1 \
  && ok || bad "single run failed: $(tail -3 single.txt)"
outcomes single.txt > single.sorted
[ "$(wc -l < single.sorted)" -eq 23 ] && ok || bad "single run lists $(wc -l < single.sorted) programs, expected 23"
for i in 0 1 2 3; do
  "$TESSERA" regress --config small --targets $targets --programs 23 --seed 100 --shard $i/4 --junit shard$i.xml \
    > shard$i.txt 2>&1 && ok || bad "shard $i/4 failed: $(tail -3 shard$i.txt)"
  grep -qE "shard $i/4 \(6 of 23 programs\)|shard $i/4 \(5 of 23 programs\)" shard$i.txt && ok || bad "shard $i/4 summary: $(tail -1 shard$i.txt)"
done
outcomes shard0.txt shard1.txt shard2.txt shard3.txt > shards.sorted
diff single.sorted shards.sorted > /dev/null && ok || bad "shards differ from the single run: $(diff single.sorted shards.sorted | head)"
[ -z "$(sed -E 's/:.*//' shards.sorted | uniq -d)" ] && ok || bad "a seed ran in two shards"
# Seeds are strided: shard 1 of 4 runs seeds 101, 105, ...
grep -qE '^\[1/6\] seed 101:' shard1.txt && grep -qE '^\[2/6\] seed 105:' shard1.txt && ok || bad "shard 1/4 seeds: $(head -2 shard1.txt)"
# The JUnit reports agree too: the shards' test cases are the single run's.
junit_check single.xml 23 0 0 0 > single.names && ok || bad "single.xml: $(cat single.names)"
for i in 0 1 2 3; do junit_check shard$i.xml "$(grep -c '| ok$' shard$i.txt)" 0 0 0; done > shards.names \
  && ok || bad "shard reports: $(tail -3 shards.names)"
[ "$(sort single.names)" = "$(sort shards.names)" ] && ok || bad "JUnit test cases of the shards differ from the single run's"
# Merged, the shards' reports are one report of the run's 23 programs with the same test cases.
expect 0 "merged 4 shard report\\(s\\) into merged.xml: 23 programs, 0 mismatch" -- \
  "$TESSERA" regress --merge-junit merged.xml shard2.xml shard0.xml shard3.xml shard1.xml
# One <testsuites> with the run's counts over the four <testsuite>s, every suite's counts its own.
"$PYTHON" - merged.xml > merged.names <<'PY' && ok || bad "merged report: $(tail -3 merged.names)"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites" and (root.get("tests"), root.get("failures"), root.get("errors")) == ("23", "0", "0"), root.attrib
suites = root.findall("testsuite")
assert len(suites) == 4, len(suites)
assert sum(int(s.get("tests")) for s in suites) == 23
for s in suites:
    assert int(s.get("tests")) == len(s.findall("testcase")), s.attrib
print("\n".join(c.get("name") for c in root.iter("testcase")))
PY
[ "$(sort single.names)" = "$(sort merged.names)" ] && ok || bad "the merged report's test cases differ from the single run's"
expect 1 "shard 3/4 of .* is missing" -- "$TESSERA" regress --merge-junit m.xml shard0.xml shard1.xml shard2.xml
expect 1 "shard1.xml: shard 1/4 again" -- "$TESSERA" regress --merge-junit m.xml shard0.xml shard1.xml shard1.xml shard2.xml shard3.xml
expect 1 "single.xml: is a shard of another run" -- "$TESSERA" regress --merge-junit m.xml shard0.xml single.xml
expect 1 "shard0.txt: is not a report of one tessera regress run" -- "$TESSERA" regress --merge-junit m.xml shard0.txt
expect 2 "give the shard reports" -- "$TESSERA" regress --merge-junit m.xml
expect 2 "unexpected argument 'shard0.xml'" -- "$TESSERA" regress shard0.xml
# More shards than programs: the extra shards run nothing, and say so.
expect 0 "regress: 0 programs .*shard 5/8 \(0 of 3 programs\)" -- "$TESSERA" regress --config small --targets $targets --programs 3 --shard 5/8

# --- bad arguments name the option
expect 2 "--shard '4/4': the index 4 must be below the count 4" -- "$TESSERA" regress --shard 4/4
expect 2 "--shard '0/0': the count must be at least 1" -- "$TESSERA" regress --shard 0/0
expect 2 "--shard 'x/2': the index 'x' is not a decimal number" -- "$TESSERA" regress --shard x/2
expect 2 "--shard '1/-2': the count '-2' is not a decimal number" -- "$TESSERA" regress --shard 1/-2
expect 2 "--shard '3': expected I/N" -- "$TESSERA" regress --shard 3
expect 2 "--shard '': expected I/N" -- "$TESSERA" regress --shard ''
mkdir adir
expect 1 "adir: is a directory; --junit wants a file name" -- "$TESSERA" regress --junit adir --programs 1
expect 1 "nodir/r.xml: directory nodir does not exist" -- "$TESSERA" regress --junit nodir/r.xml --programs 1
echo "my notes" > notes.txt
expect 1 "notes.txt: exists and is not a JUnit report; not replacing it" -- "$TESSERA" regress --junit notes.txt --programs 1
[ "$(cat notes.txt)" = "my notes" ] && ok || bad "notes.txt was changed"
# An earlier report is replaced (CI reruns), as a whole.
expect 0 "JUnit report: single.xml" -- "$TESSERA" regress --config small --targets $targets --programs 2 --junit single.xml
junit_check single.xml 2 0 0 0 > /dev/null && ok || bad "the replaced report is not the new run's"
touch afile
expect 2 "--reproducers 'afile': exists and is not a directory" -- "$TESSERA" regress --reproducers afile
expect 2 "contradict" -- "$TESSERA" regress --reproducers r --no-reproducers
expect 2 "fault 'melt' is unknown" -- "$TESSERA" regress --targets fsim,fsim:fault=melt

# --- a deliberate mismatch (test-only fault hook): reported in JUnit, saved as a shrunk reproducer
faulty=fsim,fsim:fault=flip-stored-byte
"$TESSERA" regress --config small --targets $faulty --programs 3 --seed 7 --keep-going --shrink-runs 400 \
  --junit fail.xml --reproducers repro > fail.txt 2>&1
[ $? -eq 1 ] && ok || bad "a run with mismatches must exit 1: $(tail -3 fail.txt)"
junit_check fail.xml 3 3 0 0 > /dev/null && ok || bad "fail.xml: $(junit_check fail.xml 3 3 0 0 2>&1 | tail -3)"
grep -q 'message="seed 7, config small, target fsim:fault=flip-stored-byte: fsim and fsim:fault=flip-stored-byte leave different DRAM: 1 byte(s) differ; first difference at 0x' fail.xml \
  && ok || bad "fail.xml's failure message: $(grep -o 'message="[^"]*"' fail.xml | head -1)"
[ "$(grep -c 'reproducer: repro/small-small-seed[789].repro' fail.xml)" -eq 3 ] && ok || bad "fail.xml lacks the reproducers' paths"
ls repro/small-small-seed7.repro repro/small-small-seed8.repro repro/small-small-seed9.repro > /dev/null 2>&1 \
  && ok || bad "reproducers: $(ls repro)"
# Without --keep-going the rest are reported as skipped, so the report still lists every program.
"$TESSERA" regress --config small --targets $faulty --programs 4 --seed 7 --no-shrink --junit stop.xml \
  --no-reproducers > stop.txt 2>&1
junit_check stop.xml 4 1 0 3 > /dev/null && ok || bad "stop.xml: $(junit_check stop.xml 4 1 0 3 2>&1 | tail -3)"
[ ! -e tessera-reproducers ] && ok || bad "--no-reproducers wrote $(ls tessera-reproducers)"

# The reproducer replays with tessera sim, shows the difference, and is smaller than the original.
rep=repro/small-small-seed7.repro
expect 1 "replay: MISMATCH: fsim and fsim:fault=flip-stored-byte leave different DRAM" -- "$TESSERA" sim --repro $rep
out=$("$TESSERA" sim --repro $rep 2>&1)
grep -qE "first difference at 0x[0-9a-f]+ \(region out[01] " <<<"$out" \
  && grep -qE "^  fsim: 0x[0-9a-f]{2} \([-0-9]+\), fsim:fault=flip-stored-byte: 0x[0-9a-f]{2} " <<<"$out" && ok \
  || bad "replay lacks the first difference: $out"
if [[ $out =~ :\ ([0-9]+)\ instructions\ \([0-9]+\ doing\ work\;\ ([0-9]+)\ before\ shrinking\) ]]; then
  [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] && ok || bad "reproducer not shrunk: $out"
else
  bad "replay header: $out"
fi
# The same program unshrunk, for size: the shrunk file is smaller.
"$TESSERA" regress --config small --targets $faulty --programs 1 --seed 7 --no-shrink --reproducers full > /dev/null 2>&1
# (less than half: both are cut to the DRAM pages they touch, and the shrunk one touches far fewer)
[ "$(( 2 * $(stat -c %s $rep) ))" -lt "$(stat -c %s full/small-small-seed7.repro)" ] && ok \
  || bad "shrunk reproducer $(stat -c %s $rep) bytes, unshrunk $(stat -c %s full/small-small-seed7.repro)"
# A second run never overwrites: the next file gets a suffix.
"$TESSERA" regress --config small --targets $faulty --programs 1 --seed 7 --no-shrink --reproducers full > again.txt 2>&1
grep -q "reproducer: full/small-small-seed7-2.repro" again.txt && ok || bad "second reproducer: $(grep reproducer again.txt)"
# Replayed on targets that agree (a fixed target): exit 0.
expect 0 "the targets agree" -- "$TESSERA" sim --repro $rep --target fsim,fsim:kernels=generic
# Self-contained: a config that is not shipped travels inside the file.
sed 's/"NAME": "small"/"NAME": "mine"/' <("$TESSERA" info --config small --format json) > mine.json
"$TESSERA" regress --config mine.json --targets $faulty --programs 1 --seed 3 --reproducers own > own.txt 2>&1
rm mine.json
expect 1 "replay: MISMATCH" -- "$TESSERA" sim --repro own/mine-small-seed3.repro
grep -q '^config-json$' own/mine-small-seed3.repro && ok || bad "the unshipped config is not in the reproducer"
# A real target's failure replays too, with the target options the file records: tsim answering
# DRAM errors on the instruction stream's page fails where fsim completes.
if [[ ",$TSIM_CONFIGS," == *,small,* ]]; then
  page=$("$TESSERA" regress --programs 1 --seed 1 --config small --print-program --targets fsim,fsim |
    sed -n 's/^stream at \(0x[0-9a-f]*\):$/\1/p')
  expect 1 "reproducer: tsimrepro/small-small-seed1.repro \(1 instructions, 1 regions" \
    -- "$TESSERA" regress --programs 1 --seed 1 --config small --targets "fsim,tsim:mem-fault-page=$page" --reproducers tsimrepro
  expect 1 "replay: MISMATCH: tsim:mem-fault-page=$page failed where fsim completed" \
    -- "$TESSERA" sim --repro tsimrepro/small-small-seed1.repro
  expect 0 "the targets agree" -- "$TESSERA" sim --repro tsimrepro/small-small-seed1.repro --target fsim,tsim
else
  skipped+=("tsim reproducer checks on small (tsim not built for it)")
fi
# Damaged files are refused with the line.
head -c 3000 $rep > cut.repro
expect 1 "cut.repro:[0-9]+: .*(ends|expected)" -- "$TESSERA" sim --repro cut.repro
echo "hello" > hello.repro
expect 1 "hello.repro:1: not a tessera reproducer" -- "$TESSERA" sim --repro hello.repro
sed '0,/^region /s/^region \([a-z0-9]*\) [A-Z_0-9]* /region \1 BOGUS /' $rep > kind.repro
expect 1 "kind.repro:[0-9]+: unknown region kind 'BOGUS'" -- "$TESSERA" sim --repro kind.repro
expect 1 "nothere.repro: cannot open reproducer" -- "$TESSERA" sim --repro nothere.repro
expect 2 "--insn does not go with --repro" -- "$TESSERA" sim --repro $rep --insn prog.bin
expect 2 "--config does not go with --repro" -- "$TESSERA" sim --repro $rep --config small
expect 2 "--insn' is required" -- "$TESSERA" sim

# --- a signal (Ctrl-C, Slurm's time limit) ends the run after the current program, with its report
"$TESSERA" regress --config small --targets $targets --programs 50000 --quiet --junit term.xml > term.txt 2>&1 &
pid=$!
sleep 2
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] && ok || bad "SIGTERM: exit status $rc, expected 143: $(tail -2 term.txt)"
grep -qE "^regress: stopped on request after [0-9]+ of 50000 programs$" term.txt && ok || bad "SIGTERM: $(tail -3 term.txt)"
"$PYTHON" - term.xml <<'PY' && ok || bad "term.xml does not list the programs run and the rest as skipped"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = s.findall("testcase")
run = [c for c in cases if c.find("skipped") is None]
assert len(cases) == 50000 and len(run) < 50000 and int(s.get("skipped")) == 50000 - len(run)
assert "interrupted" in cases[-1].find("skipped").get("message")
PY

# --- the Slurm job-array script, run as Slurm would run tasks 10..12 of an array
for id in 10 11 12; do
  env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=12 SLURM_ARRAY_TASK_COUNT=3 \
    SLURM_ARRAY_JOB_ID=77 TESSERA="$TESSERA" REGRESS_CONFIG=small REGRESS_TARGETS=$targets REGRESS_PROGRAMS=23 \
    REGRESS_SEED=100 bash "$SLURM_SCRIPT" > slurm$id.txt 2>&1 && ok || bad "slurm task $id: $(cat slurm$id.txt)"
done
for i in 0 1 2; do junit_check regress-77/shard-$i.xml any 0 0 0; done > slurm.names && ok || bad "slurm reports: $(tail -3 slurm.names)"
[ "$(sort single.names)" = "$(sort slurm.names)" ] && ok || bad "the Slurm tasks' test cases differ from the single run's"
expect 2 "run as a job array" -- env -u SLURM_ARRAY_TASK_ID bash "$SLURM_SCRIPT"
expect 2 "contiguous with step 1" -- env SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=4 \
  SLURM_ARRAY_TASK_COUNT=3 bash "$SLURM_SCRIPT"

# --- progress: a status line on a terminal's stderr, none when stderr is not a terminal
"$TESSERA" regress --config small --targets fsim,fsim --programs 300 --quiet > quiet.txt 2> quiet.err
[ ! -s quiet.err ] && ok || bad "progress written to a non-terminal stderr: $(head -c 200 quiet.err | od -c | head -3)"
[ "$(wc -l < quiet.txt)" -eq 1 ] && ok || bad "--quiet printed $(wc -l < quiet.txt) lines"
TERM=xterm script -qec "'$TESSERA' regress --config small --targets fsim,fsim --programs 20000 --quiet" /dev/null > tty.txt 2>&1
grep -qaE $'\r'"regress: [0-9]+/20000 programs, [0-9.]+/s, 0 mismatches, ETA [0-9:?]+, [0-9]+:[0-9]{2}:[0-9]{2} elapsed" tty.txt && ok \
  || bad "no progress line on a terminal: $(tail -c 300 tty.txt | od -c | tail -5)"

echo "regress cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
if [ ${#skipped[@]} -gt 0 ]; then
  printf 'skipped: %s\n' "${skipped[@]}"
  exit 77
fi
