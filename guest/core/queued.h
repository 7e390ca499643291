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
 * and what it keeps: a running vCPU may take a free lock ("steal") unless
 * the queue head is running and spinning for it, because a halted or
 * preempted head takes a wake-up or a time slice to use the lock and a
 * running vCPU does not. The head announces itself in the head byte while it
 * spins (the role of qspinlock's pending bit, but naming the head, so a
 * stealer can see that the head itself is preempted). Steals past one
 * preempted head are bounded (head_pass_limit, counted on the head's CPU,
 * a soft bound: see head_passed()), so that vCPUs which take the lock again
 * and again pass a queued one only so often while it is preempted
 * (test_sim's re-taker case). Steals while the head byte is empty (from a
 * hand-over to the new head's first spin) or marked halted are not
 * counted, as upstream's steals past a halted head are not: a head that
 * halts again and again can still lose every race. With tunables.lock_steal
 * off the lock is strictly FIFO. tunables.steal_spins lets a newcomer keep
 * trying to steal for a while before it enqueues.
 *
 * Lock word (little-endian):
 *
 *   byte 0     owner   owner_encode(cpu) of the holder; 0 = free
 *   byte 1     head    0: no queue head is spinning (none, or it is not
 *                         awake yet)
 *                      owner_encode(cpu): the queue head, spinning
 *                      q_head_halted: the head is halted; the unlock of
 *                         the current hold kicks it and clears this
 *   bytes 2-3  tail    (cpu + 1) << 2 | nesting level of the last waiter
 *
 * Both bytes use the codes of yield_policy.h, where no CPU's code is
 * q_head_halted. An owner whose id the byte cannot name (owner_unnamed)
 * publishes it in OwnerHints, where a waiter that wants to yield to it
 * looks. A head that cannot be named announces owner_unnamed and is taken
 * for running: nobody steals past it, even when it is preempted (what
 * upstream's pending bit does for every head; a hint for the head byte
 * would only buy steals past preempted heads on CPUs >= owner_named_cpus).
 * The tail names every CPU up to cpu_limit.
 *
 * State legend (tail, head, owner), transitions:
 *
 *   fast lock:   (0, 0, 0)      -> (0, 0, me)         cmpxchg of the word
 *   steal:       (*, h, 0)      -> (*, h, me)         PV, lock_steal, and h is
 *                                                     0, halted, or a
 *                                                     preempted head passed
 *                                                     < head_pass_limit times
 *   enqueue:     (t, *, *)      -> (me, *, *)         xchg of the tail half
 *   head spins:  (*, *, *)      -> (*, me, *)         PV, store of the byte
 *   head takes:  (n, *, 0)      -> (n, 0, me)         n != our tail
 *                (me, *, 0)     -> (0, 0, me)         we are the last waiter
 *   head halts:  (*, me, o)     -> (*, halted, o)     o != 0 (PV, cmpxchg)
 *   hand-over:   (*, h, me)     -> (*, halted, me)    successor halted (PV)
 *   unlock:      (*, h, me)     -> (*, h, 0)          native: store-release
 *                (*, halted, me) -> (*, 0, 0), kick   PV: cmpxchg of bytes 0-1
 *
 * A head marks itself halted only while the lock is held (its cmpxchg
 * expects the owner it saw), so the unlock that ends that hold sees the mark
 * and kicks it: one kick per halt, as in pvqspinlock. The MCS hand-over to a
 * halted successor does not kick it (it would only spin on a held lock): the
 * holder marks it head_halted in its node and in the head byte, and the
 * holder's own unlock kicks it, as pv_kick_node() does.
 *
 * The unlock that clears the mark finds the head's node in the lock -> node
 * table (wait_node.h), where the head, or the predecessor that handed it a
 * halted node, put it before the mark: a bounded lookup for any number of
 * CPUs, no scan of every CPU's nodes. Only heads are hashed (an entry lives
 * until its node's put(), so a lock has one, two across a hand-over);
 * queued waiters halt unhashed, as their predecessor knows them.
 *
 * Node state (wait_node.h), for the waiter on its node and the queue head:
 *
 *   queued waiter:  running -> halted            before it halts (wait_node)
 *   hand-over:      halted -> head_halted        its predecessor, successor
 *                                                halted (pass_head)
 *   head halts:     running -> head_halted       before marking the word
 *   unlock's kick:  head_halted -> kicked, kick  after clearing the mark
 *   awake:          * -> running                 the waiter itself
 *
 * Every wait is on the waiter's own node state (halted or head_halted),
 * which only it and its wakers change. The head does not wait on the owner
 * byte: an unlock (clearing the mark, kicking) and a re-lock by the same CPU
 * between the head's mark and its halt bring the byte back to the value the
 * head saw, and if the kick is gone meanwhile (eaten by a nested wait for
 * another lock on the head's CPU, or a host whose kicks do not stick) the
 * head sleeps with no mark left for anyone to kick it (issue 17).
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
constexpr u32 q_head_shift = 8;
constexpr u32 q_head_mask = 0xffU << q_head_shift;
constexpr u8 q_head_halted = code_head_halted;
constexpr u32 q_tail_shift = 16;
constexpr u32 q_tail_mask = 0xffffU << q_tail_shift;

static inline u8 q_owner(u32 v) { return static_cast<u8>(v & q_owner_mask); }
static inline u8 q_head(u32 v) { return static_cast<u8>(v >> q_head_shift); }
static inline u16 q_tail(u32 v) { return static_cast<u16>(v >> q_tail_shift); }

/*
 * Defects that only a negative control compiles in (broken.h); every lock
 * anything uses is PvQueued<P> with none.
 */
enum class QueuedDefect : u8 {
	none,
	head_waits_on_owner,	/* issue 17: the head halts on the owner byte */
	steal_phase_yields,	/* a stealer yields to a preempted owner */
	head_passes_unbounded,	/* no head_pass_limit */
};

/* Per CPU: steals past this CPU's queue head while it was preempted. */
struct alignas(64) HeadPasses {
	u32 count;
};

template <typename P, QueuedDefect defect = QueuedDefect::none>
struct PvQueued {
	static_assert(check_platform<P>());

	/*
	 * CPUs the lock serves (ids 0 .. cpu_limit - 1): the tail holds cpu + 1
	 * in its upper 14 bits. The kernel refuses the lock when nr_cpu_ids is
	 * larger; a platform whose ids can be larger does not compile.
	 */
	static constexpr u32 cpu_limit = q_tail_mask >> (q_tail_shift + 2);
	static_assert(cpu_limit == (1U << 14) - 1, "tail: 14 bits of cpu + 1");
	static_assert(P::max_cpus <= cpu_limit, "tail: 14 bits of cpu + 1");

	/*
	 * Steals past one preempted queue head before stealers queue behind
	 * it (upstream's pending bit allows none past a head that is not
	 * halted). Without the bound, in test_sim's re-taker case (three
	 * vCPUs that take the lock again at once, on one pCPU) a queued
	 * waiter was passed up to 116 times in 200 acquisitions (more than 80
	 * in 14 of 200 seeds); with it, 68 at worst.
	 */
	static constexpr u32 head_pass_limit = 4;

	static constexpr const char *name =
		defect != QueuedDefect::none ? "broken-pvqueued" :
		P::pv ? "pvqueued" : "queued";

	static inline void lock(LockWord *l)
	{
		u8 code = owner_encode(P::this_cpu());
		u32 me = code;
		u32 v = 0;

		/* (0, 0, 0) -> (0, 0, me) */
		if (!P::cmpxchg(&l->val, &v, me, Order::acquire)) {
			P::contention_begin(l);
			lock_slow(l, me);
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

		/* Only a lock nobody waits for: trylock must not jump a queue. */
		if (v != 0)
			return false;
		u8 code = owner_encode(P::this_cpu());

		if (!P::cmpxchg(&l->val, &v, static_cast<u32>(code), Order::acquire))
			return false;
		if constexpr (P::pv) {
			OwnerHints<P>::acquired(l, code);
			P::hint_holding(1);
		}
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
			 * (*, h, me) -> (*, h, 0), or (*, halted, me) -> (*, 0, 0)
			 * and kick the head. A compare-and-swap of the owner and
			 * head bytes only: enqueuers xchg the tail half, so this
			 * rarely retries. Full barrier: pairs with the head's
			 * cmpxchg that marks it halted (halt_head()), and orders
			 * our clearing of the mark before kick_head() reads the
			 * wait-node table and the head's node state. It is also
			 * the release of the critical section. On x86 it is a
			 * LOCK CMPXCHG whatever its order; the simulator's weak
			 * mode, with it relaxed, sees a critical section's store
			 * land after the next owner's load (test_sim_memory).
			 */
			u16 *low = half_of(l, 0);
			u16 v = P::load(low, Order::relaxed);
			u16 nv;

			do {
				nv = static_cast<u8>(v >> 8) == q_head_halted ? 0 : v & 0xff00;
			} while (!P::cmpxchg(low, &v, nv, Order::seq_cst));
			if (static_cast<u8>(v >> 8) == q_head_halted)
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

	/*
	 * Take the lock past the queue (PV only), if no running head spins for
	 * it: a head that is halted, not yet awake, or preempted would leave the
	 * lock idle until it runs (a preempted one only head_pass_limit times
	 * in a headship). One attempt, then, while the lock is held,
	 * up to tunables.steal_spins more spins of the same (pvqspinlock's
	 * hybrid unfair trylock, bounded): a newcomer that gets the lock this
	 * way never pays for a halt and a kick. It enqueues at once when a
	 * head starts spinning (stealing from a running head is what FIFO
	 * forbids) and when the owner is preempted (then spinning is waste;
	 * the queue halts or yields).
	 */
	static inline bool try_steal(LockWord *l, u32 me)
	{
		if constexpr (!P::pv)
			return false;
		if (!tunables.lock_steal)
			return false;
		u32 spins = 0;

		for (;;) {
			u32 v = P::load(&l->val, Order::relaxed);
			u8 head_code = q_head(v);
			u32 head = owner_decode(head_code);

			/* An unnamed head counts as running (see the top). */
			if (head_code == owner_unnamed ||
			    (head != no_cpu && (!P::vcpu_is_preempted(head) ||
						(defect != QueuedDefect::head_passes_unbounded &&
						 head_passed(head) >= head_pass_limit))))
				return false;
			/* (*, h, 0) -> (*, h, me) */
			if (!q_owner(v) && P::cmpxchg(&l->val, &v, v | me, Order::acquire)) {
				if (head != no_cpu)
					count_head_pass(head);
				return true;
			}
			if (spins >= tunables.steal_spins)
				return false;
			if (!YieldPolicy<P>::relax_and_check(&spins))
				continue;
			/*
			 * No directed yield to a preempted owner here: it would
			 * release and, finding nobody queued, take the lock again
			 * on its fast path while we are off our CPU, time after
			 * time (test_sim's re-taker case). Join the queue, which
			 * stops its fast path, and yield from there.
			 */
			u32 owner = OwnerHints<P>::owner_of(l, q_owner(v));

			if constexpr (defect == QueuedDefect::steal_phase_yields)
				if (YieldPolicy<P>::on_spin(owner, false))
					continue;
			if (YieldPolicy<P>::owner_preempted(owner))
				return false;
		}
	}

	/*
	 * Steals past a preempted queue head, counted on the head's CPU: a
	 * head that is preempted again and again would otherwise be passed
	 * without end, by every vCPU that runs while it does not. The stealer
	 * adds to the count after its steal, while it holds the lock; the head
	 * zeroes its count when it becomes head. The bound is soft, a hint:
	 * a stealer that read the count before another's steal may steal too;
	 * a CPU that is head of two locks (an interrupt's lock over another)
	 * can be counted by the stealers of both at once, losing an update,
	 * and the inner headship zeroes the outer's count; a late stealer can
	 * raise a count just zeroed. Each changes how many steals one head
	 * sees by a few, never whether the lock is exclusive or a kick is
	 * lost. Relaxed atomics (READ_ONCE/WRITE_ONCE in the kernel): the
	 * races are by design, and marked for KCSAN.
	 */
	static inline u32 head_passed(u32 head)
	{
		return P::load(&P::template percpu<HeadPasses>(head).count, Order::relaxed);
	}

	static inline void count_head_pass(u32 head)
	{
		u32 *count = &P::template percpu<HeadPasses>(head).count;

		P::store(count, P::load(count, Order::relaxed) + 1, Order::relaxed);
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
		 * node is initialised before we link to it. Without the
		 * release (weak memory, test_sim_memory), get()'s next = NULL
		 * can land after our successor's link and pass_head() waits
		 * for a link that is gone:
		 *
		 *   CPU 0 (lock_slow)           CPU 1 (lock_slow, after us)
		 *     next = NULL [buffered]
		 *     xchg tail (relaxed)          xchg tail: prev = us
		 *                                  our next = CPU 1's node
		 *     [next = NULL lands]
		 *     pass_head(): next == NULL forever
		 */
		u16 prev = P::xchg(half_of(l, 1), mytail, Order::acq_rel);

		if (prev) {
			WaitNode *pn = decode_tail(prev);

			/*
			 * Release is more than this needs: the xchg above
			 * published our node, and pass_head() reads next only
			 * after its acquire of a lock word that holds our tail
			 * or a later one (the xchgs of the tail are one release
			 * sequence). qspinlock has WRITE_ONCE(prev->next, node);
			 * relaxed here, no test fails (test_sim_memory).
			 */
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
			 * locked; pairs with pass_head()'s fence:
			 *
			 *   wait_node()                pass_head()
			 *     state = halted             locked = 1
			 *     full_fence()               full_fence()
			 *     locked == 0: wait          cmpxchg state halted -> head_halted
			 *
			 * Either we see locked, or it sees halted and leaves our
			 * kick to the unlock (kick_head()). We wait while our
			 * state is halted, which only pass_head() and the kick
			 * change (never back to halted).
			 *
			 * Needed on x86 too: a store then a load of another
			 * location is the one reordering TSO allows. Without it
			 * (test_sim_memory, tso and weak: a lost wake-up):
			 *
			 *   wait_node()                pass_head()
			 *     state = halted [buffered]
			 *     locked == 0                locked = 1
			 *                                full_fence()
			 *                                cmpxchg state: running, fails
			 *     [state = halted lands]
			 *     wait(&state, halted): nobody kicks
			 */
			P::full_fence();
			if (!P::load(&node->locked, Order::acquire))
				P::wait(&node->state, static_cast<u8>(node_halted));
			/*
			 * Running again. The predecessor may have moved us to
			 * head_halted, the unlock to kicked; we are awake either
			 * way.
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
			P::store(&P::template percpu<HeadPasses>(P::this_cpu()).count, 0U,
				 Order::relaxed);
		announce_head(l);
		for (;;) {
			u32 v = P::load(&l->val, Order::acquire);

			if (q_owner(v) == 0) {
				u32 nv = (v & ~(q_head_mask | q_owner_mask)) | me;

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

			u32 owner = OwnerHints<P>::owner_of(l, q_owner(v));

			/* A racing hand-over or unlock may have cleared our mark. */
			if (tunables.lock_steal && q_head(v) != owner_encode(P::this_cpu()))
				announce_head(l);
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

	/* We spin as queue head: say so, which stops steals (PV only). */
	static inline void announce_head(LockWord *l)
	{
		if constexpr (P::pv)
			if (tunables.lock_steal)
				P::store(byte_of(l, 1), owner_encode(P::this_cpu()),
					 Order::relaxed);
	}

	/*
	 * Halt until the unlock of the current hold kicks us. The pairing with
	 * unlock(), on the lock word, then on the table and our node's state:
	 *
	 *   halt_head()                          unlock() + kick_head()
	 *     hash: table entry l -> our node      cmpxchg (*, halted, o) -> (*, 0, 0)
	 *     state = head_halted                    [full barrier]
	 *     cmpxchg (*, me, o) -> (*, halted, o) find(): entry -> our node,
	 *       [full barrier]                       head_halted or kicked?
	 *     wait(&state, head_halted)            cmpxchg state -> kicked
	 *                                          kick(us)
	 *
	 * The two cmpxchgs of the word are ordered: if ours comes first, the
	 * unlock sees the mark and, after its barrier, our entry (it stays in
	 * the table until our put(); the lookup reads the whole probe window)
	 * and our head_halted state, and moves it to kicked before kicking;
	 * our wait then sees kicked, or halts first and is woken by the kick.
	 * If the unlock comes first, our cmpxchg sees the owner gone and we
	 * do not halt. A stale lookup (an unlocker that found our node in an
	 * earlier wait) may have moved us to kicked and not kicked yet: the
	 * unlocker kicks a kicked node too (wait_node.h, kick_node()). Only
	 * we and our wakers change our state, and no waker writes
	 * head_halted back, so neither a re-lock by the same owner nor a
	 * nested wait that eats the kick can make it read head_halted again.
	 * No entry (the window is full, or pass_head() is hashing us right
	 * now): we do not mark, we spin on, and try again at the next halt.
	 */
	static void halt_head(LockWord *l, WaitNode *node, u32 owner)
	{
		if (!WaitNodes<P>::hash(node))
			return;
		P::store(&node->state, static_cast<u8>(node_head_halted), Order::relaxed);

		u16 *low = half_of(l, 0);
		u16 v = P::load(low, Order::relaxed);

		for (;;) {
			if (!static_cast<u8>(v))
				goto awake;	/* released meanwhile: go and take it */
			/*
			 * (*, me, o) -> (*, halted, o), only while o holds the
			 * lock. Full barrier: our head_halted state is visible
			 * before the mark; pairs with the unlocker's cmpxchg.
			 * A LOCK CMPXCHG on x86 whatever the order; relaxed on
			 * weak memory (test_sim_memory: a lost wake-up), the
			 * unlock sees the mark and our node still running, and
			 * leaves it alone; our state lands, and we halt.
			 */
			if (P::cmpxchg(low, &v, static_cast<u16>((v & 0xff) | (q_head_halted << 8)),
				       Order::seq_cst))
				break;
		}
		P::hint_waiting_on(owner);
		if constexpr (defect == QueuedDefect::head_waits_on_owner)
			P::wait(byte_of(l, 0), static_cast<u8>(v));	/* the bug: ABA */
		else
			P::wait(&node->state, static_cast<u8>(node_head_halted));
awake:
		P::store(&node->state, static_cast<u8>(node_running), Order::relaxed);
		announce_head(l);
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
		/*
		 * Pairs with the acquire load of locked in wait_node(), as
		 * qspinlock's arch_mcs_spin_unlock_contended(). Nothing the
		 * successor reads was written by us before this store, except
		 * through the lock word, which it acquires itself: relaxed,
		 * no test fails in the weak mode (test_sim_memory).
		 */
		P::store(&next->locked, static_cast<u8>(1), Order::release);
		if constexpr (P::pv) {
			/*
			 * Pairs with the waiter's fence between state and locked.
			 * Not needed on x86, where the cmpxchg below is a LOCKed
			 * instruction, a full barrier that drains our store of
			 * locked before it reads the state (test_sim_memory
			 * checks that deleting it stays uncaught on tso). It is
			 * needed where that relaxed cmpxchg is no barrier (the
			 * weak mode: a lost wake-up):
			 *
			 *   pass_head()                  wait_node()
			 *     locked = 1 [buffered]
			 *     cmpxchg state: running,
			 *       fails: it will see locked
			 *                                  state = halted
			 *                                  full_fence()
			 *                                  locked == 0: wait
			 *     [locked = 1 lands]           nobody kicks
			 */
			P::full_fence();
			u8 st = node_halted;

			/*
			 * halted -> head_halted: the successor sleeps on (its
			 * wait is for state != halted, so one that had not
			 * halted yet returns and spins as head); our unlock
			 * kicks it once the lock is free, and finds it in the
			 * table, where we put it (as pv_kick_node() hashes a
			 * halted successor for it). Entry and mark are stored
			 * while we hold the lock, so that unlock sees both, in
			 * our program order. If the table cannot take it (a
			 * full window, or the successor, awake, hashing itself)
			 * we kick it now: it spins as head, or halts on its own
			 * entry.
			 */
			if (P::cmpxchg(&next->state, &st, static_cast<u8>(node_head_halted),
				       Order::relaxed)) {
				/*
				 * seq_cst is more than the mark needs: the one
				 * reader that acts on it is our own unlock's
				 * cmpxchg of the word, after it in our program
				 * order; other CPUs read byte 1 as a steal hint,
				 * and a head that woke before we marked it
				 * overwrites the mark (announce_head()) or
				 * leaves its unlock a kick_head() that finds
				 * it running. As release (a plain MOV on x86,
				 * not XCHG) no test fails, on tso or weak
				 * (test_sim_memory).
				 */
				if (WaitNodes<P>::hash(next))
					P::store(byte_of(l, 1), q_head_halted, Order::seq_cst);
				else
					WaitNodes<P>::kick_node(next, node_head_halted);
			}
		}
	}

	/*
	 * The unlock cleared a halted mark: find the head in the table,
	 * head_halted -> kicked, and kick. Its cmpxchg of the word is the
	 * barrier find() needs.
	 */
	static void kick_head(LockWord *l)
	{
		WaitNodes<P>::kick_halted(l, 0, node_head_halted);
	}
};

template <typename P>
using Queued = PvQueued<Native<P>>;

} /* namespace pvlock */

#endif /* PVLOCK_CORE_QUEUED_H */
