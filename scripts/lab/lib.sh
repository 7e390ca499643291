# shellcheck shell=bash
# Shared helpers for the nested-lab scripts (sourced, not run).
#
# The lab is L0 (this machine, QEMU TCG) -> L1 (stock Debian kernel, KVM modules loaded)
# -> L2 (guests started by L1's QEMU with -accel kvm).  See docs/lab.md.

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_TOP=$(cd "$LAB_DIR/../.." && pwd)
: "${BUILD:=$LAB_TOP/build}"

# The one L1 kernel the lab boots; its /lib/modules tree also supplies the stock KVM modules.
LAB_KVER=6.12.117+deb12-amd64
LAB_KERNEL=/boot/vmlinuz-$LAB_KVER
LAB_MODDIR=/lib/modules/$LAB_KVER

# Exit codes shared by l1-run and payloads.
LAB_RC_PASS=0
LAB_RC_FAIL=1
LAB_RC_LABFAIL=2
# A payload exits with this (EX_TEMPFAIL) to say "the lab broke under me, this is not a result";
# l1-run then counts the attempt as a lab failure and retries it.
LAB_RC_PAYLOAD_LABFAIL=75

lab_log() { printf '%s: %s\n' "${LAB_PROG:-lab}" "$*" >&2; }
die() { lab_log "error: $*"; exit "${LAB_DIE_RC:-2}"; }

# require_file PATH WHAT: clear error instead of a hang or a cryptic QEMU message later.
require_file() { [ -e "$1" ] || die "$2 not found: $1"; }

# require_cmd CMD PACKAGE
require_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found (Debian package $2; run scripts/lab/install-deps)"
}

# Check that ARG is a positive integer; NAME is the option, for the message.
require_uint() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 needs a non-negative integer, got '$2'"; }

# --- The shared CPU lock --------------------------------------------------------------------
# The machine has 2 cores shared by several engineers; every heavy job (each L0 QEMU run, each
# build, each benchmark) holds /tmp/pvlock-cpu.lock.  l1-run takes it per attempt, so retries
# and long batches let others in between.  A caller that already wraps us in
# `flock /tmp/pvlock-cpu.lock ...` must not deadlock against itself: if the lock holder listed
# in /proc/locks is one of our ancestors, we are already inside the lock and take nothing.
# A lab script that holds the lock for a batch of l1-runs (reliability --batch) exports
# PVLOCK_CPU_LOCK_HELD=1 to its children while it holds it, for the same purpose.
LAB_CPU_LOCK=${PVLOCK_CPU_LOCK:-/tmp/pvlock-cpu.lock}
LAB_LOCK_FD=

_lab_lock_held_by_ancestor() {
	local ino holders pid
	ino=$(stat -c %i "$LAB_CPU_LOCK") || return 1
	# /proc/locks: "N: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"; waiters have "->".
	holders=$(awk -v ino="$ino" '$2 != "->" { n = split($6, a, ":"); if (a[n] == ino) print $5 }' /proc/locks)
	[ -n "$holders" ] || return 1
	pid=$$
	while [ -n "$pid" ] && [ "$pid" -gt 1 ]; do
		for h in $holders; do [ "$h" = "$pid" ] && return 0; done
		pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	done
	return 1
}

lab_cpu_lock() {
	[ -z "$LAB_LOCK_FD" ] || return 0
	[ "${PVLOCK_CPU_LOCK_HELD:-}" != 1 ] || return 0
	touch "$LAB_CPU_LOCK" 2>/dev/null || true
	if _lab_lock_held_by_ancestor; then
		return 0
	fi
	exec {LAB_LOCK_FD}>>"$LAB_CPU_LOCK"
	if ! flock -n "$LAB_LOCK_FD"; then
		lab_log "waiting for the CPU lock $LAB_CPU_LOCK"
		# In the background + wait: bash runs an INT/TERM trap during `wait`, but not while a
		# foreground command blocks, so a waiting l1-run can still be stopped.
		# exec: $! must be flock itself, not a subshell around it, so cleanup can kill it.
		(exec flock "$LAB_LOCK_FD") &
		LAB_LOCK_WAITER=$!
		wait "$LAB_LOCK_WAITER" || die "waiting for the CPU lock failed (the flock waiter was killed)"
		LAB_LOCK_WAITER=
	fi
	export PVLOCK_CPU_LOCK_HELD=1
}

lab_cpu_unlock() {
	[ -z "${LAB_LOCK_WAITER:-}" ] || kill "$LAB_LOCK_WAITER" 2>/dev/null || true
	[ -n "$LAB_LOCK_FD" ] || return 0
	flock -u "$LAB_LOCK_FD"
	exec {LAB_LOCK_FD}>&-
	LAB_LOCK_FD=
	unset PVLOCK_CPU_LOCK_HELD
}

# Why did a QEMU run with -no-reboot end?  -trace qemu_system_shutdown_request prints
# "reason=N" (enum ShutdownCause, QEMU 7.2) for power-offs and signals.  A guest RESET (triple
# fault, or a reboot) with -no-reboot sets the shutdown flag directly and prints nothing, so
# "QEMU exited 0 with no trace line" is how a reset shows: shutdown_reason QEMU_RC LOG...
# (the trace goes to QEMU's -D log file when there is one, else to stderr).
LAB_QEMU_TRACE=(-trace qemu_system_shutdown_request)
shutdown_reason() {
	local r
	local rc=$1
	shift
	r=$(cat "$@" 2>/dev/null | sed -n 's/.*qemu_system_shutdown_request reason=\([0-9]*\).*/\1/p' | tail -n 1)
	case $r in
	'') if [ "$rc" = 0 ]; then echo guest-reset; else echo "qemu-rc-$rc"; fi ;;
	1) echo host-error ;; 2) echo host-qmp-quit ;; 4) echo host-signal ;;
	6) echo guest-shutdown ;; 7) echo guest-reset ;; 8) echo guest-panic ;; *) echo "reason-$r" ;;
	esac
}

# --- What L1 sees of L0 ------------------------------------------------------------------
# L1 mounts L0's root read-only over 9p, but with tmpfs of its own on these (l1-init):
LAB_L1_HIDDEN=(/tmp /run /dev /proc /sys)
LAB_SHARES=()

# lab_l1_shares DIR...: the directories l1-run shares into L1 at their own paths, read-only
# (as virtme-ng shares its working directory), so that a checkout or a $BUILD under /tmp or
# /run works: LAB_SHARES = the DIRs, resolved, each once, none inside another (a share of a
# directory carries its subdirectories).
lab_l1_shares() {
	local d r s keep
	local resolved=()
	for d in "$@"; do
		r=$(realpath -e -- "$d" 2>/dev/null) || die "shared directory not found: $d"
		[ -d "$r" ] || die "shared directory is not a directory: $d"
		case $r/ in
		/dev/* | /proc/* | /sys/*) die "cannot share $r into L1: L1 has its own /dev, /proc and /sys" ;;
		esac
		resolved+=("$r")
	done
	LAB_SHARES=()
	for r in "${resolved[@]}"; do
		keep=1
		for s in "${resolved[@]}"; do
			# Drop r when another share contains it (or is it, and came first).
			if [ "$s" != "$r" ] && [[ $r/ == "$s"/* ]]; then keep=0; fi
		done
		for s in "${LAB_SHARES[@]}"; do [ "$s" != "$r" ] || keep=0; done
		[ "$keep" = 0 ] || LAB_SHARES+=("$r")
	done
}

# lab_l1_sees PATH: true when L1 sees PATH at the same path (under a share, or in L0's root
# outside the directories L1 has its own tmpfs on).  Call lab_l1_shares first.
lab_l1_sees() {
	local p s h
	p=$(realpath -m -- "$1")
	for s in "${LAB_SHARES[@]}"; do [[ $p/ == "$s"/* ]] && return 0; done
	for h in "${LAB_L1_HIDDEN[@]}"; do [[ $p/ == "$h"/* ]] && return 1; done
	return 0
}

# A value inside a QEMU option list: commas are doubled.
qemu_opt_escape() { printf '%s' "${1//,/,,}"; }

# Quote one word for a POSIX shell (busybox ash reads what we write): 'it'\''s'.
sh_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
