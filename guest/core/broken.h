/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: deliberately broken locks, the negative controls of every harness
 * (simulator, threads, the in-kernel benchmark). Never a real lock: nothing
 * that picks a spinlock algorithm may offer these.
 *
 * RacyTas tests and sets with two separate accesses, with window relax()
 * calls between them, so two vCPUs can both see the lock free and both
 * "acquire" it. A harness that checks mutual exclusion must catch it.
 *
 * PvQueuedOwnerWait is PvQueued as it was before issue 17: its queue head
 * halts while the owner byte holds the value it saw when it marked itself
 * halted. An unlock (which clears the mark and kicks) and a re-lock by the
 * same CPU in between restore that value; if the kick is gone by then
 * (eaten by a nested wait, or a host whose kicks do not stick) the head
 * sleeps with nobody left to kick it. A harness with unbounded waits must
 * report a lost wake-up. The defect is a compile-time switch of PvQueued
 * itself, so the control runs the algorithm, not a copy of it.
 */
#ifndef PVLOCK_CORE_BROKEN_H
#define PVLOCK_CORE_BROKEN_H

#include "lock_word.h"
#include "platform.h"
#include "queued.h"

namespace pvlock {

template <typename P, unsigned int window = 0>
struct RacyTas {
	/* The name the in-kernel benchmark and pvlock= know it by. */
	static constexpr const char *name = "broken";
	static constexpr u32 cpu_limit = cpu_limit_none;

	static inline void lock(LockWord *l)
	{
		for (;;) {
			if (P::load(&l->val, Order::acquire) == 0) {
				/* the bug: a window between the test and the set */
				for (unsigned int i = 0; i < window; i++)
					P::relax();
				P::store(&l->val, 1U, Order::relaxed);
				return;
			}
			P::relax();
		}
	}

	static inline bool trylock(LockWord *l)
	{
		if (P::load(&l->val, Order::acquire) != 0)
			return false;
		P::store(&l->val, 1U, Order::relaxed);
		return true;
	}

	static inline void unlock(LockWord *l) { P::store(&l->val, 0U, Order::release); }

	static inline bool is_locked(const LockWord *l)
	{
		return P::load(&l->val, Order::relaxed) != 0;
	}

	static inline bool is_contended(const LockWord *) { return false; }
	static constexpr bool value_unlocked(u32 v) { return v == 0; }
};

template <typename P>
using PvQueuedOwnerWait = PvQueued<P, QueuedDefect::head_waits_on_owner>;

/* Steals past a preempted queue head without head_pass_limit. */
template <typename P>
using PvQueuedUnboundedSteals = PvQueued<P, QueuedDefect::head_passes_unbounded>;

/* A stealer that yields to a preempted owner instead of queueing. */
template <typename P>
using PvQueuedStealYields = PvQueued<P, QueuedDefect::steal_phase_yields>;

} /* namespace pvlock */

#endif /* PVLOCK_CORE_BROKEN_H */
