#!/usr/bin/env bash
# A real farm: a single-node Slurm cluster started from scratch directories runs scripts/regress-slurm.sh as a job array with coverage, and its merged results must equal one process's.
# Usage: slurm_farm_test.sh PATH/TO/tessera PATH/TO/scripts/regress-slurm.sh [PROGRAMS] [TASKS]
#
# Everything lives in a temporary directory: a munge key and socket of its own, a slurm.conf with
# proctrack/linuxproc and task/none, controller and node on free loopback ports; no system service
# or file is touched, and the daemons are stopped on exit. Where Slurm or munge is missing or
# cannot start (not root, no loopback), the test is skipped (exit 77) saying why; it never passes
# without having run the array.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/checks.sh"
TESSERA=$(realpath "${1:?usage: slurm_farm_test.sh PATH/TO/tessera PATH/TO/regress-slurm.sh [PROGRAMS] [TASKS]}")
SCRIPT=$(realpath "${2:?usage: slurm_farm_test.sh PATH/TO/tessera PATH/TO/regress-slurm.sh [PROGRAMS] [TASKS]}")
PROGRAMS=${3:-200}
TASKS=${4:-4}
skip() { echo "slurm farm: skipped: $*"; exit 77; }

for tool in munged slurmctld slurmd sbatch sinfo scancel; do
  command -v "$tool" >/dev/null || skip "$tool not found (scripts/install-deps.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" -eq 0 ] || skip "the scratch cluster runs its daemons as root, and this is uid $(id -u)"

W=$(mktemp -d /tmp/tessera-farm.XXXXXX)
chmod 755 "$W"
stop() {
  for pid in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
    [ -s "$pid" ] && kill "$(cat "$pid")" 2>/dev/null
  done
  sleep 1
  for pid in "$W/slurmd.pid" "$W/slurmctld.pid" "$W/munge/munged.pid"; do
    [ -s "$pid" ] && kill -9 "$(cat "$pid")" 2>/dev/null
  done
  rm -rf "$W"
}
trap stop EXIT
mkdir -p "$W/munge" "$W/state" "$W/spool" "$W/log"
chmod 700 "$W/munge"

# munge, with its own key and socket.
dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$W/munge/munge.key"
munged --force --key-file="$W/munge/munge.key" --socket="$W/munge/munge.sock" --pid-file="$W/munge/munged.pid" \
  --log-file="$W/log/munged.log" --seed-file="$W/munge/munged.seed" 2>"$W/log/munged.err" \
  || skip "munged did not start: $(tail -2 "$W/log/munged.err" "$W/log/munged.log" 2>/dev/null | tr '\n' ' ')"

# Two free loopback ports for the controller and the node.
read -r CTLD_PORT SLURMD_PORT < <(/usr/bin/python3 -c "
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(('127.0.0.1', 0))
print(*[x.getsockname()[1] for x in s])") || skip "no free loopback ports"
HOST=$(hostname)
CPUS=$(nproc)
cat > "$W/slurm.conf" <<EOF
ClusterName=tessera-farm-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=tessera Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$W/slurm.conf"
slurmctld -f "$SLURM_CONF" 2>"$W/log/slurmctld.err" || skip "slurmctld did not start: $(tail -3 "$W/log/slurmctld.err" "$W/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -f "$SLURM_CONF" 2>"$W/log/slurmd.err" || skip "slurmd did not start: $(tail -3 "$W/log/slurmd.err" "$W/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || skip "the node did not become idle within 60 s (sinfo says '$state'): $(tail -3 "$W/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
ok

# The array: TASKS shards of PROGRAMS programs with coverage, each task a process of its own.
cd "$W"
out=$(TESSERA="$TESSERA" REGRESS_PROGRAMS="$PROGRAMS" REGRESS_OUT="$W/out" REGRESS_COVERAGE="$W/farm-cov" \
      sbatch --wait --array=0-$((TASKS - 1)) --export=ALL "$SCRIPT" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && ok || bad "sbatch --wait exited $rc: $out; $(cat "$W"/tessera-regress-*.out 2>/dev/null | tail -5)"
[ "$(ls "$W"/out/shard-*.xml 2>/dev/null | wc -l)" -eq "$TASKS" ] && ok || bad "expected $TASKS shard reports: $(ls "$W/out")"
[ "$(ls "$W"/farm-cov/*.dat 2>/dev/null | wc -l)" -eq "$TASKS" ] && ok || bad "expected $TASKS coverage files: $(ls "$W/farm-cov")"

# Merged, the farm's results; then the same seeds in one process.
expect 0 "merged $TASKS shard report\\(s\\) into .*: $PROGRAMS programs, 0 mismatch" -- \
  "$TESSERA" regress --merge-junit "$W/merged.xml" "$W"/out/shard-*.xml
expect 0 "0 mismatches" -- "$TESSERA" regress --programs "$PROGRAMS" --seed 1 --keep-going --quiet --no-reproducers \
  --coverage "$W/single-cov" --junit "$W/single.xml"
# Same programs, same outcomes: the test cases' seeds and results, one for one.
cases() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    outcome = "ok" if len(c) == 0 else c[0].tag
    print(c.get("name").split(" on ")[0], outcome)
PY
}
diff <(cases "$W/merged.xml" | sort) <(cases "$W/single.xml" | sort) > "$W/cases.diff" && ok \
  || bad "the farm's test cases differ from one process's: $(head -5 "$W/cases.diff")"
# Same coverage counts, point by point.
expect 0 "coverage of $TASKS file" -- "$TESSERA" coverage report "$W/farm-cov" --no-html -o "$W/farm-report"
expect 0 "coverage of 1 file" -- "$TESSERA" coverage report "$W/single-cov" --no-html -o "$W/single-report"
cmp -s "$W/farm-report/coverage.dat" "$W/single-report/coverage.dat" && ok \
  || bad "the farm's merged coverage differs from one process's"

echo "slurm farm: $passed passed, $failed failed ($TASKS tasks, $PROGRAMS programs)"
[ "$failed" -eq 0 ]
