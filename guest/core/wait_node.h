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
 *           kicked  (unchanged)      a waker that finds it so kicks as well:
 *                                    the claim may be a stale lookup's
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
 * waiter a state it will not halt on. A waker does not trust a kicked state
 * it did not write: an unlocker whose lookup went stale may have claimed the
 * node for a later wait and not kicked yet (kick_node()).
 *
 * An unlocker that sees the lock's slow flag finds the node to kick in a
 * lock -> node hash table (WaitHash below), as pvqspinlock's pv_hash() does,
 * in a bounded number of probes whatever the number of CPUs; it used to scan
 * nr_cpus() * max_nesting nodes (find_by_scan(), kept as the tests' oracle).
 */
#ifndef PVLOCK_CORE_WAIT_NODE_H
#define PVLOCK_CORE_WAIT_NODE_H

#include "lock_hash.h"
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

/*
 * WaitNode::hashed: none -> busy -> in (or back to none: window full),
 * by whoever hashes the node (its CPU, or pvqueued's pass_head() for a
 * halted successor); in -> none by the node's CPU alone, in put().
 */
enum HashState : u8 {
	hash_none = 0,
	hash_busy = 1,		/* being inserted; the inserter decides */
	hash_in = 2,		/* in the table until put() */
};

/*
 * The lock -> node table. Entries are 64-bit: (key << 32) | (node id + 1),
 * 0 = free, where key = lock_hash_key(lock, tag) | 1 (never 0) and the node
 * id is cpu * max_nesting + level. Eight entries per cache line, one line
 * per possible CPU (P::percpu<WaitHashLine>(i), i < P::nr_cpus(): per-CPU
 * memory in the kernel, never the heap, and only the possible CPUs', since
 * a CPU id past nr_cpu_ids has no per-CPU unit), so the table has
 * 8 * nr_cpus entries for at most max_nesting (4) * nr_cpus nodes in use:
 * at most half full, as pvqspinlock's (4 entries per line, >= 4 * possible
 * CPUs entries, one per blocked lock).
 *
 * A key probes a window of wait_hash_window lines from its home line
 * (hash_range() of the key). An insert takes the first free entry of the
 * window (cmpxchg 0 -> entry); a lookup reads the whole window, free
 * entries included, so it never stops early: a node inserted anywhere in
 * its window is found by every lookup that sees the insert. Entries never
 * move, and only the node's own CPU removes its entry (put()), when its wait
 * on that lock is over. Cost: 16 loads, for 2 or for 8192 CPUs.
 *
 * Full window (16 entries taken by nodes of colliding locks, at most half
 * of the table in use): the insert fails and the caller does not halt (it
 * keeps spinning and tries again at its next halt), or, for pass_head(),
 * kicks at once. A waiter that is not in the table never halts where only
 * a lookup could wake it, so a full table costs spinning, never a wake-up.
 */
constexpr unsigned int wait_hash_per_line = 8;
constexpr unsigned int wait_hash_window = 2;

struct alignas(64) WaitHashLine {
	u64 entry[wait_hash_per_line];
};

static_assert(sizeof(WaitHashLine) == 64, "one cache line per table line");
static_assert(wait_hash_per_line >= 2 * max_nesting,
	      "the table holds twice the nodes that can be in use");

struct alignas(64) WaitNode {
	WaitNode *next;		/* MCS successor (queued lock only) */
	const LockWord *lock;	/* the lock this CPU waits for */
	u32 tag;		/* algorithm-specific: the awaited ticket */
	u32 cpu;
	u8 locked;		/* MCS: the predecessor made this node the head */
	u8 state;		/* enum NodeState */
	u8 hashed;		/* enum HashState: in the lock -> node table? */
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
		P::store(&n->hashed, static_cast<u8>(hash_none), Order::relaxed);
		P::store(&n->cpu, cpu, Order::relaxed);
		return n;
	}

	static inline void put(WaitNode *n)
	{
		u32 cpu = P::load(&n->cpu, Order::relaxed);
		PerCpuWaitNodes &pc = P::template percpu<PerCpuWaitNodes>(cpu);

		/*
		 * Acquire: pairs with the release in hash(), which pass_head()
		 * may have run for us on another CPU before its unlock.
		 */
		if (P::load(&n->hashed, Order::acquire) == hash_in)
			unhash(n);
		/* A stale lock pointer must not match a later find(). */
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

	static inline u32 id_of(const WaitNode *n)
	{
		u32 cpu = P::load(&n->cpu, Order::relaxed);

		return cpu * max_nesting + static_cast<u32>(n - at(cpu, 0));
	}

	static inline u32 key_of(const LockWord *lock, u32 tag)
	{
		return lock_hash_key(lock, tag) | 1;
	}

	/* n's table entry: its lock and tag's key, and its id + 1 (0 = free). */
	static inline u64 entry_of(const WaitNode *n)
	{
		u32 key = key_of(P::load(&n->lock, Order::relaxed),
				 P::load(&n->tag, Order::relaxed));

		return static_cast<u64>(key) << 32 | (id_of(n) + 1);
	}

	/* Line i of key's probe window. */
	static inline WaitHashLine &window(u32 key, unsigned int i)
	{
		u32 n = P::nr_cpus();
		u32 line = hash_range(key, n) + i;

		/* A window wider than the table (n < wait_hash_window) wraps twice. */
		while (line >= n)
			line -= n;
		return P::template percpu<WaitHashLine>(line);
	}

	/*
	 * Put n (its lock and tag are set) in the table, once per wait; true
	 * if it is there, now or already. False when the window is full, or
	 * when someone else is inserting n right now (pass_head() for a node
	 * that is also hashing itself): the caller must then not halt, or not
	 * rely on the table to wake n.
	 *
	 * The entry is written before the caller's state store and its full
	 * barrier, which is what a lookup after the unlocker's full barrier
	 * pairs with (find()).
	 */
	static bool hash(WaitNode *n)
	{
		u8 h = hash_none;

		if (!P::cmpxchg(&n->hashed, &h, static_cast<u8>(hash_busy), Order::acquire))
			return h == hash_in;

		u64 e = entry_of(n);
		u32 key = static_cast<u32>(e >> 32);

		for (unsigned int i = 0; i < wait_hash_window; i++) {
			WaitHashLine &line = window(key, i);

			for (unsigned int j = 0; j < wait_hash_per_line; j++) {
				u64 free = 0;

				if (!P::load(&line.entry[j], Order::relaxed) &&
				    P::cmpxchg(&line.entry[j], &free, e, Order::relaxed)) {
					/* Release: put() on n's CPU sees the entry. */
					P::store(&n->hashed, static_cast<u8>(hash_in),
						 Order::release);
					return true;
				}
			}
		}
		P::store(&n->hashed, static_cast<u8>(hash_none), Order::release);
		return false;
	}

	/* Take n's entry out of the table (n's CPU, its wait is over). */
	static void unhash(WaitNode *n)
	{
		u64 e = entry_of(n);
		u32 key = static_cast<u32>(e >> 32);

		for (unsigned int i = 0; i < wait_hash_window; i++) {
			WaitHashLine &line = window(key, i);

			for (unsigned int j = 0; j < wait_hash_per_line; j++) {
				if (P::load(&line.entry[j], Order::relaxed) == e) {
					P::store(&line.entry[j], static_cast<u64>(0),
						 Order::relaxed);
					return;
				}
			}
		}
	}

	/*
	 * The node that waits on lock with tag in state want, or nullptr: at
	 * most wait_hash_window * wait_hash_per_line probes. Called by an
	 * unlocker after a full barrier that pairs with the one the waiter
	 * executes after hashing itself and setting its state, and before it
	 * re-checks the lock (Dekker: one of the two sees the other's stores;
	 * if the waiter misses the unlock, we see its entry and its state).
	 * An entry may name a node that was put() and taken again since: the
	 * lock, tag and state checks below reject it unless it waits on this
	 * lock in state want again, which kick_halted() tolerates.
	 *
	 * A node of lock and tag in state kicked is returned when none is in
	 * state want: its wait is not over (the waiter stores running once it
	 * is), and the kicked state may be another waker's stale claim whose
	 * kick has not been sent (kick_node()), so its own waker kicks it too.
	 */
	static WaitNode *find(const LockWord *lock, u32 tag, u8 want)
	{
		u32 key = key_of(lock, tag);
		WaitNode *kicked = nullptr;

		for (unsigned int i = 0; i < wait_hash_window; i++) {
			WaitHashLine &line = window(key, i);

			for (unsigned int j = 0; j < wait_hash_per_line; j++) {
				u64 e = P::load(&line.entry[j], Order::relaxed);

				if (static_cast<u32>(e >> 32) != key)
					continue;
				u32 id = static_cast<u32>(e) - 1;
				WaitNode *w = at(id / max_nesting, id % max_nesting);

				if (P::load(&w->lock, Order::relaxed) != lock ||
				    P::load(&w->tag, Order::relaxed) != tag)
					continue;

				u8 st = P::load(&w->state, Order::relaxed);

				if (st == want)
					return w;
				if (st == node_kicked && !kicked)
					kicked = w;
			}
		}
		return kicked;
	}

	/*
	 * What find() replaces, an O(nr_cpus() * max_nesting) scan of every
	 * node; no lock calls it. The tests' oracle (the table must find what
	 * the scan finds, kicked nodes included) and the "before" column of
	 * the lookup benchmark.
	 */
	static WaitNode *find_by_scan(const LockWord *lock, u32 tag, u8 want)
	{
		u32 n = P::nr_cpus();
		WaitNode *kicked = nullptr;

		for (u32 cpu = 0; cpu < n; cpu++) {
			PerCpuWaitNodes &pc = P::template percpu<PerCpuWaitNodes>(cpu);

			for (unsigned int i = 0; i < max_nesting; i++) {
				WaitNode *w = &pc.node[i];

				if (P::load(&w->lock, Order::relaxed) != lock ||
				    P::load(&w->tag, Order::relaxed) != tag)
					continue;

				u8 st = P::load(&w->state, Order::relaxed);

				if (st == want)
					return w;
				if (st == node_kicked && !kicked)
					kicked = w;
			}
		}
		return kicked;
	}

	/*
	 * Wake w if it is in state want (want -> kicked, then kick its CPU),
	 * or already kicked (kick it again).
	 *
	 *   waiter (wait(&state, want))        kick_node()
	 *     [it stored want, fenced,           [the caller changed the lock,
	 *      found the lock unchanged]          fenced, found the node]
	 *     nested wait eats a pending kick    cmpxchg state want -> kicked
	 *     wait(): state != want: returns       (or it reads kicked)
	 *                                        kick(cpu)
	 *
	 * kick() orders the state store before the wake-up it causes, so a
	 * wait that a kick ended sees kicked (platform.h); a waiter whose own
	 * wait starts later sees it as well, and one that halted before the
	 * cmpxchg is woken by the kick. The cmpxchg fails with running if the
	 * waiter left its wait meanwhile: it re-checks the lock itself.
	 *
	 * The lookup does not pin w: it may have been put() and taken again
	 * since, for another wait, maybe on another lock in an interrupt
	 * handler of its CPU, and be in state want for that one. Our cmpxchg
	 * then claims a wait we are not the waker of, and our kick may come
	 * arbitrarily late: an interrupt on our CPU between the cmpxchg and
	 * the kick can wait in its handler for the lock whose next owner is
	 * that very waiter (issue 17):
	 *
	 *   CPU 1                  CPU 0 (unlock l)         CPU 4 (unlock m)
	 *   waits on l, node n     find(l, t) = n
	 *   takes l, put(n)
	 *   irq: waits on m, n,
	 *     state want, halts    cmpxchg n want -> kicked
	 *                          irq: waits on m behind
	 *                            CPU 1, halts           find(m, t'): n kicked
	 *                                                   kick(1): else nobody
	 *
	 * So a kicked state is no promise of a kick to its waiter's own waker:
	 * that waker kicks whenever it finds the node in want or kicked (the
	 * wait is not over until the waiter stores running), and a stale claim
	 * costs at most a spurious wake-up, which wait()'s callers re-check.
	 */
	static void kick_node(WaitNode *w, u8 want)
	{
		u8 st = want;

		if (P::cmpxchg(&w->state, &st, static_cast<u8>(node_kicked), Order::relaxed) ||
		    st == node_kicked)
			P::kick(P::load(&w->cpu, Order::relaxed));
	}

	/*
	 * Wake the waiter on lock with tag whose node is in state want or
	 * kicked, if any (find(), then kick_node()). Same caller's barrier as
	 * find().
	 */
	static void kick_halted(const LockWord *lock, u32 tag, u8 want)
	{
		WaitNode *w = find(lock, tag, want);

		if (w)
			kick_node(w, want);
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_WAIT_NODE_H */
