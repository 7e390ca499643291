/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the user-space platform. Threads play vCPUs and the Linux scheduler
 * plays the host: with the threads confined to N cores, 2N..4N threads are a
 * real 2x..4x overcommit.
 *
 *   wait/kick       a per-vCPU pending-kick flag, the futex word: kick()
 *                   sets it and wakes; wait() returns at once if it is set,
 *                   re-checks *ptr == val, sleeps while it is clear, for at
 *                   most wait_bound_us (as the host bounds PVLOCK_OP_WAIT),
 *                   and clears it: KVM's pv_unhalted, which any halt of the
 *                   vCPU consumes. With sticky_kicks off, the older model
 *                   for tests: a kick counter sampled at wait() entry, so a
 *                   kick that lands between the caller's state write and
 *                   that sample is lost.
 *   preempted       from the scheduler itself: each vCPU thread has a
 *                   perf_event context-switch record stream; the last record
 *                   is "switched out while runnable" (PERF_RECORD_MISC_
 *                   SWITCH_OUT_PREEMPT) exactly while the thread is preempted,
 *                   the condition KVM uses for vcpu->preempted.
 *   yield_to/any    sched_yield(): Linux has no directed yield to a thread,
 *                   so a yield here lets the core's next runnable thread run,
 *                   which under overcommit is often, not always, the owner.
 *   percpu<T>(cpu)  a static array per T, indexed by vCPU id.
 */
#ifndef PVLOCK_USER_PLATFORM_H
#define PVLOCK_USER_PLATFORM_H

#include "../core/atomic.h"
#include "../core/platform.h"

namespace pvlock {

struct UserPlatform : BuiltinAtomics {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = 128;

	/* Make the calling thread vCPU id (< max_cpus); returns false if the
	 * preemption stream could not be opened (then preempted is never
	 * reported, and the caller should say so). */
	static bool register_vcpu(u32 id);
	static void unregister_vcpu(u32 id);
	/* Number of vCPU ids in use; set before the threads start. */
	static void set_nr_cpus(u32 n);
	/* Whether preemption reporting works on this machine. */
	static bool preemption_visible();

	static u32 this_cpu() { return self; }
	static u32 nr_cpus() { return nr; }
	static void relax() { __builtin_ia32_pause(); }
	static u64 clock() { return __builtin_ia32_rdtsc(); }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];

		return storage[cpu];
	}

	static void wait(const u8 *ptr, u8 val);
	static void kick(u32 cpu);
	static bool vcpu_is_preempted(u32 cpu);
	static bool yield_to(u32 cpu);
	static bool yield_any();
	static void hint_waiting_on(u32) {}
	static void hint_holding(int) {}
	/* No tracepoints in user space: perf sees the futex waits instead. */
	static void contention_begin(LockWord *) {}
	static void contention_end(LockWord *) {}

	/*
	 * Event counts, for the benchmark's report. A wait that ends at its
	 * bound is a lost kick if the condition no longer held by then (the
	 * waker had changed *ptr, and its kick did not end the wait), else a
	 * timeout.
	 */
	struct Counters {
		u64 waits, kicks, yields;
		u64 timeouts, lost_kicks;
	};
	static Counters counters();
	static void reset_counters();

	/* Bound of one wait() in microseconds; 0 = none (tests use 0, so
	 * that a lost wake-up hangs and the test's watchdog sees it). */
	static u32 wait_bound_us;
	/* A kick before the halt is kept (the platform contract); tests turn
	 * it off to run the algorithms on a host that drops it. */
	static bool sticky_kicks;

	static thread_local u32 self;
	static u32 nr;
};

} /* namespace pvlock */

#endif /* PVLOCK_USER_PLATFORM_H */
