/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: ticket lock with proportional backoff and auto-tuned per-lock
 * delays (seed 004, Rik van Riel's 2013 series).
 *
 * A waiter with n tickets ahead of it polls the head every delay * n relax()
 * calls instead of continuously, which keeps the lock's cache line quiet
 * while many CPUs wait. delay is learnt per lock, per CPU, in a 64-entry
 * table hashed by lock address (lock_hash.h):
 *   - the head reached our ticket while we were backing off: we polled too
 *     late, so delay -= delay / 8 (it converges to the shortest hold time);
 *   - the head moved but not to us: delay += delay / 16 + 1, up to max_delay.
 * The next waiter in line (n == 1) spins on the head without backoff.
 *
 * Collision policy, when the slot holds another lock's delay
 * (tunables.collision), the debate of seed 004 made a knob to be settled by
 * data: Collision::use_min starts from min_delay (Eric Dumazet: an unknown
 * lock must not be overestimated), Collision::use_stored keeps the stored
 * delay (Michel Lespinasse: the autotune must converge anyway).
 *
 * Lock word: the ticket word of ticket.h (head, tail, owner); no flags byte,
 * as nobody halts. The 8-bit tickets limit it to ticket_cpu_limit CPUs, as
 * PvTicket (with 256 waiters the tail wraps onto the head and two CPUs
 * hold the lock). PV: a waiter whose owner is preempted asks for a directed
 * yield to it (YieldPolicy) rather than backing off behind it.
 */
#ifndef PVLOCK_CORE_BACKOFF_H
#define PVLOCK_CORE_BACKOFF_H

#include "lock_hash.h"
#include "ticket.h"

namespace pvlock {

template <typename P>
struct BackoffTicket : TicketWord<P> {
	static_assert(check_platform<P>());

	/* CPUs the lock serves (nr_cpu_ids <= cpu_limit): the 8-bit tickets. */
	static constexpr u32 cpu_limit = ticket_cpu_limit;
	static_assert(cpu_limit < (1U << ticket_bits), "8-bit tickets: 255 outstanding");

	using Word = TicketWord<P>;
	using Delays = LockHash<P, BackoffTicket>;

	static constexpr const char *name = "backoff";

	static inline void lock(LockWord *l)
	{
		u16 old = Word::take(l);
		u8 my = static_cast<u8>(old >> 8);

		if (static_cast<u8>(old) != my) {
			P::contention_begin(l);
			wait_turn(l, my, static_cast<u8>(old));
			P::contention_end(l);
		}
		Word::acquired(l);
	}

	static inline void unlock(LockWord *l) { Word::release(l); }

	/* The delay a waiter on l starts from (exposed for the tests). */
	static inline u32 start_delay(const LockWord *l)
	{
		bool hit;
		LockHashEntry &e = Delays::entry(l, &hit, tunables.delay_slots);

		if (e.value == 0)
			return tunables.min_delay;
		if (!hit && tunables.collision == Collision::use_min)
			return tunables.min_delay;
		return e.value;
	}

private:
	static void wait_turn(LockWord *l, u8 my, u8 head)
	{
		u32 delay = start_delay(l);
		u32 spins = 0;

		for (;;) {
			u8 ahead = static_cast<u8>(my - head);

			if (ahead == 1) {
				/* Next in line: poll continuously. */
				while (Word::load_head(l) != my) {
					if (YieldPolicy<P>::relax_and_check(&spins))
						YieldPolicy<P>::on_spin(Word::load_owner(l), false);
				}
				break;
			}
			for (u32 i = delay * (ahead - 1U); i; i--)
				P::relax();

			u8 now = Word::load_head(l);

			if (now == my) {
				/* Overslept: the lock waited for us. */
				delay -= delay >> 3;
				if (delay < tunables.min_delay)
					delay = tunables.min_delay;
				break;
			}
			if (now != head) {
				delay += (delay >> 4) + 1;
				if (delay > tunables.max_delay)
					delay = tunables.max_delay;
			}
			head = now;
			if constexpr (P::pv) {
				u32 owner = Word::load_owner(l);

				if (YieldPolicy<P>::owner_preempted(owner))
					YieldPolicy<P>::on_spin(owner, ahead > tunables.deep_waiter);
			}
		}

		bool hit;
		LockHashEntry &e = Delays::entry(l, &hit, tunables.delay_slots);

		Delays::store(l, e, delay);
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_BACKOFF_H */
