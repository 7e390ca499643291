/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: per-CPU wait nodes, shared by the PV ticket and PV queued locks.
 *
 * A CPU waits on at most one lock per context (task, softirq, hardirq, NMI),
 * so each CPU owns max_nesting nodes, taken in stack order. A node says which
 * lock its CPU waits for and whether it is halted and needs a kick:
 *
 *   state   running -> halted        the waiter, before it halts
 *           halted  -> head_halted   the MCS predecessor, handing the queue
 *                                    head to a halted node (deferred kick)
 *           running -> head_halted   the queue head, before it halts
 *           halted or head_halted
 *                   -> kicked        the waker (kick_halted()), just before
 *                                    its kick
 *           *       -> running       the waiter, once it runs again
 *
 * A waiter halts on its own node's state: wait(&node->state, s) while the
 * state is still s, the value it stored itself before its last re-check of
 * the lock. Nobody but the waiter and its wakers writes the state, and no
 * waker writes s back, so a value the waiter saw cannot come back while it
 * waits (issue 17: a head that waited on the lock's owner byte slept through
 * an unlock and re-lock by the same CPU, whose kick a nested wait had eaten).
 * The waker changes the state before it kicks, so a kick that is lost, or
 * taken by an interrupt handler's own wait on this CPU, still leaves the
 * waiter a state it will not halt on.
 *
 * An unlocker that sees the lock's slow flag looks up the node to kick with
 * find_halted(): a scan of nr_cpus() * max_nesting nodes. It runs only after
 * a waiter halted, i.e. after a VM exit that costs far more than the scan;
 * upstream pvqspinlock keeps a lock -> node hash table instead, which is
 * worth it with hundreds of vCPUs and not with the handful this lab runs.
 */
#ifndef PVLOCK_CORE_WAIT_NODE_H
#define PVLOCK_CORE_WAIT_NODE_H

#include "lock_word.h"
#include "platform.h"

namespace pvlock {

enum NodeState : u8 {
	node_running = 0,
	node_halted = 1,	/* halted until its predecessor or unlocker kicks */
	node_head_halted = 2,	/* queue head, halted until the lock is released */
	node_kicked = 3,	/* its waker moved it out of a halted state */
};

constexpr unsigned int max_nesting = 4;

struct alignas(64) WaitNode {
	WaitNode *next;		/* MCS successor (queued lock only) */
	const LockWord *lock;	/* the lock this CPU waits for */
	u32 tag;		/* algorithm-specific: the awaited ticket */
	u32 cpu;
	u8 locked;		/* MCS: the predecessor made this node the head */
	u8 state;		/* enum NodeState */
};

struct PerCpuWaitNodes {
	WaitNode node[max_nesting];
	u32 depth;		/* nodes in use, stack order */
};

template <typename P>
struct WaitNodes {
	/*
	 * Take this CPU's next node, or nullptr when every level is in use
	 * (a fifth nested context: an NMI inside everything). Callers then spin
	 * without halting, as qspinlock does when it runs out of qnodes.
	 */
	static inline WaitNode *get(const LockWord *lock, u32 tag)
	{
		u32 cpu = P::this_cpu();
		PerCpuWaitNodes &pc = P::template percpu<PerCpuWaitNodes>(cpu);
		u32 idx = pc.depth;

		if (idx >= max_nesting)
			return nullptr;
		pc.depth = idx + 1;
		/*
		 * The depth increment must be visible to an interrupt on this
		 * CPU before it uses the node; a compiler barrier is enough for
		 * that, and the caller's publishing RMW orders the fields below
		 * for other CPUs.
		 */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		WaitNode *n = &pc.node[idx];
		P::store(&n->next, static_cast<WaitNode *>(nullptr), Order::relaxed);
		P::store(&n->lock, lock, Order::relaxed);
		P::store(&n->tag, tag, Order::relaxed);
		P::store(&n->locked, static_cast<u8>(0), Order::relaxed);
		P::store(&n->state, static_cast<u8>(node_running), Order::relaxed);
		P::store(&n->cpu, cpu, Order::relaxed);
		return n;
	}

	static inline void put(WaitNode *n)
	{
		u32 cpu = P::load(&n->cpu, Order::relaxed);
		PerCpuWaitNodes &pc = P::template percpu<PerCpuWaitNodes>(cpu);

		/* A stale lock pointer must not match a later find_halted(). */
		P::store(&n->lock, static_cast<const LockWord *>(nullptr),
			 Order::relaxed);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		pc.depth--;
	}

	/* The node of CPU cpu at nesting level idx (the MCS tail encoding). */
	static inline WaitNode *at(u32 cpu, u32 idx)
	{
		return &P::template percpu<PerCpuWaitNodes>(cpu).node[idx];
	}

	/*
	 * The node in state want that waits on lock with tag, or nullptr.
	 * Called by an unlocker after a full barrier that pairs with the one
	 * the waiter executes between setting its state and re-checking the
	 * lock (Dekker: one of the two sees the other's store).
	 */
	static WaitNode *find_halted(const LockWord *lock, u32 tag, u8 want)
	{
		u32 n = P::nr_cpus();

		for (u32 cpu = 0; cpu < n; cpu++) {
			PerCpuWaitNodes &pc = P::template percpu<PerCpuWaitNodes>(cpu);

			for (unsigned int i = 0; i < max_nesting; i++) {
				WaitNode *w = &pc.node[i];

				if (P::load(&w->lock, Order::relaxed) == lock &&
				    P::load(&w->state, Order::relaxed) == want &&
				    P::load(&w->tag, Order::relaxed) == tag)
					return w;
			}
		}
		return nullptr;
	}

	/*
	 * Wake the waiter on lock with tag whose node is in state want, if
	 * any: want -> kicked, then kick its CPU. Same caller's barrier as
	 * find_halted().
	 *
	 *   waiter (wait(&state, want))        kick_halted()
	 *     [it stored want, fenced,           [the caller changed the lock,
	 *      found the lock unchanged]          fenced, saw the slow mark]
	 *     nested wait eats a pending kick    cmpxchg state want -> kicked
	 *     wait(): state != want: returns     kick(cpu)
	 *
	 * kick() orders the state store before the wake-up it causes, so a
	 * wait that a kick ended sees kicked (platform.h); a waiter whose own
	 * wait starts later sees it as well, and one that halted before the
	 * cmpxchg is woken by the kick. The cmpxchg fails if the waiter left
	 * want meanwhile: it is running and re-checks the lock itself. It may
	 * hit a node that was put() and taken again since the scan, in state
	 * want for another wait: that waiter then returns early and re-checks
	 * (the contract of wait()), nothing worse.
	 */
	static void kick_halted(const LockWord *lock, u32 tag, u8 want)
	{
		WaitNode *w = find_halted(lock, tag, want);
		u8 st = want;

		if (w && P::cmpxchg(&w->state, &st, static_cast<u8>(node_kicked),
				    Order::relaxed))
			P::kick(P::load(&w->cpu, Order::relaxed));
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_WAIT_NODE_H */
