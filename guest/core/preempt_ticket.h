/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: preemptable ticket lock with adaptive per-lock timeouts
 * (Ouyang & Lange, VEE 2013; the open ideas of seed 000).
 *
 * A ticket lock whose waiters, after waiting longer than their position in
 * the queue times a timeout unit, stop waiting for their turn and take the
 * lock whenever it is free. A preempted waiter whose turn came therefore
 * delays the others by at most one timeout, instead of until it runs again.
 * Seed 000 found a fixed unit (TIMEOUT_UNIT) soft-locks under overcommit and
 * costs 37-93% with no overcommit, and proposed two fixes, both here:
 *   1. adaptive, per-lock timeouts: the unit is the lock's measured hand-over
 *      time (an average over this CPU's recent waits for it), kept in the
 *      per-CPU table hashed by lock address (lock_hash.h);
 *   2. an immediate yield for waiters deep in the queue: one more than
 *      tunables.deep_waiter places back asks the host to run a preempted vCPU
 *      (the owner if it is preempted, else any) instead of burning the CPU.
 *
 * Lock word (little-endian bytes):
 *   byte 0  head   acquisitions served (incremented by every unlock)
 *   byte 1  tail   tickets handed out
 *   byte 2  owner  owner_encode(cpu) of the holder; the lock is held iff != 0
 *
 *   lock:     (h, t, *) -> (h, t + 1, *)   take ticket t (fetch_add)
 *             (h, *, 0) -> (h, *, me)      cmpxchg of owner, once our turn
 *                                          came (h >= t) or we timed out
 *   trylock:  (h, h, 0) -> (h, h + 1, me)  cmpxchg of the word
 *   unlock:   (h, t, me) -> (h + 1, t, 0)  store head, then store-release owner
 * Every acquisition holds a ticket and every unlock serves one, so head
 * catches up with tail when the lock goes idle, whatever order the tickets
 * were served in.
 *
 * CPU limit: the owner byte decides who holds the lock, so exclusion holds
 * for any number of CPUs; the tickets only order the timeouts, and a
 * waiter reads its place as s8 (my - head). With more than 127 waiters a
 * deep one reads a negative place, takes its turn as come and competes
 * for every free lock: an unfair lock for them. cpu_limit says 127.
 */
#ifndef PVLOCK_CORE_PREEMPT_TICKET_H
#define PVLOCK_CORE_PREEMPT_TICKET_H

#include "lock_hash.h"
#include "ticket.h"

namespace pvlock {

template <typename P>
struct PreemptTicket {
	static_assert(check_platform<P>());

	/* CPUs the lock serves fairly (nr_cpu_ids <= cpu_limit): s8 places. */
	static constexpr u32 cpu_limit = (1U << (ticket_bits - 1)) - 1;
	static_assert(cpu_limit == 127, "a waiter's place is an s8");

	using Handover = LockHash<P, PreemptTicket>;

	static constexpr const char *name = "ptticket";
	/* Unit before anything is measured, and the floor, in clock() ticks. */
	static constexpr u32 min_unit = 512;

	static inline void lock(LockWord *l)
	{
		u16 old = TicketWord<P>::take(l);
		u8 my = static_cast<u8>(old >> 8);
		u8 free = owner_none;
		u8 code = owner_encode(P::this_cpu());

		if (static_cast<u8>(old) != my ||
		    !P::cmpxchg(byte_of(l, 2), &free, code, Order::acquire)) {
			P::contention_begin(l);
			wait_turn(l, my, static_cast<u8>(old), code);
			P::contention_end(l);
		}
		if constexpr (P::pv) {
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
	}

	static inline bool trylock(LockWord *l)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		if (ticket_head(v) != ticket_tail(v) || ticket_owner(v) != owner_none)
			return false;
		u32 nv = (v + ticket_tail_inc) & 0xffffU;
		u8 code = owner_encode(P::this_cpu());

		nv |= static_cast<u32>(code) << 16;
		if (!P::cmpxchg(&l->val, &v, nv | (v & 0xff000000U), Order::acquire))
			return false;
		if constexpr (P::pv) {
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
		return true;
	}

	static inline void unlock(LockWord *l)
	{
		u8 *head = byte_of(l, 0);

		if constexpr (P::pv)
			P::hint_holding(-1);
		/*
		 * Only the holder writes head. The owner store is the release:
		 * a waiter that sees the lock free (acquire) sees the new head.
		 */
		P::store(head, static_cast<u8>(P::load(head, Order::relaxed) + 1),
			 Order::relaxed);
		P::store(byte_of(l, 2), owner_none, Order::release);
	}

	static inline bool is_locked(const LockWord *l)
	{
		return ticket_owner(P::load(&l->val, Order::relaxed)) != owner_none;
	}

	static inline bool is_contended(const LockWord *l)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		return static_cast<u8>(ticket_tail(v) - ticket_head(v)) > 1;
	}

	static constexpr bool value_unlocked(u32 v) { return ticket_owner(v) == owner_none; }

	/* The timeout unit a waiter on l uses now (exposed for the tests). */
	static inline u32 unit(const LockWord *l)
	{
		bool hit;
		LockHashEntry &e = Handover::entry(l, &hit);

		return hit && e.value > min_unit ? e.value : min_unit;
	}

private:
	static void wait_turn(LockWord *l, u8 my, u8 head0, u8 code)
	{
		u64 start = P::clock();
		u32 unit_ticks = unit(l);
		s8 ahead0 = static_cast<s8>(my - head0);
		u32 spins = 0;

		for (;;) {
			u32 v = P::load(&l->val, Order::acquire);
			s8 ahead = static_cast<s8>(my - ticket_head(v));
			u8 owner = ticket_owner(v);

			if (owner == owner_none &&
			    (ahead <= 0 ||
			     P::clock() - start > static_cast<u64>(unit_ticks) * ahead)) {
				u8 free = owner_none;

				if (P::cmpxchg(byte_of(l, 2), &free, code, Order::acquire))
					break;
			}
			if (!YieldPolicy<P>::relax_and_check(&spins))
				continue;
			/* Deep in the queue: give the CPU away at once. */
			YieldPolicy<P>::on_spin(OwnerHints<P>::owner_of(l, owner),
						ahead > tunables.deep_waiter);
		}
		if constexpr (P::pv)
			P::hint_waiting_on(no_cpu);

		/* Learn the hand-over time: an average of 1/8 weight per wait. */
		if (ahead0 > 0) {
			u64 per = (P::clock() - start) / static_cast<u64>(ahead0);
			u32 sample = per > 0xffffffU ? 0xffffffU : static_cast<u32>(per);
			bool hit;
			LockHashEntry &e = Handover::entry(l, &hit);
			u32 old = hit && e.value ? e.value : sample;

			Handover::store(l, e, old - (old >> 3) + (sample >> 3));
		}
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_PREEMPT_TICKET_H */
