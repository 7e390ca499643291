/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: unfair test-and-set lock with exponential backoff, for hosts that
 * do not speak any PV lock interface (seed 002; upstream's virt_spin_lock()).
 *
 * Fair locks hand the lock to a waiter that may be preempted and so stall
 * everyone (seed 002: 12x slower at 200% overcommit); an unfair lock lets
 * whichever vCPU runs take it. The price is starvation on bare metal, which
 * is why it is the choice only when the host gives no help.
 *
 * Lock word: byte 0 is the owner (owner_encode(cpu), 0 = free); the rest is 0.
 * Any nonzero code holds the lock, owner_unnamed included, so the lock
 * serves every CPU id (cpu_limit_none); an unnamed owner is found for the
 * directed yield through OwnerHints.
 *   lock:    (0) -> (me)  cmpxchg, after reading 0 (test-and-test-and-set)
 *   unlock:  (me) -> (0)  store-release
 * A waiter backs off exponentially between reads (from min_delay, doubling to
 * max_delay), so the line is not hammered. PV: if the owner is preempted it
 * asks for a directed yield to it.
 */
#ifndef PVLOCK_CORE_UNFAIR_H
#define PVLOCK_CORE_UNFAIR_H

#include "lock_word.h"
#include "platform.h"
#include "tunables.h"
#include "yield_policy.h"

namespace pvlock {

template <typename P>
struct UnfairTas {
	static_assert(check_platform<P>());

	static constexpr const char *name = "unfair";
	static constexpr u32 cpu_limit = cpu_limit_none;

	static inline void lock(LockWord *l)
	{
		u8 code = owner_encode(P::this_cpu());

		if (!trylock_nohint(l, code)) {
			P::contention_begin(l);
			lock_slow(l, code);
			P::contention_end(l);
		}
		if constexpr (P::pv) {
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
	}

	static inline bool trylock(LockWord *l)
	{
		u8 code = owner_encode(P::this_cpu());

		if (!trylock_nohint(l, code))
			return false;
		if constexpr (P::pv) {
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
		return true;
	}

	static inline void unlock(LockWord *l)
	{
		if constexpr (P::pv)
			P::hint_holding(-1);
		/* Pairs with the acquire of the next owner's cmpxchg. */
		P::store(byte_of(l, 0), owner_none, Order::release);
	}

	static inline bool is_locked(const LockWord *l)
	{
		return P::load(byte_of(l, 0), Order::relaxed) != owner_none;
	}

	/* Waiters leave no trace in the word. */
	static inline bool is_contended(const LockWord *) { return false; }

	static constexpr bool value_unlocked(u32 v) { return (v & 0xff) == 0; }

private:
	static inline bool trylock_nohint(LockWord *l, u8 code)
	{
		u8 *owner = byte_of(l, 0);
		u8 free = owner_none;

		return P::load(owner, Order::relaxed) == owner_none &&
		       P::cmpxchg(owner, &free, code, Order::acquire);
	}

	static void lock_slow(LockWord *l, u8 code)
	{
		u32 delay = tunables.min_delay;

		for (;;) {
			for (u32 i = delay; i; i--)
				P::relax();
			if (trylock_nohint(l, code))
				return;
			if (delay < tunables.max_delay / 2)
				delay *= 2;
			if constexpr (P::pv) {
				u32 owner = OwnerHints<P>::owner_of(
					l, P::load(byte_of(l, 0), Order::relaxed));

				if (YieldPolicy<P>::owner_preempted(owner) &&
				    YieldPolicy<P>::on_spin(owner, false))
					delay = tunables.min_delay;
			}
		}
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_UNFAIR_H */
