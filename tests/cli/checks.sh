# The shell tests' checks (sourced by the CLI, regress, remote and zynq scripts): counters and `expect`.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect CODE PATTERN -- CMD...: runs CMD, checks its exit code and that PATTERN is in its output.
# A failure shows the first 3,000 characters of the output: enough to see why, not a flood.
expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$code" ]; then bad "'$*' exited $rc, expected $code; output: ${out:0:3000}"; return; fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; then bad "'$*' output lacks /$pattern/: ${out:0:3000}"; return; fi
  ok
}
