// SPDX-License-Identifier: GPL-2.0
/*
 * pvlock: the algorithms of guest/core instantiated on the kernel platform,
 * and the table the C layer dispatches through (pvlock_glue.h).
 *
 * Freestanding C++: no kernel header, no constructor, no exception, no RTTI.
 * The table is constant-initialised (it lands in .data.rel.ro), and every
 * function it points at has internal linkage (kernel_platform.h).
 */
#include "guest/core/types.h"

#include "guest/core/algorithms.h"
#include "guest/core/broken.h"
#include "guest/kernel/kernel_platform.h"

/* The kernel's one instance of the algorithms' knobs (tunables.h). */
pvlock::Tunables pvlock::tunables = pvlock::default_tunables;

extern "C" bool pvlock_tunable_set(const char *key, pvlock::u32 value)
{
	return pvlock::tunable_set(pvlock::tunables, key, value);
}

extern "C" const char *const pvlock_tunable_keys = pvlock::tunable_keys;

namespace pvlock {
namespace {

/*
 * The out-of-line functions the C layer calls (through static calls for the
 * kernel's spinlocks, through pointers for the benchmark). The algorithm is
 * inlined into each, so a static call lands straight in the algorithm.
 */
#define PVLOCK_LOCKFUNC __attribute__((__noinline__))

template <typename A>
struct Entry {
	static PVLOCK_LOCKFUNC void lock(LockWord *l) { A::lock(l); }
	static PVLOCK_LOCKFUNC bool trylock(LockWord *l) { return A::trylock(l); }
	static PVLOCK_LOCKFUNC void unlock(LockWord *l) { A::unlock(l); }
	static bool is_locked(LockWord *l) { return A::is_locked(l); }
	static bool is_contended(LockWord *l) { return A::is_contended(l); }
	static bool value_unlocked(u32 v) { return A::value_unlocked(v); }
};

template <typename A>
constexpr pvlock_algo entry(bool pv, bool bench_only)
{
	return pvlock_algo{
		A::name, pv, bench_only,
		&Entry<A>::lock, &Entry<A>::trylock, &Entry<A>::unlock,
		&Entry<A>::is_locked, &Entry<A>::is_contended,
		&Entry<A>::value_unlocked, A::cpu_limit,
	};
}

using KP = KernelPlatform;

/*
 * Every type the algorithms keep per CPU (P::percpu<T>()), as a per-CPU
 * variable of the kernel (kernel_platform.h says why one line per type).
 */
PVLOCK_PERCPU(PerCpuWaitNodes);
PVLOCK_PERCPU(WaitHashLine);
PVLOCK_PERCPU(OwnerHintLine);
PVLOCK_PERCPU(HeadPasses);
PVLOCK_PERCPU(LockHash<KP, BackoffTicket<KP>>::Table);
PVLOCK_PERCPU(LockHash<KP, PreemptTicket<KP>>::Table);

} /* namespace */
} /* namespace pvlock */

using namespace pvlock;

/* First entry: the default when the host speaks pvlock. */
extern "C" const pvlock_algo pvlock_algos[] = {
	entry<PvQueued<KP>>(true, false),
	entry<PvTicket<KP>>(true, false),
	entry<PreemptTicket<KP>>(true, false),
	entry<BackoffTicket<KP>>(true, false),
	entry<UnfairTas<KP>>(true, false),
	entry<Queued<KP>>(false, false),
	entry<Ticket<KP>>(false, false),
	/* The benchmark's negative control (guest/core/broken.h): never a spinlock. */
	entry<RacyTas<KP, 1>>(false, true),
};

extern "C" const unsigned int pvlock_nr_algos =
	sizeof(pvlock_algos) / sizeof(pvlock_algos[0]);
