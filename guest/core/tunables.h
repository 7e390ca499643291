/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: run-time knobs shared by the algorithms.
 *
 * One global instance (below). The kernel sets it from boot parameters
 * before the first contended lock, the benchmark and the tests per run; the
 * algorithms only read it.
 */
#ifndef PVLOCK_CORE_TUNABLES_H
#define PVLOCK_CORE_TUNABLES_H

#include "types.h"

namespace pvlock {

/* Which stored delay a backoff waiter starts from when its hash slot holds
 * another lock's delay (seed 004's debate). */
enum class Collision : u8 {
	use_min,	/* Eric Dumazet: unknown lock, start at the minimum delay */
	use_stored,	/* Michel Lespinasse: autotune converges anyway, keep it */
};

struct Tunables {
	/* Spins (relax() calls) before a PV waiter halts; qspinlock uses 1 << 15. */
	u32 spin_threshold;
	/* Every (mask + 1) spins a waiter looks at the holder's preempted state. */
	u32 preempt_check_mask;
	/* Yield to a preempted lock holder instead of spinning on it. */
	bool directed_yield;
	/* Let a running vCPU take a free lock while the queue head is halted. */
	bool lock_steal;
	/*
	 * pvqueued: spins a newcomer keeps trying to steal a held lock before
	 * it enqueues (while no running head spins for it); 0: one attempt.
	 * The default is as long as a waiter spins before halting: ahead of 0
	 * and 1024 at 3x-4x in two nested runs and the user-space lab, inside
	 * one stdev in the nested ones (README, steal-20261201, steal2-20261201).
	 */
	u32 steal_spins;
	/* Queued waiters behind a waiting predecessor halt after one check. */
	bool halt_deep_waiters;
	/* Ticket waiters this far from the head yield or halt at once. */
	u8 deep_waiter;
	/* backoff: collision policy of the per-CPU delay table */
	Collision collision;
	/*
	 * backoff: slots of the delay table in use (a power of two, 1..64).
	 * 1 is seed 004's first version, one delay per CPU for every lock
	 * (with use_stored: shared; with use_min: reset whenever the lock
	 * changes); 64 is the hashed table. The seed's mixed-hold experiment.
	 */
	u32 delay_slots;
	/* backoff / preemptable ticket: delay bounds, in relax() calls */
	u32 min_delay;
	u32 max_delay;
};

constexpr Tunables default_tunables = {
	/* .spin_threshold = */ 1U << 15,
	/* .preempt_check_mask = */ 255,
	/* .directed_yield = */ true,
	/* .lock_steal = */ true,
	/* .steal_spins = */ 1U << 15,
	/* .halt_deep_waiters = */ true,
	/* .deep_waiter = */ 3,
	/* .collision = */ Collision::use_min,
	/* .delay_slots = */ 64,
	/* .min_delay = */ 1,
	/* .max_delay = */ 16000,
};

/* The keys tunable_set() takes, for the messages that list them. */
constexpr char tunable_keys[] =
	"yield steal steal_spins halt_deep spin check deep collision delay_slots";

/*
 * Set one knob by name, for boot parameters and command lines:
 *   yield       directed_yield (0/1)     steal      lock_steal (0/1)
 *   steal_spins steal_spins (any)
 *   halt_deep   halt_deep_waiters (0/1)  spin       spin_threshold (>= 1)
 *   check       preempt_check_mask (2^n - 1)
 *   deep        deep_waiter (1..255)     collision  0 use_min, 1 use_stored
 *   delay_slots delay_slots (1, 2, 4, .. 64)
 * Returns false, changing nothing, for an unknown key or a value out of range.
 */
static inline bool tunable_set(Tunables &t, const char *key, u32 value)
{
	auto is = [key](const char *name) {
		const char *k = key;

		while (*k && *k == *name) {
			k++;
			name++;
		}
		return *k == *name;
	};

	if (is("yield") && value <= 1)
		t.directed_yield = value;
	else if (is("steal") && value <= 1)
		t.lock_steal = value;
	else if (is("steal_spins"))
		t.steal_spins = value;
	else if (is("halt_deep") && value <= 1)
		t.halt_deep_waiters = value;
	else if (is("spin") && value >= 1)
		t.spin_threshold = value;
	else if (is("check") && (value & (value + 1)) == 0)
		t.preempt_check_mask = value;
	else if (is("deep") && value >= 1 && value <= 255)
		t.deep_waiter = static_cast<u8>(value);
	else if (is("collision") && value <= 1)
		t.collision = value ? Collision::use_stored : Collision::use_min;
	else if (is("delay_slots") && value >= 1 && value <= 64 && !(value & (value - 1)))
		t.delay_slots = value;
	else
		return false;
	return true;
}

/*
 * The instance. Each program defines it once, in its platform's translation
 * unit, as "Tunables tunables = default_tunables;" (constant-initialised, so
 * no constructor runs): a plain external definition, because a C++17 inline
 * variable would be a COMDAT section that the kernel's linker script does not
 * place.
 */
extern Tunables tunables;

} /* namespace pvlock */

#endif /* PVLOCK_CORE_TUNABLES_H */
