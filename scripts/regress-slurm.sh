#!/usr/bin/env bash
# One shard of a tessera regression per Slurm array task: sbatch --array=0-7 scripts/regress-slurm.sh
#SBATCH --job-name=tessera-regress
#SBATCH --cpus-per-task=1
#SBATCH --time=08:00:00
#SBATCH --output=tessera-regress-%A_%a.out
#
# The array's tasks are the shards: task ids MIN..MAX (contiguous, step 1) become shards 0..N-1
# of N = the array's size, so any --array=A-B works and the union of the tasks is the one run
# of REGRESS_PROGRAMS programs. Settings, from the environment (sbatch --export or exported
# before sbatch):
#   TESSERA           the tessera executable (default: tessera on PATH)
#   REGRESS_CONFIG    config name or JSON file (default: default)
#   REGRESS_TARGETS   targets to compare, reference first (default: tessera's choice)
#   REGRESS_SIZE      small, medium or large (default: small)
#   REGRESS_PROGRAMS  programs over all tasks (default: 100000)
#   REGRESS_SEED      seed of program 0 (default: 1)
#   REGRESS_OUT       directory for the reports, logs and reproducers (default: regress-JOBID)
#   REGRESS_COVERAGE  a directory: run the RTL with coverage (tessera regress --coverage), each task
#                     writing its counts there (tessera coverage report merges them)
# Each task writes REGRESS_OUT/shard-I.xml (JUnit), shard-I.log, and reproducers of its mismatches
# under REGRESS_OUT/reproducers; it exits 1 on a mismatch, so Slurm marks the task failed.
# `tessera regress --merge-junit REGRESS_OUT/merged.xml REGRESS_OUT/shard-*.xml` joins the reports.
set -euo pipefail

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "regress-slurm.sh: run as a job array, e.g. sbatch --array=0-7 $0 (SLURM_ARRAY_TASK_ID is not set)" >&2
  exit 2
fi
min=${SLURM_ARRAY_TASK_MIN:?SLURM_ARRAY_TASK_MIN is not set}
max=${SLURM_ARRAY_TASK_MAX:?SLURM_ARRAY_TASK_MAX is not set}
count=${SLURM_ARRAY_TASK_COUNT:-$((max - min + 1))}
if [ "$count" -ne $((max - min + 1)) ]; then
  echo "regress-slurm.sh: the array must be contiguous with step 1 (--array=$min-$max has $count tasks)" >&2
  exit 2
fi
shard=$((SLURM_ARRAY_TASK_ID - min))

tessera=${TESSERA:-tessera}
out=${REGRESS_OUT:-regress-${SLURM_ARRAY_JOB_ID:-local}}
mkdir -p "$out"
args=(regress --config "${REGRESS_CONFIG:-default}" --size "${REGRESS_SIZE:-small}"
      --programs "${REGRESS_PROGRAMS:-100000}" --seed "${REGRESS_SEED:-1}" --shard "$shard/$count"
      --keep-going --quiet --junit "$out/shard-$shard.xml" --reproducers "$out/reproducers")
if [ -n "${REGRESS_TARGETS:-}" ]; then args+=(--targets "$REGRESS_TARGETS"); fi
if [ -n "${REGRESS_COVERAGE:-}" ]; then args+=(--coverage "$REGRESS_COVERAGE"); fi

echo "task $SLURM_ARRAY_TASK_ID on $(hostname): $tessera ${args[*]}"
rc=0
"$tessera" "${args[@]}" > "$out/shard-$shard.log" 2>&1 || rc=$?
tail -n 1 "$out/shard-$shard.log"
exit "$rc"
