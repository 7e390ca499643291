/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the ticket lock and the PV ticket lock (seeds 000, 001).
 *
 * One implementation, two builds: PvTicket<P> is the PV ticket lock and
 * Ticket<P> = PvTicket<Native<P>> is the plain fair ticket lock, the baseline
 * that collapses under overcommit (a preempted waiter holds up every ticket
 * behind it).
 *
 * Lock word (little-endian bytes):
 *
 *   byte 0  head   ticket now served
 *   byte 1  tail   next ticket to hand out
 *   byte 2  owner  owner_encode(cpu) of the holder, 0 = not recorded (PV only)
 *   byte 3  flags  ticket_slow: some waiter is halted (PV only)
 *
 * States written (head, tail, slow): the lock is free iff head == tail.
 *
 *   lock:    (h, t, -) -> (h, t + 1, -)       fetch_add on the head|tail half
 *            t == h: we own it; otherwise spin until head == our ticket.
 *   slow:    (h, t, 0) -> (h, t, 1)           a waiter about to halt
 *   unlock:  (h, t, s) -> (h + 1, t, s)       store-release of the head byte,
 *            then, if s, kick the waiter whose ticket is h + 1.
 *   quiet:   (h, h, 1) -> (h, h, 0)           unlocker, queue empty (cmpxchg)
 *
 * 8-bit tickets tell apart 255 outstanding tickets (holder and waiters); a
 * CPU holds or waits for a given lock at most once (an IRQ-safe lock is
 * taken with IRQs off), so 255 CPUs is the limit: ticket_cpu_limit, which
 * each ticket lock states as its cpu_limit. The lock compiles for any
 * max_cpus; the kernel refuses it at boot when nr_cpu_ids > cpu_limit.
 * (With 256 CPUs, 256 tickets taken at once make tail == head: free.)
 *
 * PV behaviour. A waiter spins tunables.spin_threshold times, checking the
 * owner every preempt_check_mask + 1 spins: if the owner is preempted it asks
 * for a directed yield to it (YieldPolicy). A waiter more than deep_waiter
 * tickets from the head, or one whose owner stays preempted, halts early.
 * To halt it publishes (lock, ticket) in a WaitNode, hashes the node in the
 * lock -> node table (wait_node.h), sets ticket_slow, and
 * re-checks the head (Dekker with the unlocker's full barrier, below); the
 * unlocker that sees ticket_slow kicks exactly the next ticket's CPU, if it
 * is halted. Kicks are only ever for the next ticket, as in the 2013 series.
 *
 * Node state of a halting waiter (wait_node.h):
 *
 *   halt:     running -> halted          the waiter, before it sets slow
 *   unlock:   halted -> kicked, kick     the unlocker whose head is our ticket
 *             kicked: kick               the same, if an unlocker of another
 *                                        lock with a stale lookup claimed it
 *   awake:    * -> running               the waiter
 *
 * The waiter halts while its node is halted, not while the head byte still
 * holds the value it read: the head byte is written by every unlocker, and
 * the node state only by the waiter and the one unlocker that serves its
 * ticket (issue 17). The head byte alone would be safe too: between the
 * waiter's read h and our ticket my it can only move forward to my, where it
 * stops until we unlock, and my - h < 256, so h cannot recur during one
 * wait; but the node state needs no such argument and is what PvQueued
 * waits on.
 */
#ifndef PVLOCK_CORE_TICKET_H
#define PVLOCK_CORE_TICKET_H

#include "lock_word.h"
#include "platform.h"
#include "tunables.h"
#include "wait_node.h"
#include "yield_policy.h"

namespace pvlock {

constexpr u8 ticket_slow = 1U << 0;
constexpr u16 ticket_tail_inc = 1U << 8;
constexpr u32 ticket_bits = 8;
constexpr u32 ticket_cpu_limit = (1U << ticket_bits) - 1;

static inline u8 ticket_head(u32 v) { return static_cast<u8>(v); }
static inline u8 ticket_tail(u32 v) { return static_cast<u8>(v >> 8); }
static inline u8 ticket_owner(u32 v) { return static_cast<u8>(v >> 16); }
static inline u8 ticket_flags(u32 v) { return static_cast<u8>(v >> 24); }

/*
 * The ticket word's own operations, shared by every lock that waits on
 * tickets (PvTicket, BackoffTicket), which inherit the verbs trylock,
 * is_locked, is_contended and value_unlocked from here and differ only in
 * how they wait (lock) and whom they wake (unlock).
 */
template <typename P>
struct TicketWord {
	/* (h, t) -> (h, t + 1); returns the old (head | tail << 8). */
	static inline u16 take(LockWord *l)
	{
		return P::fetch_add(half_of(l, 0), ticket_tail_inc, Order::acquire);
	}

	/* (h, h) -> (h, h + 1), or false. */
	static inline bool try_take(LockWord *l)
	{
		u16 *ht = half_of(l, 0);
		u16 old = P::load(ht, Order::relaxed);

		if (static_cast<u8>(old) != static_cast<u8>(old >> 8))
			return false;
		return P::cmpxchg(ht, &old, static_cast<u16>(old + ticket_tail_inc),
				  Order::acquire);
	}

	/* The trylock verb of every ticket lock. */
	static inline bool trylock(LockWord *l)
	{
		if (!try_take(l))
			return false;
		acquired(l);
		return true;
	}

	static inline u8 load_head(LockWord *l)
	{
		/* Pairs with the store-release of head in release(). */
		return P::load(byte_of(l, 0), Order::acquire);
	}

	static inline u32 load_owner(LockWord *l)
	{
		return OwnerHints<P>::owner_of(l, P::load(byte_of(l, 2), Order::relaxed));
	}

	/*
	 * Record the holder (PV only). Only the holder writes the owner byte
	 * and waiters read it as a hint, so relaxed is enough; release()
	 * clears it before its release store of head.
	 */
	static inline void acquired(LockWord *l)
	{
		if constexpr (P::pv) {
			u8 code = owner_encode(P::this_cpu());

			P::store(byte_of(l, 2), code, Order::relaxed);
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
	}

	/* (h, t) -> (h + 1, t); returns the new head. */
	static inline u8 release(LockWord *l)
	{
		u8 *head = byte_of(l, 0);
		u8 next = static_cast<u8>(P::load(head, Order::relaxed) + 1);

		if constexpr (P::pv) {
			P::store(byte_of(l, 2), owner_none, Order::relaxed);
			P::hint_holding(-1);
		}
		/*
		 * Release: the critical section before the new head. Relaxed,
		 * the weak mode of test_sim_memory loses a critical section's
		 * store (the next owner reads the value before it).
		 */
		P::store(head, next, Order::release);
		return next;
	}

	static inline bool is_locked(const LockWord *l)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		return ticket_head(v) != ticket_tail(v);
	}

	static inline bool is_contended(const LockWord *l)
	{
		u32 v = P::load(&l->val, Order::relaxed);

		return static_cast<u8>(ticket_tail(v) - ticket_head(v)) > 1;
	}

	static constexpr bool value_unlocked(u32 v)
	{
		return ticket_head(v) == ticket_tail(v);
	}
};

template <typename P>
struct PvTicket : TicketWord<P> {
	static_assert(check_platform<P>());

	/* CPUs the lock serves (nr_cpu_ids <= cpu_limit): the 8-bit tickets. */
	static constexpr u32 cpu_limit = ticket_cpu_limit;
	static_assert(cpu_limit < (1U << ticket_bits), "8-bit tickets: 255 outstanding");

	static constexpr const char *name = P::pv ? "pvticket" : "ticket";

	using Word = TicketWord<P>;

	static inline void lock(LockWord *l)
	{
		u16 old = Word::take(l);
		u8 my = static_cast<u8>(old >> 8);

		if (static_cast<u8>(old) != my) {
			P::contention_begin(l);
			wait_turn(l, my);
			P::contention_end(l);
		}
		Word::acquired(l);
	}

	static inline void unlock(LockWord *l)
	{
		u8 next = Word::release(l);

		if constexpr (P::pv) {
			/*
			 * Dekker with a halting waiter: we store head then read
			 * flags, it stores flags then reads head. The full fence
			 * pairs with its seq_cst fetch_or and head load. Needed on
			 * x86: our head store is a plain MOV, which a later load
			 * passes (test_sim_memory, tso and weak: a lost wake-up):
			 *
			 *   unlock()                   halt()
			 *     head = my [buffered]
			 *     slow? no: no kick          state = halted
			 *                                fetch_or slow
			 *                                head != my: wait
			 *     [head = my lands]          nobody kicks
			 */
			P::full_fence();
			if (P::load(byte_of(l, 3), Order::acquire) & ticket_slow)
				unlock_slow(l, next);
		}
	}

private:
	static void wait_turn(LockWord *l, u8 my)
	{
		WaitNode *node = nullptr;
		u32 spins = 0;

		for (;;) {
			u8 h = Word::load_head(l);

			if (h == my)
				break;
			if (!YieldPolicy<P>::relax_and_check(&spins))
				continue;

			u32 owner = Word::load_owner(l);
			bool deep = static_cast<u8>(my - h) > tunables.deep_waiter;

			if (YieldPolicy<P>::on_spin(owner, false))
				spins = 0;
			if (spins < tunables.spin_threshold && !deep &&
			    !YieldPolicy<P>::owner_preempted(owner))
				continue;
			/* Spun long enough, or spinning cannot help: halt. */
			if (!node) {
				node = WaitNodes<P>::get(l, my);
				if (!node) {	/* out of nodes: keep spinning */
					spins = 0;
					continue;
				}
			}
			halt(l, node, my, owner);
			spins = 0;
		}
		if (node)
			WaitNodes<P>::put(node);
		if constexpr (P::pv)
			P::hint_waiting_on(no_cpu);
	}

	/*
	 *   halt()                             unlock() + unlock_slow()
	 *     hash: entry (l, my) -> node        head = my (store-release)
	 *     state = halted                     full_fence()
	 *     fetch_or slow [full barrier]       slow? (acquire)
	 *     head != my: wait(&state, halted)   find(l, my): entry -> node,
	 *                                          halted or kicked?
	 *                                        cmpxchg state -> kicked, kick
	 *
	 * Either we see head == my and do not halt, or the unlocker sees slow,
	 * our entry (it stays until our put(); the lookup reads its whole
	 * window) and our halted state, and moves it to kicked before
	 * kicking: our wait sees kicked, or halts first and is woken by the
	 * kick. If it finds us kicked already, by an unlocker of another lock
	 * whose lookup found our node in an earlier wait and whose kick may
	 * be held up (in an interrupt handler that waits behind us), it kicks
	 * us itself (wait_node.h, kick_node()). The entry is keyed by (lock,
	 * ticket), so the waiters of one lock spread over the table. No entry
	 * (a full window): we do not halt, we spin on and try again next time.
	 */
	static void halt(LockWord *l, WaitNode *node, u8 my, u32 owner)
	{
		if (!WaitNodes<P>::hash(node))
			return;
		P::store(&node->state, static_cast<u8>(node_halted), Order::relaxed);
		/*
		 * (h, t, 0) -> (h, t, 1). Full barrier: our node state and the
		 * slow flag are visible before we read head; pairs with the
		 * unlocker's full_fence() between its head store and flags load.
		 * On x86 a LOCK OR whatever the order. Relaxed on weak memory
		 * (test_sim_memory: a lost wake-up), the unlocker sees slow and
		 * our node still running, and does not kick; then our halted
		 * state lands and we halt on it. The head load is seq_cst too:
		 * C++ orders a seq_cst RMW before a later load of another
		 * location only if that load is seq_cst (POWER lets an acquire
		 * load pass the stwcx., and so may arm64's RCpc LDAPR; a
		 * seq_cst load is a plain MOV on x86, an LDAR on arm64).
		 */
		P::fetch_or(byte_of(l, 3), ticket_slow, Order::seq_cst);
		if (P::load(byte_of(l, 0), Order::seq_cst) != my) {
			P::hint_waiting_on(owner);
			/* Halt while halted; the kick for our ticket moves it. */
			P::wait(&node->state, static_cast<u8>(node_halted));
		}
		P::store(&node->state, static_cast<u8>(node_running), Order::relaxed);
	}

	static void unlock_slow(LockWord *l, u8 next)
	{
		WaitNodes<P>::kick_halted(l, next, node_halted);

		/*
		 * (h, h, 1) -> (h, h, 0): nobody waits, so the next unlock need
		 * not fence. A waiter that takes a ticket meanwhile changes the
		 * tail and makes this fail; one that halts later sets the flag
		 * again itself.
		 */
		u32 v = P::load(&l->val, Order::relaxed);

		if (ticket_head(v) == ticket_tail(v) && (ticket_flags(v) & ticket_slow))
			P::cmpxchg(&l->val, &v, v & ~(static_cast<u32>(ticket_slow) << 24),
				   Order::relaxed);
	}
};

template <typename P>
using Ticket = PvTicket<Native<P>>;

} /* namespace pvlock */

#endif /* PVLOCK_CORE_TICKET_H */
