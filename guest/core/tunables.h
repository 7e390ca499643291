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
	/* Queued waiters behind a waiting predecessor halt after one check. */
	bool halt_deep_waiters;
	/* Ticket waiters this far from the head yield or halt at once. */
	u8 deep_waiter;
	/* backoff: collision policy of the per-CPU delay table */
	Collision collision;
	/* backoff / preemptable ticket: delay bounds, in relax() calls */
	u32 min_delay;
	u32 max_delay;
};

constexpr Tunables default_tunables = {
	/* .spin_threshold = */ 1U << 15,
	/* .preempt_check_mask = */ 255,
	/* .directed_yield = */ true,
	/* .lock_steal = */ true,
	/* .halt_deep_waiters = */ true,
	/* .deep_waiter = */ 3,
	/* .collision = */ Collision::use_min,
	/* .min_delay = */ 1,
	/* .max_delay = */ 16000,
};

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
