/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: who holds a lock, and when a waiter gives its CPU to the holder.
 *
 * Every pvlock word has an owner byte: 0 when free (or the owner is not yet
 * recorded), cpu + 1 for CPUs below owner_unknown - 1, and owner_unknown for
 * larger CPU numbers. Knowing the owner is what lets a waiter ask the host for
 * a directed yield to it, instead of the host guessing as kvm_vcpu_on_spin()
 * does on a pause-loop exit.
 *
 * The policy, in one place for every algorithm:
 *   - the owner is known and preempted: yield to it (the host runs it in our
 *     place, so the critical section finishes on our time slice);
 *   - the owner is known and running: keep spinning, it will release soon;
 *   - the owner is unknown, or the host refused the directed yield, and the
 *     waiter is deep in the queue: ask the host for any preempted vCPU.
 * A waiter checks only every (preempt_check_mask + 1) spins, so the cost on
 * the spinning path is one branch; the shared-area read is a plain load.
 */
#ifndef PVLOCK_CORE_YIELD_POLICY_H
#define PVLOCK_CORE_YIELD_POLICY_H

#include "platform.h"
#include "tunables.h"

namespace pvlock {

constexpr u8 owner_none = 0;
constexpr u8 owner_unknown = 0xff;

static inline u8 owner_encode(u32 cpu)
{
	return cpu < owner_unknown - 1 ? static_cast<u8>(cpu + 1) : owner_unknown;
}

/* The owner's CPU, or no_cpu when the byte does not name one. */
static inline u32 owner_decode(u8 owner)
{
	return owner == owner_none || owner == owner_unknown ? no_cpu : owner - 1U;
}

template <typename P>
struct YieldPolicy {
	/* Is it time to look at the holder? spins counts relax() calls. */
	static inline bool check_due(u32 spins)
	{
		return P::pv && (spins & tunables.preempt_check_mask) == 0;
	}

	/*
	 * One spin of a waiting loop: relax, count it, and say whether this
	 * is a spin on which to look at the holder (never, without PV).
	 */
	static inline bool relax_and_check(u32 *spins)
	{
		P::relax();
		if constexpr (!P::pv)
			return false;
		return check_due(++*spins);
	}

	/*
	 * Called by a waiter on a check_due() spin. Returns true if this vCPU
	 * gave its CPU away (so the caller re-reads the lock, and restarts any
	 * spin budget: time spent descheduled is not spinning).
	 */
	static bool on_spin(u32 owner_cpu, bool deep)
	{
		if constexpr (!P::pv)
			return false;
		if (!tunables.directed_yield)
			return false;
		if (owner_cpu != no_cpu && P::vcpu_is_preempted(owner_cpu)) {
			P::hint_waiting_on(owner_cpu);
			if (P::yield_to(owner_cpu))
				return true;
		}
		if (deep)
			return P::yield_any();
		return false;
	}

	/* The owner is preempted: spinning on it is wasted until it runs. */
	static inline bool owner_preempted(u32 owner_cpu)
	{
		return P::pv && owner_cpu != no_cpu && P::vcpu_is_preempted(owner_cpu);
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_YIELD_POLICY_H */
