// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: the threaded cell runner. See thread_lab.h.
 */
#include "thread_lab.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace pvlock {

namespace {

double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Work that the compiler cannot remove; touches only the caller's line. */
inline void spin_work(u32 n, volatile u64 *sink)
{
	for (u32 i = 0; i < n; i++)
		*sink = *sink + i;
}

struct alignas(64) Shared {
	union {
		LockWord word;
		pthread_mutex_t mutex;
	} lock;
	alignas(64) u64 counter;	/* protected by the lock */
	alignas(64) u64 data[8];	/* what the critical section writes */
	/* The second lock of a mixed cell (cs2_work), its own line and data. */
	alignas(64) union {
		LockWord word;
		pthread_mutex_t mutex;
	} lock2;
	alignas(64) u64 counter2;
	alignas(64) u64 data2[8];
	alignas(64) bool stop;
	u32 started;
	u32 finished;
};

struct alignas(64) Thread {
	pthread_t tid;
	u32 id;
	u64 acquisitions;
	u64 sink;
	Shared *sh;
	const LockOps *ops;
	const CellConfig *cfg;
};

/* One acquisition of lock, then the think time. */
inline void critical_section(Thread *t, void *lock, u64 *counter, u64 *data, u32 work)
{
	t->ops->lock(lock);
	/* Plain accesses: any overlap of two holders loses updates. */
	u64 c = *counter;

	for (u32 i = 0; i < 8; i++)
		data[i] += c;
	spin_work(work, &t->sink);
	*counter = c + 1;
	t->ops->unlock(lock);
	t->acquisitions++;
	spin_work(t->cfg->think_work, &t->sink);
}

void *vcpu_main(void *arg)
{
	Thread *t = static_cast<Thread *>(arg);
	Shared *sh = t->sh;
	const CellConfig &cfg = *t->cfg;

	UserPlatform::register_vcpu(t->id);
	__atomic_fetch_add(&sh->started, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sh->started, __ATOMIC_ACQUIRE) < cfg.nthreads)
		sched_yield();

	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		critical_section(t, &sh->lock, &sh->counter, sh->data, cfg.cs_work);
		if (cfg.cs2_work)
			critical_section(t, &sh->lock2, &sh->counter2, sh->data2,
					 cfg.cs2_work);
	}
	__atomic_fetch_add(&sh->finished, 1, __ATOMIC_RELEASE);
	return nullptr;
}

} /* namespace */

CellResult run_cell(const LockOps &ops, const CellConfig &cfg)
{
	static Shared sh;
	static Thread threads[UserPlatform::max_cpus];
	CellResult r = {};
	cpu_set_t cores;

	memset(&sh, 0, sizeof(sh));
	pthread_mutex_init(&sh.lock.mutex, nullptr);	/* or a zero LockWord */
	pthread_mutex_init(&sh.lock2.mutex, nullptr);
	if (cfg.cs2_work) {
		static bool told;
		u32 s1 = lock_hash_slot(lock_hash(&sh.lock.word) | 1);
		u32 s2 = lock_hash_slot(lock_hash(&sh.lock2.word) | 1);

		/* Which delay-table slots the two locks take (lock_hash.h). */
		if (!told)
			fprintf(stderr, "mixed cells: the two locks hash to delay slots %u and %u%s\n",
				s1, s2, s1 == s2 ? " (they collide)" : "");
		told = true;
	}
	UserPlatform::set_nr_cpus(cfg.nthreads);
	UserPlatform::reset_counters();

	CPU_ZERO(&cores);
	for (u32 c = 0; c < cfg.ncores; c++)
		CPU_SET(c, &cores);

	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cores), &cores);
	for (u32 i = 0; i < cfg.nthreads; i++) {
		Thread &t = threads[i];

		t = Thread{};
		t.id = i;
		t.sh = &sh;
		t.ops = &ops;
		t.cfg = &cfg;
		pthread_create(&t.tid, &attr, vcpu_main, &t);
	}
	pthread_attr_destroy(&attr);

	while (__atomic_load_n(&sh.started, __ATOMIC_ACQUIRE) < cfg.nthreads)
		usleep(1000);
	double t0 = now_s();

	usleep(cfg.duration_ms * 1000);
	__atomic_store_n(&sh.stop, true, __ATOMIC_RELAXED);
	r.seconds = now_s() - t0;

	/* Watchdog: waits are unbounded in tests, so a lost wake-up hangs. */
	double deadline = now_s() + cfg.watchdog_ms / 1000.0;

	while (__atomic_load_n(&sh.finished, __ATOMIC_ACQUIRE) < cfg.nthreads) {
		if (now_s() > deadline) {
			r.hung = true;
			fprintf(stderr, "%s: %u of %u vCPUs did not return within %u ms\n",
				ops.name, cfg.nthreads - sh.finished, cfg.nthreads,
				cfg.watchdog_ms);
			return r;	/* leak the threads: the process is doomed */
		}
		usleep(1000);
	}
	r.min_thread = ~0ULL;
	for (u32 i = 0; i < cfg.nthreads; i++) {
		pthread_join(threads[i].tid, nullptr);
		r.acquisitions += threads[i].acquisitions;
		if (threads[i].acquisitions < r.min_thread)
			r.min_thread = threads[i].acquisitions;
		if (threads[i].acquisitions > r.max_thread)
			r.max_thread = threads[i].acquisitions;
	}
	r.events = UserPlatform::counters();
	r.exclusion_broken = sh.counter + sh.counter2 != r.acquisitions;
	/* Preemption streams are per thread: close them with the threads. */
	for (u32 i = 0; i < cfg.nthreads; i++)
		UserPlatform::unregister_vcpu(i);
	return r;
}

} /* namespace pvlock */
