/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the PV queued (MCS) lock, and its native build.
 *
 * PvQueued<P> is an MCS queue lock in 32 bits, in the manner of qspinlock,
 * with PV waiting; Queued<P> = PvQueued<Native<P>> is the same lock without
 * the PV hooks. What it does differently from upstream pvqspinlock (see
 * shared/reference/upstream.md):
 *   - the word names its owner, so the queue head yields to a preempted owner
 *     (directed yield) instead of halting and leaving the choice to the host;
 *   - the head halts early when the owner is preempted, not only after
 *     spin_threshold spins;
 * and what it keeps: a running vCPU may take a free lock ("steal") while the
 * queue head is not spinning for it (halted, or not yet awake after its kick),
 * because a halted head takes a wake-up to use the lock and a running vCPU
 * does not. The head blocks steals while it spins (q_head_spinning, the role
 * of qspinlock's pending bit), so once awake it gets the lock at the next
 * release. With tunables.lock_steal off the lock is strictly FIFO.
 *
 * Lock word (little-endian):
 *
 *   byte 0     owner   owner_encode(cpu) of the holder; 0 = free
 *   byte 1     flags   q_slow: the queue head is halted; the next unlock
 *                              kicks it and clears q_slow
 *                      q_head_spinning: the queue head runs and waits for
 *                              the lock; nobody steals
 *   bytes 2-3  tail    (cpu + 1) << 2 | nesting level of the last waiter
 *
 * State legend (tail, flags, owner), transitions:
 *
 *   fast lock:   (0, 0, 0)        -> (0, 0, me)          cmpxchg of the word
 *   steal:       (*, !spin, 0)    -> (*, !spin, me)      PV, if lock_steal
 *   enqueue:     (t, *, *)        -> (me, *, *)          xchg of the tail half
 *   head runs:   (*, f, *)        -> (*, f | spin, *)    PV
 *   head takes:  (n, *, 0)        -> (n, 0, me)          n != our tail
 *                (me, *, 0)       -> (0, 0, me)          we are the last waiter
 *   head halts:  (*, spin, o)     -> (*, slow, o)        o != 0 (PV, cmpxchg)
 *   hand-over:   (*, f, me)       -> (*, f | slow, me)   successor halted (PV)
 *   unlock:      (*, f, me)       -> (*, f & ~slow, 0)   native: store-release
 *                                                        of owner; PV: fetch_and,
 *                                                        then kick the head if f
 *                                                        had slow
 *
 * A head sets q_slow only while the lock is held (its cmpxchg expects the
 * owner it saw), so the unlock that ends that hold sees q_slow and kicks it:
 * one kick per halt, as in pvqspinlock. The MCS hand-over to a halted
 * successor does not kick it (it would only spin on a held lock): the holder
 * marks it head_halted and sets q_slow, and the holder's own unlock kicks it,
 * as pv_kick_node() does.
 */
#ifndef PVLOCK_CORE_QUEUED_H
#define PVLOCK_CORE_QUEUED_H

#include "lock_word.h"
#include "platform.h"
#include "tunables.h"
#include "wait_node.h"
#include "yield_policy.h"

namespace pvlock {

constexpr u32 q_owner_mask = 0xffU;
constexpr u32 q_slow = 1U << 8;
constexpr u32 q_head_spinning = 1U << 9;
constexpr u32 q_tail_shift = 16;
constexpr u32 q_tail_mask = 0xffffU << q_tail_shift;

static inline u8 q_owner(u32 v) { return static_cast<u8>(v & q_owner_mask); }
static inline u16 q_tail(u32 v) { return static_cast<u16>(v >> q_tail_shift); }

template <typename P>
struct PvQueued {
	static_assert(check_platform<P>());
	static_assert(P::max_cpus < (1U << 14) - 1, "tail: 14 bits of cpu + 1");

	static constexpr const char *name = P::pv ? "pvqueued" : "queued";

	static inline void lock(LockWord *l)
	{
		u32 me = owner_encode(P::this_cpu());
		u32 v = 0;

		/* (0, 0, 0) -> (0, 0, me) */
		if (!P::cmpxchg(&l->val, &v, me, Order::acquire))
			lock_slow(l, me);
		if constexpr (P::pv)
			P::hint_holding(1);
	}

	static inline bool trylock(LockWord *l)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		/* Only a lock nobody waits for: trylock must not jump a queue. */
		if (v != 0)
			return false;
		if (!P::cmpxchg(&l->val, &v, static_cast<u32>(owner_encode(P::this_cpu())),
				Order::acquire))
			return false;
		if constexpr (P::pv)
			P::hint_holding(1);
		return true;
	}

	static inline void unlock(LockWord *l)
	{
		if constexpr (!P::pv) {
			/* Pairs with the acquire in the head's cmpxchg. */
			P::store(byte_of(l, 0), static_cast<u8>(0), Order::release);
		} else {
			P::hint_holding(-1);
			/*
			 * An RMW, not a store: we must read and clear q_slow
			 * atomically with the release (a head sets it only while
			 * the owner it saw still holds the lock). Full barrier:
			 * pairs with the head's cmpxchg that sets q_slow.
			 */
			u32 old = P::fetch_and(&l->val, ~(q_owner_mask | q_slow),
					       Order::seq_cst);

			if (old & q_slow)
				kick_head(l);
		}
	}

	static inline bool is_locked(const LockWord *l)
	{
		return q_owner(P::load(&l->val, Order::relaxed)) != 0;
	}

	static inline bool is_contended(const LockWord *l)
	{
		return q_tail(P::load(&l->val, Order::relaxed)) != 0;
	}

	static constexpr bool value_unlocked(u32 v)
	{
		return q_owner(v) == 0;
	}

private:
	static inline u16 encode_tail(u32 cpu, u32 idx)
	{
		return static_cast<u16>(((cpu + 1) << 2) | idx);
	}

	static inline WaitNode *decode_tail(u16 tail)
	{
		return WaitNodes<P>::at((tail >> 2) - 1U, tail & 3U);
	}

	/* One attempt to take a free lock past a queue head that is not
	 * spinning for it (PV only). */
	static inline bool try_steal(LockWord *l, u32 me)
	{
		if constexpr (!P::pv)
			return false;
		if (!tunables.lock_steal)
			return false;
		u32 v = P::load(&l->val, Order::relaxed);

		if (q_owner(v) || (v & q_head_spinning))
			return false;
		return P::cmpxchg(&l->val, &v, v | me, Order::acquire);
	}

	static void lock_slow(LockWord *l, u32 me)
	{
		if (try_steal(l, me))
			return;

		WaitNode *node = WaitNodes<P>::get(l, 0);

		if (!node) {
			/* Out of nodes (deep nesting): spin on trylock. */
			while (!trylock_raw(l, me))
				P::relax();
			return;
		}
		u32 cpu = P::this_cpu();
		u16 mytail = encode_tail(cpu, node - WaitNodes<P>::at(cpu, 0));

		/*
		 * (t, *, *) -> (me, *, *). Release: our node's fields are set
		 * before a successor can find it; acquire: the predecessor's
		 * node is initialised before we link to it.
		 */
		u16 prev = P::xchg(half_of(l, 1), mytail, Order::acq_rel);

		if (prev) {
			WaitNode *pn = decode_tail(prev);

			P::store(&pn->next, node, Order::release);
			wait_node(node, pn);
		}
		wait_head_and_lock(l, node, me, mytail);
		WaitNodes<P>::put(node);
	}

	static inline bool trylock_raw(LockWord *l, u32 me)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		return q_owner(v) == 0 &&
		       P::cmpxchg(&l->val, &v, v | me, Order::acquire);
	}

	/* Wait until our predecessor makes us the queue head. */
	static void wait_node(WaitNode *node, WaitNode *pn)
	{
		u32 spins = 0;
		u32 prev_cpu = P::load(&pn->cpu, Order::relaxed);

		for (;;) {
			/* Pairs with the store-release of locked in pass_head(). */
			if (P::load(&node->locked, Order::acquire))
				break;
			if (!YieldPolicy<P>::relax_and_check(&spins))
				continue;
			/*
			 * Wait early: a preempted predecessor will not hand over
			 * soon, and one that is not the queue head yet is at least
			 * two hand-overs away; spinning behind either is wasted.
			 * (pn->locked may be stale if pn moved on to another lock:
			 * then we only halt a little early.)
			 */
			if (spins < tunables.spin_threshold &&
			    !P::vcpu_is_preempted(prev_cpu) &&
			    !(tunables.halt_deep_waiters &&
			      !P::load(&pn->locked, Order::relaxed)))
				continue;
			P::store(&node->state, static_cast<u8>(node_halted), Order::relaxed);
			/*
			 * Full barrier: state halted is visible before we read
			 * locked; pairs with pass_head()'s fence between its store
			 * of locked and its read of state.
			 */
			P::full_fence();
			if (!P::load(&node->locked, Order::acquire))
				P::wait(&node->state, static_cast<u8>(node_halted));
			/*
			 * Running again. The predecessor may have moved us to
			 * head_halted meanwhile; we are awake either way.
			 */
			P::store(&node->state, static_cast<u8>(node_running), Order::relaxed);
			spins = 0;
		}
	}

	/* We are the queue head: wait for the owner to go, then take the lock. */
	static void wait_head_and_lock(LockWord *l, WaitNode *node, u32 me, u16 mytail)
	{
		u32 spins = 0;
		bool last;

		if constexpr (P::pv)
			if (tunables.lock_steal)
				P::fetch_or(&l->val, q_head_spinning, Order::relaxed);
		for (;;) {
			u32 v = P::load(&l->val, Order::acquire);

			if (q_owner(v) == 0) {
				u32 nv = (v & ~(q_slow | q_head_spinning | q_owner_mask)) | me;

				last = q_tail(v) == mytail;
				if (last)
					nv &= ~q_tail_mask;
				/* (n, *, 0) -> (n, 0, me), or (me, *, 0) -> (0, 0, me) */
				if (P::cmpxchg(&l->val, &v, nv, Order::acquire))
					break;
				continue;
			}
			if (!YieldPolicy<P>::relax_and_check(&spins))
				continue;

			u32 owner = owner_decode(q_owner(v));

			if (YieldPolicy<P>::on_spin(owner, false)) {
				spins = 0;
				continue;
			}
			if (spins < tunables.spin_threshold &&
			    !YieldPolicy<P>::owner_preempted(owner))
				continue;
			halt_head(l, node, owner);
			spins = 0;
		}
		if constexpr (P::pv)
			P::hint_waiting_on(no_cpu);
		/*
		 * If we cleared the tail nobody is behind us; a waiter that
		 * came after that found tail 0 and is its own head.
		 */
		if (!last)
			pass_head(l, node);
	}

	static void halt_head(LockWord *l, WaitNode *node, u32 owner)
	{
		P::store(&node->state, static_cast<u8>(node_head_halted), Order::relaxed);

		u32 v = P::load(&l->val, Order::relaxed);

		for (;;) {
			if (!q_owner(v))
				goto awake;	/* released meanwhile: go and take it */
			/*
			 * (*, spin, o) -> (*, slow, o), only while o holds the
			 * lock. Full barrier: pairs with the unlocker's fetch_and;
			 * either it sees q_slow and our state and kicks us, or our
			 * cmpxchg sees the owner gone and fails.
			 */
			if (P::cmpxchg(&l->val, &v, (v & ~q_head_spinning) | q_slow,
				       Order::seq_cst))
				break;
		}
		P::hint_waiting_on(owner);
		P::wait(byte_of(l, 0), q_owner(v));
awake:
		P::store(&node->state, static_cast<u8>(node_running), Order::relaxed);
		if (tunables.lock_steal)
			P::fetch_or(&l->val, q_head_spinning, Order::relaxed);
	}

	/*
	 * We own the lock and were not the last waiter: make our successor the
	 * queue head. Our tail was replaced by the xchg of a later waiter, which
	 * links itself to us shortly after; wait for that link.
	 */
	static void pass_head(LockWord *l, WaitNode *node)
	{
		WaitNode *next;

		while (!(next = P::load(&node->next, Order::acquire)))
			P::relax();
		/* Pairs with the acquire load of locked in wait_node(). */
		P::store(&next->locked, static_cast<u8>(1), Order::release);
		if constexpr (P::pv) {
			/* Pairs with the waiter's fence between state and locked. */
			P::full_fence();
			u8 st = node_halted;

			/*
			 * halted -> head_halted: the successor sleeps on; our
			 * unlock (or a later one) kicks it once the lock is free.
			 */
			if (P::cmpxchg(&next->state, &st, static_cast<u8>(node_head_halted),
				       Order::relaxed)) {
				P::fetch_or(&l->val, q_slow, Order::seq_cst);
			}
		}
	}

	static void kick_head(LockWord *l)
	{
		u32 cpu = WaitNodes<P>::find_halted(l, 0, node_head_halted);

		if (cpu != no_cpu)
			P::kick(cpu);
	}
};

template <typename P>
using Queued = PvQueued<Native<P>>;

} /* namespace pvlock */

#endif /* PVLOCK_CORE_QUEUED_H */
