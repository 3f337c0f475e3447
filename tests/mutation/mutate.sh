#!/usr/bin/env bash
# Mutation testing of the regression: runs a fixed short regression against each mutant of
# tsim-mut and reports which the regression kills, per RTL module (make mutate, docs/verification.md).
#
#   mutate.sh --build DIR [--config C] [--programs N] [--seed S] [--mutants LIST] [--jobs J]
#             [--out DIR] [--survivors FILE] [--require-score PCT] [--resume]
#
# For each mutant (all of the build's, or LIST: numbers and ranges, "1-20,37"): `tessera regress`
# of N programs from seed S against fsim (stopping at the first mismatch), its counters (cycles
# included) against unmutated tsim's, then, if it agreed, the directed programs
# (tests/coverage/directed.sh), compared with fsim where fsim runs them and with tsim's counters. A
# mismatch, a counter differing from tsim's, a fault, a deadlock or a hang kills the mutant. Mutant 0, the netlist with no mutation, must pass
# everything first: otherwise the netlist itself disagrees with fsim and no kill would mean anything.
#
# Survivors must each be listed in FILE (default tests/mutation/survivors.tsv), with the mutation as
# mutants.tsv describes it, a verdict and the reason: equivalent (no run of the model can observe
# it) or invalid-only (only a program the ISA's validation rejects, which no target is given, or
# one larger than the 32-bit address space, could); a listed mutant that the run kills is a stale
# entry. The run fails if a survivor is unlisted, an entry is stale, or the score (killed /
# (mutants - equivalent - invalid-only)) is below PCT (95). The report also gives the strict
# score, which counts the invalid-only mutants as survivors.
# Writes OUT/results.tsv (one line per mutant) and OUT/report.md (the per-module table).
# --resume keeps the verdicts already in OUT/runs (an interrupted run, or a review of the same
# verdicts against another survivors file) and runs only the mutants without one; it refuses a
# directory whose verdicts came from another table, config, program count or seed.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build="" config=default programs=200 seed=1 spec="" jobs=2 out="" require=95 resume=0
survivors="$root/tests/mutation/survivors.tsv"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --mutants) spec=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --survivors) survivors=$2; shift 2 ;;
    --require-score) require=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    # One mutant, for the parallel workers below: --one K WORKDIR.
    --one) one=$2; work=$3; shift 3 ;;
    *) echo "mutate.sh: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
[ -n "$build" ] || { echo "mutate.sh: --build DIR is required" >&2; exit 2; }
build=$(realpath "$build")
tessera="$build/sw/tessera"
table="$build/tsim/mutation/$config/mutants.tsv"
for n in "$programs" "$seed" "$jobs" "$require"; do
  case "$n" in ''|*[!0-9]*) echo "mutate.sh: '$n' is not a non-negative integer" >&2; exit 2 ;; esac
done
[ -x "$tessera" ] || { echo "mutate.sh: $tessera not built" >&2; exit 2; }
[ -f "$table" ] || { echo "mutate.sh: $table not found: tsim-mut is not built for config $config (TESSERA_TSIM_MUT_CONFIGS; the build makes it on request: make mutate, or cmake --build $build --target tessera_plugin_tsim-mut)" >&2; exit 2; }
# Hung mutants: a deadlock shows in 20,000 cycles without progress (tsim's watchdog), a livelock
# at regress' bound on the run.
watch=watchdog-cycles=20000
# The directed programs' long program at 2^14 instructions, not 2^20 (3 million cycles would take
# the mutant model about 45 s each), and each directed run bounded at a million cycles (the longest
# then takes about 150,000), so a livelocked mutant is killed in seconds.
# The host registers' mutants run it at 2^18 (about 10 s): FAULT_INSN's bits 14 to 17 carry only
# past 16,384 instructions.
export TESSERA_DIRECTED_LONG_LOG2=14 TESSERA_DIRECTED_WAIT_CYCLES=1000000
long_log2_host_regs=18
module_of() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$table"; }
long_log2_of() {
  if [ "$(module_of "$1")" = tessera_host_regs ]; then
    echo "$long_log2_host_regs"
  else
    echo "$TESSERA_DIRECTED_LONG_LOG2"
  fi
}
# A last, slow program for the mutants of tessera_compute that survive the rest (and for mutant 0,
# which must pass it too): the deadlock behind 2^22 instructions (directed.sh's set index22, about
# two minutes on the mutant model), whose report carries compute's instruction index to bit 22.
# TESSERA_MUTATE_SLOW=0 leaves it out (the machinery's own test, ctest mutation_machinery).
slow=${TESSERA_MUTATE_SLOW:-1}
case "$slow" in 0 | 1) ;; *) echo "mutate.sh: TESSERA_MUTATE_SLOW='$slow' is not 0 or 1" >&2; exit 2 ;; esac
slow_set_of() {
  if [ "$slow" = 1 ] && { [ "$1" = 0 ] || [ "$(module_of "$1")" = tessera_compute ]; }; then echo index22; fi
}

# run_one K DIR: K's verdict line, "K<TAB>killed|survived<TAB>how", to DIR/K.tsv. A tool failure that
# is not a verdict (usage, a missing file, a crash) exits non-zero and stops the whole run.
run_one() {
  local k=$1 dir=$2 log rc=0
  log="$dir/$k.log"
  "$tessera" regress --config "$config" --programs "$programs" --seed "$seed" --quiet --no-reproducers --no-shrink \
    --targets "fsim,tsim,tsim-mut:mutant=$k:counters=exact:$watch" > "$log" 2>&1 || rc=$?
  if [ "$rc" -eq 1 ] && grep -q '^MISMATCH seed' "$log"; then
    local what
    what=$(grep -m1 '^MISMATCH seed' "$log" | sed -E 's/^MISMATCH seed ([0-9]+), config [^,]*, size [^,]*, targets [^ ]*: /regress seed \1: /; s/tsim-mut:[^ ,]*/the mutant/g')
    printf '%s\tkilled\t%s\n' "$k" "${what:0:160}" > "$dir/$k.tsv"
    return 0
  elif [ "$rc" -ne 0 ]; then
    echo "mutate.sh: mutant $k: tessera regress failed without a verdict (exit $rc):" >&2
    tail -5 "$log" >&2
    return 1
  fi
  rc=0
  TESSERA_DIRECTED_LONG_LOG2=$(long_log2_of "$k") \
    bash "$root/tests/coverage/directed.sh" "$tessera" "tsim-mut:mutant=$k:$watch" tsim >> "$log" 2>&1 || rc=$?
  local slow_set
  slow_set=$(slow_set_of "$k")
  if [ "$rc" -eq 0 ] && [ -n "$slow_set" ]; then
    TESSERA_DIRECTED_SET=$slow_set \
      bash "$root/tests/coverage/directed.sh" "$tessera" "tsim-mut:mutant=$k:$watch" tsim >> "$log" 2>&1 || rc=$?
  fi
  if [ "$rc" -eq 1 ] && grep -q '^directed program ' "$log"; then
    local what
    what=$(grep '^directed program ' "$log" | tail -1 | cut -d: -f1)
    printf '%s\tkilled\t%s\n' "$k" "$what" > "$dir/$k.tsv"
  elif [ "$rc" -ne 0 ]; then
    echo "mutate.sh: mutant $k: the directed programs failed without a verdict (exit $rc):" >&2
    tail -5 "$log" >&2
    return 1
  else
    printf '%s\tsurvived\t%s programs from seed %s and the directed programs agree with fsim, counters with tsim\n' \
      "$k" "$programs" "$seed" > "$dir/$k.tsv"
  fi
}

if [ -n "${one:-}" ]; then
  run_one "$one" "$work"
  exit
fi

count=$(($(wc -l < "$table") - 1))
[ "$count" -gt 0 ] || { echo "mutate.sh: $table lists no mutants" >&2; exit 2; }
# The mutants to run, as a sorted unique list.
expand() {
  local item a b
  IFS=, read -r -a items <<<"$1"
  for item in "${items[@]}"; do
    case "$item" in
      *-*) a=${item%-*} b=${item#*-} ;;
      *) a=$item b=$item ;;
    esac
    case "$a$b" in ''|*[!0-9]*) echo "mutate.sh: --mutants: '$item' is not a number or a range" >&2; exit 2 ;; esac
    if [ "$a" -lt 1 ] || [ "$b" -gt "$count" ] || [ "$a" -gt "$b" ]; then
      echo "mutate.sh: --mutants: '$item' is outside 1-$count" >&2
      exit 2
    fi
    seq "$a" "$b"
  done | sort -n -u
}
mutants=$(expand "${spec:-1-$count}")

out=${out:-$build/mutation/$config}
mkdir -p "$out"
out=$(realpath "$out")
work="$out/runs"
# What the verdicts depend on, so a resumed run never mixes verdicts of two different runs.
stamp="config $config, $programs programs from seed $seed, long program 2^$TESSERA_DIRECTED_LONG_LOG2 (2^$long_log2_host_regs for tessera_host_regs), $([ "$slow" = 1 ] && echo "index22 for tessera_compute" || echo "no slow set"), table $(md5sum < "$table" | cut -c1-32)"
if [ "$resume" = 1 ] && [ -d "$work" ]; then
  if [ "$(cat "$work/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "mutate.sh: --resume: $work holds verdicts of another run ($(cat "$work/stamp" 2>/dev/null || echo 'no stamp')), not of this one ($stamp): drop --resume or choose another --out" >&2
    exit 2
  fi
else
  rm -rf "$work"
  mkdir -p "$work"
  printf '%s\n' "$stamp" > "$work/stamp"
fi
pending=$(for k in $mutants; do [ -f "$work/$k.tsv" ] || echo "$k"; done)

echo "mutate.sh: config $config, $(wc -w <<<"$mutants") of $count mutants ($(wc -w <<<"$pending") to run), $programs programs from seed $seed and the directed programs each, $jobs at a time"
start=$(date +%s)
# The netlist with no mutation must agree with fsim everywhere the mutants are judged (its verdict
# is kept as 0.tsv, so a resumed run does not repeat it).
if [ -n "$pending" ] && [ ! -f "$work/0.tsv" ]; then
  run_one 0 "$work"
  if [ "$(cut -f2 "$work/0.tsv")" != survived ]; then
    echo "mutate.sh: the unmutated netlist (mutant 0) fails: $(cut -f3 "$work/0.tsv") (log: $work/0.log)" >&2
    rm "$work/0.tsv"
    exit 1
  fi
fi
if [ -n "$pending" ]; then
  tr ' ' '\n' <<<"$pending" | xargs -P "$jobs" -I{} bash "$0" --build "$build" --config "$config" \
    --programs "$programs" --seed "$seed" --one {} "$work"
fi
elapsed=$(($(date +%s) - start))

# Results in mutant order, joined with the table's module, mode, cell and source.
for k in $mutants; do
  [ -f "$work/$k.tsv" ] || { echo "mutate.sh: mutant $k left no verdict (log: $work/$k.log)" >&2; exit 1; }
  cat "$work/$k.tsv"
done > "$out/verdicts.tsv"
awk -F'\t' -v OFS='\t' -v survivors="$survivors" '
  FILENAME == survivors {
    if ($0 ~ /^#/ || $0 == "") next
    if (NF != 4 || ($3 != "equivalent" && $3 != "invalid-only") || $4 == "") { printf "mutate.sh: %s:%d: expected MUTANT<TAB>MUTATION<TAB>equivalent|invalid-only<TAB>REASON\n", survivors, FNR > "/dev/stderr"; bad = 1; next }
    listed[$1] = $4; listedas[$1] = $2; listedverdict[$1] = $3; line[$1] = FNR; next
  }
  FILENAME ~ /mutants.tsv$/ {
    if (FNR == 1) next
    module[$1] = $2; desc[$1] = $3 " " $4 " " $5 "[" $6 "] at " $7
    # An entry names the mutation it is about: after an RTL change renumbers the sample, it no
    # longer matches and must be reviewed.
    if (($1 in listed) && listedas[$1] != desc[$1]) {
      printf "mutate.sh: %s:%d: mutant %s is now \"%s\", not \"%s\": review the entry\n", survivors, line[$1], $1, desc[$1], listedas[$1] > "/dev/stderr"
      bad = 1; delete listed[$1]
    }
    next
  }
  {
    k = $1; m = module[k]; total[m]++; all++
    verdict = $2; note = $3
    if (verdict == "killed") {
      killed[m]++; allkilled++
      if (k in listed) { printf "mutate.sh: mutant %s is listed as %s in %s but was killed (%s): remove the entry\n", k, listedverdict[k], survivors, note > "/dev/stderr"; bad = 1 }
    } else if (k in listed) {
      verdict = listedverdict[k]; note = listed[k]
      if (verdict == "equivalent") { equiv[m]++; allequiv++ } else { invalid[m]++; allinvalid++ }
    } else {
      unlisted[m]++; allunlisted++
      printf "mutate.sh: mutant %s (%s, %s) survives and is not in %s: a testbench hole to close, or an equivalent mutant to list with the proof\n", k, m, desc[k], survivors > "/dev/stderr"
    }
    print k, m, verdict, desc[k], note > results
  }
  END {
    printf "| module | mutants | killed | equivalent | invalid-only | surviving | score | strict score |\n|---|---|---|---|---|---|---|---|\n" > report
    n = 0
    for (m in total) names[++n] = m
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (names[j] < names[i]) { t = names[i]; names[i] = names[j]; names[j] = t }
    for (i = 1; i <= n; i++) {
      m = names[i]; d = total[m] - equiv[m] - invalid[m]; ds = total[m] - equiv[m]
      printf "| %s | %d | %d | %d | %d | %d | %s | %s |\n", m, total[m], killed[m], equiv[m], invalid[m], unlisted[m],
        d ? sprintf("%.1f%%", 100 * killed[m] / d) : "-", ds ? sprintf("%.1f%%", 100 * killed[m] / ds) : "-" > report
    }
    d = all - allequiv - allinvalid; ds = all - allequiv
    score = d ? 100 * allkilled / d : 100
    strict = ds ? 100 * allkilled / ds : 100
    printf "| **all** | %d | %d | %d | %d | %d | **%.1f%%** | %.1f%% |\n", all, allkilled, allequiv, allinvalid, allunlisted, score, strict > report
    printf "%.2f %d\n", score, bad > status
  }
' results="$out/results.tsv" report="$out/report.md" status="$out/status" "$survivors" "$table" "$out/verdicts.tsv"

cat "$out/report.md"
read -r score bad < "$out/status"
echo "mutate.sh: $(wc -w <<<"$mutants") mutants in ${elapsed} s; score ${score}% of non-equivalent mutants killed (goal ${require}%); results in $out/results.tsv"
fail=$bad
if awk -F'\t' '$3 == "survived" { found = 1 } END { exit !found }' "$out/results.tsv"; then fail=1; fi
if ! awk -v s="$score" -v r="$require" 'BEGIN { exit !(s >= r) }'; then
  echo "mutate.sh: the score ${score}% is below ${require}%" >&2
  fail=1
fi
exit "$fail"
