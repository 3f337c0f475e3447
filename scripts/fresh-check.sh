#!/usr/bin/env bash
# Proves the README's quick start on a bare Debian 12: debootstraps bookworm, copies this tree in, runs `make demo` and `make test` there.
#
# scripts/fresh-check.sh [WORK_DIR] [STEPS]
#   WORK_DIR  where the chroot goes (default: build/fresh); emptied first, removed afterwards
#             unless FRESH_KEEP=1
#   STEPS     the README commands to run, in order (default: "demo test"; "demo" stops after it)
# Needs root (debootstrap, chroot, mounts) and the Debian archive; takes the archive address from
# this machine's apt sources, so nothing here names a mirror. Exit 77 (a ctest skip) when it
# cannot run at all: not root, no debootstrap and no apt-get to install it, or no Debian source.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$src/build/fresh}"
steps="${2:-demo test}"
root="$work/root"
suite=bookworm
nice_cmd=(nice -n 10)

say() { printf 'fresh-check: %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot and mounts)"

# The archive of the host's own bookworm entry, deb822 (*.sources) or one-line (sources.list).
mirror_of_host() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" '
      /^[[:space:]]*$/ { if (uri != "" && hit) { print uri; exit } uri = ""; hit = 0; next }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; ++i) if ($i == suite) hit = 1 }
      END { if (uri != "" && hit) print uri }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) ++i; if ($i ~ /^\[/ || $i ~ /\]$/) ++i
        if ($(i + 1) == suite) print $i }' "$f"
  done
}
mirror="$(mirror_of_host | head -n 1)"
[ -n "$mirror" ] || skip "no '$suite' entry in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources"

if ! command -v debootstrap >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || skip "no debootstrap and no apt-get to install it"
  say "installing debootstrap on the host"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

mounts=()
unmount_all() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; --i)); do umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}" || true; done
  mounts=()
}
remove_root() {
  [ -d "$root" ] || return 0
  # Never follow a mount left behind into the host's /dev or /proc.
  if findmnt -rn -o TARGET | grep -q "^$root/"; then say "mounts remain under $root; not removing it"; return 1; fi
  rm -rf --one-file-system "$root"
}
cleanup() {
  unmount_all
  [ "${FRESH_KEEP:-0}" = 1 ] || remove_root || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

elapsed() { local s=$(($(date +%s) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

remove_root || exit 1  # a chroot left by FRESH_KEEP=1: start from nothing again
mkdir -p "$work"
t0=$(date +%s)
say "debootstrap $suite (minbase) from $mirror into $root"
keyring=()
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
"${nice_cmd[@]}" debootstrap --variant=minbase "${keyring[@]}" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log"; say "debootstrap failed (log: $work/debootstrap.log)"; exit 1; }
say "debootstrap done in $(elapsed "$t0")"

cp /etc/resolv.conf "$root/etc/resolv.conf"
for m in proc sys dev; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    dev) mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev" ;;
  esac
  mounts+=("$root/$m")
done

# The tree as it is now (tracked files and new ones not ignored), without any build directory.
mkdir -p "$root/root/tessera"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build' |
  tar --null -T - -cf -) | tar -xf - -C "$root/root/tessera"

in_chroot() {
  "${nice_cmd[@]}" chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive bash -c "$1"
}
# As the README notes, a minimal Debian has no make.
say "apt-get install make in the chroot (as the README notes)"
in_chroot "apt-get update -qq && apt-get install -y -qq --no-install-recommends make" >"$work/make-install.log" 2>&1 ||
  { tail -n 30 "$work/make-install.log"; say "installing make failed"; exit 1; }

status=0
for step in $steps; do
  t=$(date +%s)
  say "make $step in the chroot"
  if in_chroot "cd /root/tessera && make $step" 2>&1 | tee "$work/make-$step.log"; then
    say "make $step passed in $(elapsed "$t")"
  else
    status=1
    say "make $step FAILED after $(elapsed "$t") (log: $work/make-$step.log)"
    break
  fi
done
say "total $(elapsed "$t0")"
exit $status
