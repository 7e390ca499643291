/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: running lock algorithms on real threads playing vCPUs, shared by
 * the threaded tests and the benchmark (one harness, two users).
 *
 * run_cell() starts nthreads vCPU threads confined to the first ncores cores
 * (so nthreads / ncores is the overcommit), lets them contend on one lock (or
 * two, cs2_work) for duration_ms, then stops them and waits for them with a watchdog: a vCPU
 * that never comes back (a lost wake-up with unbounded waits) makes the cell
 * report hung instead of hanging the caller.
 */
#ifndef PVLOCK_USER_THREAD_LAB_H
#define PVLOCK_USER_THREAD_LAB_H

#include "../core/algorithms.h"
#include "platform.h"

#include <pthread.h>

namespace pvlock {

/* pthread_mutex_t as a lock with the same verbs: the peer in every table. */
struct PthreadMutex {
	static constexpr const char *name = "pthread_mutex";
};

struct CellConfig {
	u32 ncores = 1;
	u32 nthreads = 1;
	u32 duration_ms = 200;
	u32 cs_work = 50;	/* loop iterations inside the critical section */
	u32 think_work = 200;	/* loop iterations outside it */
	/*
	 * Nonzero: a second lock, held this long, taken after the first one
	 * on every round (two contended locks with different hold times in one
	 * workload: seed 004's mixed case). acquisitions counts both.
	 */
	u32 cs2_work = 0;
	u32 watchdog_ms = 30000;
};

struct CellResult {
	bool hung;		/* a vCPU did not return within the watchdog */
	bool exclusion_broken;	/* the protected counter disagrees */
	double seconds;
	u64 acquisitions;
	u64 min_thread, max_thread;
	UserPlatform::Counters events;
};

/* Type-erased lock operations, so the cell runner is compiled once. */
struct LockOps {
	const char *name;
	void (*lock)(void *);
	void (*unlock)(void *);
};

template <typename A>
LockOps lock_ops()
{
	return { A::name, [](void *l) { A::lock(static_cast<LockWord *>(l)); },
		 [](void *l) { A::unlock(static_cast<LockWord *>(l)); } };
}

template <>
inline LockOps lock_ops<PthreadMutex>()
{
	return { PthreadMutex::name,
		 [](void *l) { pthread_mutex_lock(static_cast<pthread_mutex_t *>(l)); },
		 [](void *l) { pthread_mutex_unlock(static_cast<pthread_mutex_t *>(l)); } };
}

CellResult run_cell(const LockOps &ops, const CellConfig &cfg);

template <typename F>
struct UserLockAdapter {
	F &f;

	template <typename A>
	void operator()() { f(lock_ops<A>()); }
};

/* Every algorithm on the user platform, then pthread_mutex. */
template <typename F>
void for_each_user_lock(F &&f)
{
	for_each_algorithm<UserPlatform>(UserLockAdapter<F>{ f });
	f(lock_ops<PthreadMutex>());
}

} /* namespace pvlock */

#endif /* PVLOCK_USER_THREAD_LAB_H */
