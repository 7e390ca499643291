/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: who holds a lock, and when a waiter gives its CPU to the holder.
 *
 * Every pvlock word has an owner byte, and pvqueued a head byte that names
 * its queue head the same way. Knowing the owner is what lets a waiter ask
 * the host for a directed yield to it, instead of the host guessing as
 * kvm_vcpu_on_spin() does on a pause-loop exit.
 *
 * Codes of a byte that names a CPU (every such byte, every algorithm):
 *
 *   0                    owner_none      free, nobody (or not recorded yet)
 *   1 .. owner_named_cpus                cpu + 1, for cpu < owner_named_cpus
 *   owner_unnamed (0xfe)                 a CPU whose id the byte cannot name
 *   code_head_halted (0xff)              pvqueued's head byte only: the queue
 *                                        head is halted (queued.h)
 *
 * No CPU ever encodes to code_head_halted, so a head byte read as halted is
 * never a CPU (it used to be CPU 254's code). An acquirer whose id does not
 * fit writes owner_unnamed and publishes its id in OwnerHints (below), where
 * a waiter that reads owner_unnamed looks it up: CPUs whose id fits pay one
 * compare of their id, nothing else.
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

#include "lock_hash.h"
#include "platform.h"
#include "tunables.h"

namespace pvlock {

constexpr u8 owner_none = 0;
constexpr u8 owner_unnamed = 0xfe;
constexpr u8 code_head_halted = 0xff;
/* CPUs 0 .. owner_named_cpus - 1 have a code of their own. */
constexpr u32 owner_named_cpus = owner_unnamed - 1U;

static constexpr u8 owner_encode(u32 cpu)
{
	return cpu < owner_named_cpus ? static_cast<u8>(cpu + 1) : owner_unnamed;
}

/* The CPU a code names, or no_cpu (none, unnamed, head halted). */
static constexpr u32 owner_decode(u8 code)
{
	return code != owner_none && code <= owner_named_cpus ? code - 1U : no_cpu;
}

static_assert(owner_encode(0) != owner_none, "a CPU's code is never 'free'");
static_assert(owner_encode(owner_named_cpus - 1) < owner_unnamed &&
	      owner_decode(owner_encode(owner_named_cpus - 1)) == owner_named_cpus - 1,
	      "the last named CPU decodes back, below the reserved codes");
static_assert(owner_encode(owner_named_cpus) == owner_unnamed &&
	      owner_encode(~0U - 1) == owner_unnamed,
	      "every larger id is 'cannot name'");
static_assert(owner_unnamed != code_head_halted && owner_unnamed != owner_none &&
	      code_head_halted != owner_none,
	      "the reserved codes are distinct");
static_assert(owner_decode(owner_unnamed) == no_cpu &&
	      owner_decode(code_head_halted) == no_cpu && owner_decode(owner_none) == no_cpu,
	      "no reserved code decodes to a CPU");

/*
 * OwnerHints<P>: who holds a lock whose owner byte reads owner_unnamed.
 *
 * A table of 64-bit slots, (lock_hash(l) | 1) << 32 | cpu, hashed by lock
 * address, one cache line of slots per possible CPU (P::percpu lines, so
 * the kernel's is a static array sized from NR_CPUS). The acquirer stores
 * its slot after it took the lock; a waiter loads it and believes it only if
 * the tag is its lock's. A hint, never a proof: a slot may be stale (the
 * holder left, another unnamed CPU of a colliding lock overwrote it), and a
 * wrong one costs at most a directed yield to a CPU that does not hold the
 * lock, which the host refuses unless that CPU is preempted. Nothing reads
 * it for correctness, so plain relaxed accesses do. Compiled out on a
 * platform whose every id has a code (max_cpus <= owner_named_cpus).
 */
constexpr unsigned int owner_hints_per_line = 8;

struct alignas(64) OwnerHintLine {
	u64 slot[owner_hints_per_line];
};

template <typename P>
struct OwnerHints {
	static constexpr bool needed = P::max_cpus > owner_named_cpus;

	static inline u64 *slot(const LockWord *l, u32 *tag)
	{
		u32 h = lock_hash(l);

		*tag = h | 1;
		/* nr_cpus(), not max_cpus: only possible CPUs have per-CPU memory. */
		return &P::template percpu<OwnerHintLine>(hash_range(h, P::nr_cpus()))
				.slot[h % owner_hints_per_line];
	}

	/* We took l and wrote code: publish our id if the code cannot name it. */
	static inline void acquired(const LockWord *l, u8 code)
	{
		if constexpr (needed) {
			if (code == owner_unnamed) {
				u32 tag;
				u64 *s = slot(l, &tag);

				P::store(s, static_cast<u64>(tag) << 32 | P::this_cpu(),
					 Order::relaxed);
			}
		}
	}

	/* The CPU that code (read from l) names, or the hint, or no_cpu. */
	static inline u32 owner_of(const LockWord *l, u8 code)
	{
		if constexpr (needed) {
			if (code == owner_unnamed) {
				u32 tag;
				u64 v = P::load(slot(l, &tag), Order::relaxed);
				u32 cpu = static_cast<u32>(v);

				/* Only an unnamed CPU writes a hint. */
				if (static_cast<u32>(v >> 32) == tag && cpu >= owner_named_cpus &&
				    cpu < P::nr_cpus())
					return cpu;
				return no_cpu;
			}
		}
		return owner_decode(code);
	}
};

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
