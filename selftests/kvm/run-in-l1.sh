#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Payload for scripts/lab/l1-run: run the host's KVM selftests inside L1 (the
# patched kvm.ko/kvm-amd.ko already loaded) and write TAP to $LAB_OUT.
#
#   run-in-l1.sh [--build DIR] [--all [--part K/N]] [--stock] [--expect-fail "case ..."]
#                [--no-trace]
#
#   default        x86_64/pvlock_test and the upstream tests of the same area
#                  (x86_64/kvm_pv_test, steal_time, kvm_binary_stats_test),
#                  with the kvm_pvlock_* tracepoints counted while they run
#   --all          every selftest in $BUILD/host/selftests/tests-all.list (the
#                  slower tier: build with scripts/host/build-selftests --all)
#   --part K/N     with --all, only the K-th of N parts: the programs at
#                  positions K, K+N, K+2N... of the list (scripts/host/selftests-full
#                  runs the parts in separate L1 boots, resumably)
#   --stock        L1 runs its stock KVM: pvlock_test must skip (stock host:
#                  QUERY = -KVM_ENOSYS: every case skips in its fixture's setup),
#                  every other test must pass
#   --expect-fail  negative control: pass only if pvlock_test fails exactly
#                  the named cases and passes every other one (case names as in
#                  the source, e.g. msr_migrate; the TAP's pvlock. prefix, the
#                  harness's fixture, may be given or not)
#
# pvlock_test runs on the kselftest harness: its TAP names a case
# "pvlock.<case>" ("ok 11 pvlock.mp_state_pending_kick"), and it exits 0 when
# every case skipped, so its skips are read from the TAP, not the exit status.
#
# Output in $LAB_OUT: host-selftests.tap (one TAP line per program, or per
# pvlock_test case), <program>.log (each program's own TAP), dmesg.txt,
# trace-summary.txt.  Exit 0 pass, 1 fail (l1-run's convention).
# Runs under busybox sh or dash: POSIX sh only.

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
all=0
expect_fail=
stock=0
trace=1
part=1/1
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--all) all=1; shift ;;
	--part) part=$2; shift 2 ;;
	--expect-fail) expect_fail=$2; shift 2 ;;
	--stock) stock=1; trace=0; shift ;;
	--no-trace) trace=0; shift ;;
	*) echo "run-in-l1.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
# The names of pvlock_test's cases, without the harness's "pvlock." prefix.
names=
for c in $expect_fail; do names="$names ${c#pvlock.}"; done
expect_fail=${names# }

out=${LAB_OUT:-/tmp/host-selftests}
mkdir -p "$out"
bin=$build/host/selftests
tap=$out/host-selftests.tap
: >"$tap"
say() { echo "host-selftests: $*"; }

if [ ! -x "$bin/x86_64/pvlock_test" ]; then
	say "no $bin/x86_64/pvlock_test: run scripts/host/build-selftests first"
	exit 1
fi

case "$part" in
*[!0-9/]* | /* | */ | */*/* | 0* | */0*) echo "run-in-l1.sh: --part takes K/N, not '$part'" >&2; exit 2 ;;
*/*) ;;
*) echo "run-in-l1.sh: --part takes K/N, not '$part'" >&2; exit 2 ;;
esac
part_k=${part%/*} part_n=${part#*/}
if [ "$part_k" -lt 1 ] || [ "$part_k" -gt "$part_n" ]; then
	echo "run-in-l1.sh: --part $part: K must be 1..N" >&2
	exit 2
fi
if [ "$all" = 1 ]; then
	if [ ! -s "$bin/tests-all.list" ]; then
		say "no $bin/tests-all.list: run scripts/host/build-selftests --all first"
		exit 1
	fi
	tests=$(tr ' ' '\n' <"$bin/tests-all.list" | sed '/^$/d' |
		awk -v k="$part_k" -v n="$part_n" '(NR - k) % n == 0')
else
	tests="x86_64/pvlock_test x86_64/kvm_pv_test steal_time kvm_binary_stats_test"
fi

say "kernel $(uname -r); kvm.pvlock=$(cat /sys/module/kvm/parameters/pvlock 2>/dev/null || echo absent)"
dmesg -c >/dev/null 2>&1 || true
# debugfs, for pvlock_test's cases that re-arm WARN_ON_ONCE() (clear_warn_once) before
# they read their part of the kernel log.
[ -e /sys/kernel/debug/clear_warn_once ] || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || true

# Tracepoints: count kvm_pvlock_* events while the tests run.
tracing=/sys/kernel/tracing
if [ "$trace" = 1 ] && [ -z "$expect_fail" ]; then
	[ -d "$tracing/events" ] || mount -t tracefs nodev "$tracing" 2>/dev/null
	if [ -d "$tracing/events/kvm/kvm_pvlock_call" ]; then
		echo 0 >"$tracing/tracing_on"
		: >"$tracing/trace"
		echo 8192 >"$tracing/buffer_size_kb" 2>/dev/null
		for e in "$tracing"/events/kvm/kvm_pvlock_*; do echo 1 >"$e/enable"; done
		echo 1 >"$tracing/tracing_on"
	else
		say "no kvm_pvlock_* tracepoints (tracefs at $tracing?)"
		trace=0
	fi
fi

n=0
failed=0
for t in $tests; do
	n=$((n + 1))
	name=$(echo "$t" | tr / _)
	log=$out/$name.log
	# Each program is bounded here; l1-run's outer watchdog bounds the lot.
	timeout -k 10 600 "$bin/$t" >"$log" 2>&1
	rc=$?
	case $rc in
	0) res="ok $n $t" ;;
	4) res="ok $n $t # SKIP $(grep -m1 -i skip "$log" | cut -c1-100)" ;;
	*) res="not ok $n $t # exit $rc" ;;
	esac
	cases=0
	if [ "$t" = x86_64/pvlock_test ]; then
		# Its cases, and those the fixture's setup skipped for want of pvlock.
		cases=$(grep -cE '^(not )?ok [0-9]+ pvlock\.' "$log")
		absent=$(grep -cE '^ok [0-9]+ pvlock\.[a-z0-9_]+ # SKIP pvlock hypercall absent' "$log")
		if [ "$stock" = 1 ]; then
			# Every case skipped for that reason (or, as any program, the whole
			# program skipped: exit 4).
			if [ $rc = 0 ] && [ "$cases" -gt 0 ] && [ "$absent" = "$cases" ]; then
				res="ok $n $t # SKIP $(grep -m1 -E '^ok [0-9]+ pvlock\..* # SKIP ' "$log" |
					sed 's/.* # SKIP //' | cut -c1-100)"
				cases=0
			elif [ $rc != 4 ]; then
				res="not ok $n $t # must skip on stock KVM: exit $rc, $absent of $cases cases skipped"
			fi
		elif [ $rc = 4 ] || [ "$absent" != 0 ]; then
			# Our own test must not skip: it is what this run is for.
			res="not ok $n $t # skipped: exit $rc, $absent of $cases cases found no pvlock"
		fi
	fi
	echo "$res" >>"$tap"
	case $res in not*) failed=$((failed + 1)) ;; esac
	say "$t: exit $rc"
	# pvlock_test's own cases, for the summary (the host's QUERY answer once:
	# every case's setup prints it).
	if [ "$cases" != 0 ]; then
		grep -E '^(not )?ok [0-9]+ ' "$log" | sed 's/^/#   pvlock_test: /' >>"$tap"
		grep -m1 '^# QUERY' "$log" | sed 's/^/#   /' >>"$tap"
		grep -E '^# (yield|wait|hammer|opt_in)' "$log" | sed 's/^/#   /' >>"$tap"
	fi
done
echo "1..$n" >>"$tap"

if [ "$trace" = 1 ] && [ -z "$expect_fail" ]; then
	echo 0 >"$tracing/tracing_on"
	for e in kvm_pvlock_call kvm_pvlock_wake kvm_pvlock_kick kvm_pvlock_yield kvm_pvlock_preempt; do
		c=$(grep -c " $e: " "$tracing/trace")
		echo "$e $c" >>"$out/trace-summary.txt"
		if [ "$c" -eq 0 ]; then
			echo "# tracepoint $e never fired" >>"$tap"
			failed=$((failed + 1))
		fi
	done
	# How yields found their targets, how often a preempted vCPU held a lock.
	for w in named hinted holder preempted; do
		echo "kvm_pvlock_yield($w) $(grep -c "kvm_pvlock_yield: .*($w) ret 0" "$tracing/trace") succeeded" \
			>>"$out/trace-summary.txt"
	done
	echo "kvm_pvlock_preempt(holding a lock) $(grep -c "holding a lock" "$tracing/trace")" \
		>>"$out/trace-summary.txt"
	for e in kvm_pvlock_call kvm_pvlock_wake kvm_pvlock_kick kvm_pvlock_yield kvm_pvlock_preempt; do
		grep -m 5 " $e: " "$tracing/trace"
	done >"$out/trace-sample.txt"
	grep -m 5 "holding a lock" "$tracing/trace" >>"$out/trace-sample.txt"
	for e in "$tracing"/events/kvm/kvm_pvlock_*; do echo 0 >"$e/enable"; done
	say "tracepoints: $(tr '\n' ' ' <"$out/trace-summary.txt")"
fi

dmesg >"$out/dmesg.txt" 2>&1
if grep -E "WARNING:|BUG:|Oops|general protection|rcu_.*stall|soft lockup|hung_task" "$out/dmesg.txt" >/dev/null; then
	echo "# the L1 kernel log has a WARNING/BUG/stall (dmesg.txt)" >>"$tap"
	failed=$((failed + 1))
fi

cat "$tap"

if [ -n "$expect_fail" ]; then
	log=$out/x86_64_pvlock_test.log
	bad=0
	for c in $expect_fail; do
		grep -q "^not ok [0-9]* pvlock\.$c\b" "$log" || { say "negative control: $c did not fail"; bad=1; }
	done
	# Everything else must still pass: the control must fail for its reason.
	grep "^not ok " "$log" | while read -r _ _ _ c _; do
		c=${c#pvlock.}
		case " $expect_fail " in *" $c "*) ;; *) say "negative control: unexpected failure $c"; exit 1 ;; esac
	done || bad=1
	[ "$bad" = 0 ] && say "negative control: the broken handler was caught ($expect_fail)"
	exit $bad
fi

[ "$failed" = 0 ] && say "all $n passed" || say "$failed failed"
[ "$failed" = 0 ]
