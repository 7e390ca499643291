/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: what a platform supplies to the lock algorithms.
 *
 * Every algorithm in guest/core is a class template over a platform P, in the
 * way kernel/locking/qspinlock.c is compiled natively and with PV hooks. The
 * same source is instantiated with:
 *   - the kernel platform (guest/kernel), where a vCPU is a CPU of the guest
 *     and wait/kick/yield are pvlock hypercalls;
 *   - the user-space platform (guest/user), where a vCPU is a thread, wait/kick
 *     is a futex and "preempted" comes from the scheduler's context-switch
 *     records;
 *   - the simulator (guest/sim), a deterministic scheduler that can preempt a
 *     vCPU at any atomic step and replay a schedule from its seed.
 *
 * A platform is a struct with static members only:
 *
 *   atomics     load/store/xchg/cmpxchg/fetch_add/fetch_or/fetch_and/
 *               full_fence, as in BuiltinAtomics (atomic.h)
 *   pv          constexpr bool: false compiles every PV hook out, which is how
 *               the cost of the hooks is measured (Native<P> below)
 *   max_cpus    constexpr u32: bound on vCPU ids, sizes the per-CPU tables
 *   this_cpu()  the running vCPU's id; stable while a lock is held or waited
 *               on (the kernel disables preemption before arch_spin_lock)
 *   nr_cpus()   vCPU ids are < nr_cpus() <= max_cpus
 *   relax()     cpu_relax(): PAUSE, which also makes the loop visible to the
 *               host as a spin (pause-loop exiting)
 *   clock()     a monotonic tick count, for adaptive timeouts (TSC, or the
 *               simulator's step counter); only differences are used
 *   percpu<T>(cpu)  this vCPU's instance of T, zero-initialised, one per T
 *   contention_begin(l), contention_end(l)
 *               lock() calls begin once it knows it must wait for l, before
 *               its first spin or halt, and end once it owns l, before
 *               lock() returns; an uncontended lock() and trylock() call
 *               neither. In the kernel they are the lock:contention_begin/
 *               end tracepoints that queued_spin_lock_slowpath() emits,
 *               which perf lock contention and the BPF tools built on them
 *               read. Not PV hooks: Native<P> keeps them.
 *
 * and the PV hooks, whose contracts are those of the kernel's pv_wait() and
 * pv_kick():
 *
 *   wait(ptr, val)  halt this vCPU while *ptr == val. It may return early
 *                   (an interrupt, a bound, a stale kick); callers re-check.
 *                   A kick() that targets this vCPU after the caller last
 *                   wrote the state that makes its waker kick it must not be
 *                   lost, even if it lands before the halt. The pending kick
 *                   is taken by the next wait() of this vCPU, whichever it
 *                   is (an interrupt handler's, for another lock, too), so
 *                   a caller waits on a value that only it and its waker
 *                   change, which the waker changes before kicking
 *                   (wait_node.h): then a kick eaten by another wait, or one
 *                   a weaker host drops, still leaves a value it will not
 *                   halt on.
 *   kick(cpu)       wake cpu from wait(), or make its next wait() return.
 *                   A wait() that returns because of the kick sees what the
 *                   caller wrote before kick() (release, as a hypercall is).
 *   vcpu_is_preempted(cpu)
 *                   true while cpu is runnable but not running (scheduled
 *                   out involuntarily by the host); a hint, may be stale.
 *   yield_to(cpu)   ask the host to run cpu in this vCPU's place if cpu is
 *                   preempted; true if the host did yield (a host that
 *                   does not say, stock KVM's KVM_HC_SCHED_YIELD: true
 *                   once asked).
 *   yield_any()     ask the host to run whichever preempted vCPU it judges
 *                   best; true if it yielded.
 *   hint_waiting_on(cpu)  tell the host which vCPU this one waits on
 *                   (no_cpu: none); a hint in the shared area, no exit.
 *   hint_holding(delta)   count of locks held, +1 on acquire, -1 on release.
 */
#ifndef PVLOCK_CORE_PLATFORM_H
#define PVLOCK_CORE_PLATFORM_H

#include "atomic.h"
#include "lock_word.h"

namespace pvlock {

/* No vCPU: an unknown lock owner, or "waiting on nobody". */
constexpr u32 no_cpu = ~0U;

/*
 * Native<P>: the same platform with every PV hook compiled out. Waiters spin
 * instead of halting and nobody yields; algorithms test P::pv with
 * "if constexpr", so the native build contains none of the PV code.
 */
template <typename P>
struct Native : P {
	static constexpr bool pv = false;

	static inline void wait(const u8 *, u8) { P::relax(); }
	static inline void kick(u32) {}
	static inline bool vcpu_is_preempted(u32) { return false; }
	static inline bool yield_to(u32) { return false; }
	static inline bool yield_any() { return false; }
	static inline void hint_waiting_on(u32) {}
	static inline void hint_holding(int) {}
};

/*
 * Compile-time check that P supplies everything above with the right types;
 * every algorithm instantiates it, so a platform that misses a hook fails to
 * build with a message naming the hook.
 */
template <typename P>
constexpr bool check_platform()
{
	static_assert(P::max_cpus > 0 && P::max_cpus < 0xffff,
		      "platform: max_cpus must fit the 16-bit encodings");
	static_assert(sizeof(P::this_cpu()) == sizeof(u32), "platform: this_cpu()");
	static_assert(sizeof(P::nr_cpus()) == sizeof(u32), "platform: nr_cpus()");
	static_assert(sizeof(P::clock()) == sizeof(u64), "platform: clock()");
	static_assert(sizeof(P::vcpu_is_preempted(0)) == sizeof(bool),
		      "platform: vcpu_is_preempted()");
	static_assert(sizeof(P::yield_to(0)) == sizeof(bool), "platform: yield_to()");
	static_assert(sizeof(P::yield_any()) == sizeof(bool), "platform: yield_any()");
	static_assert(sizeof(P::pv) == sizeof(bool), "platform: pv");
	return true;
}

} /* namespace pvlock */

#endif /* PVLOCK_CORE_PLATFORM_H */
