// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: the user-space platform's wait/kick, preemption view and yield.
 * See platform.h for what each models.
 */
#include "platform.h"
#include "../core/tunables.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace pvlock {

Tunables tunables = default_tunables;

thread_local u32 UserPlatform::self;
u32 UserPlatform::nr = 1;
u32 UserPlatform::wait_bound_us = 10000;
bool UserPlatform::sticky_kicks = true;

namespace {

/* Per-vCPU state, each on its own cache line: the kicker writes it. */
struct alignas(64) Vcpu {
	u32 kick_pending;			/* futex word: 1 = a kick to take */
	u32 kick_seq;				/* futex word, !sticky_kicks: kicks */
	struct perf_event_mmap_page *sched;	/* context-switch records */
	int perf_fd;
	u64 waits, kicks, yields, timeouts, lost_kicks;
};

Vcpu vcpus[UserPlatform::max_cpus];
bool preemption_ok = true;

/* 1 metadata page + 1 data page: switch records are 8 bytes each. */
constexpr size_t sched_data_size = 4096;
constexpr size_t sched_map_size = 4096 + sched_data_size;

long futex(u32 *uaddr, int op, u32 val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, nullptr, 0);
}

int open_switch_stream(pid_t tid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.context_switch = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1,
					PERF_FLAG_FD_CLOEXEC));
}

} /* namespace */

bool UserPlatform::register_vcpu(u32 id)
{
	Vcpu &v = vcpus[id];

	self = id;
	v.kick_pending = 0;
	v.kick_seq = 0;
	v.waits = v.kicks = v.yields = v.timeouts = v.lost_kicks = 0;
	v.sched = nullptr;
	v.perf_fd = open_switch_stream(static_cast<pid_t>(syscall(SYS_gettid)));
	if (v.perf_fd >= 0) {
		void *m = mmap(nullptr, sched_map_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, v.perf_fd, 0);

		if (m != MAP_FAILED) {
			__atomic_store_n(&v.sched, static_cast<perf_event_mmap_page *>(m),
					 __ATOMIC_RELEASE);
			return true;
		}
		close(v.perf_fd);
		v.perf_fd = -1;
	}
	__atomic_store_n(&preemption_ok, false, __ATOMIC_RELAXED);
	return false;
}

void UserPlatform::unregister_vcpu(u32 id)
{
	Vcpu &v = vcpus[id];
	perf_event_mmap_page *m = __atomic_exchange_n(&v.sched, nullptr, __ATOMIC_ACQ_REL);

	/*
	 * Other threads may still be reading the page; the benchmark joins
	 * every thread before it unregisters any, so unmapping is safe then.
	 */
	if (m)
		munmap(m, sched_map_size);
	if (v.perf_fd >= 0)
		close(v.perf_fd);
	v.perf_fd = -1;
}

void UserPlatform::set_nr_cpus(u32 n) { nr = n; }

bool UserPlatform::preemption_visible()
{
	return __atomic_load_n(&preemption_ok, __ATOMIC_RELAXED);
}

bool UserPlatform::vcpu_is_preempted(u32 cpu)
{
	perf_event_mmap_page *m = __atomic_load_n(&vcpus[cpu].sched, __ATOMIC_ACQUIRE);

	if (!m)
		return false;
	/* data_head is written by the kernel; acquire pairs with its barrier. */
	u64 head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);

	if (head < sizeof(perf_event_header))
		return false;
	const char *data = reinterpret_cast<const char *>(m) + m->data_offset;
	perf_event_header h;

	memcpy(&h, data + ((head - sizeof(h)) % sched_data_size), sizeof(h));
	/*
	 * Consume everything read so far so the kernel never finds the ring
	 * full; several readers may race here, a stale tail only costs space.
	 */
	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
	return h.type == PERF_RECORD_SWITCH &&
	       (h.misc & PERF_RECORD_MISC_SWITCH_OUT) &&
	       (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
}

void UserPlatform::wait(const u8 *ptr, u8 val)
{
	Vcpu &v = vcpus[self];
	bool sticky = __atomic_load_n(&sticky_kicks, __ATOMIC_RELAXED);
	u32 *word = sticky ? &v.kick_pending : &v.kick_seq;
	u32 us = wait_bound_us;
	struct timespec bound = { static_cast<time_t>(us / 1000000),
				  static_cast<long>(us % 1000000) * 1000 };
	u32 seen = 0;

	/*
	 * Sticky: a kick since our last wait ends this one, as a halt with
	 * pv_unhalted set returns at once; we then sleep only while the flag
	 * is clear. Otherwise sample the count: only kicks after this sample
	 * end the sleep. Acquire pairs with the release in kick(): we see
	 * what the kicker wrote before kicking.
	 */
	if (sticky) {
		if (__atomic_exchange_n(word, 0U, __ATOMIC_ACQUIRE))
			return;
	} else {
		seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
	}
	if (__atomic_load_n(ptr, __ATOMIC_ACQUIRE) != val)
		return;
	v.waits++;
	long r = futex(word, FUTEX_WAIT_PRIVATE, seen, us ? &bound : nullptr);
	bool timed_out = r && errno == ETIMEDOUT;
	bool kicked = sticky ? __atomic_exchange_n(word, 0U, __ATOMIC_ACQUIRE) != 0 :
			       __atomic_load_n(word, __ATOMIC_ACQUIRE) != seen;

	/* At the bound: had the waker already changed the condition? */
	if (timed_out && !kicked) {
		if (__atomic_load_n(ptr, __ATOMIC_ACQUIRE) != val)
			v.lost_kicks++;
		else
			v.timeouts++;
	}
}

void UserPlatform::kick(u32 cpu)
{
	Vcpu &t = vcpus[cpu];

	vcpus[self].kicks++;
	if (__atomic_load_n(&sticky_kicks, __ATOMIC_RELAXED)) {
		/*
		 * Release: pairs with the acquire in wait(). A kick already
		 * pending has its wake-up on the way, and the target sleeps
		 * only while the flag is clear: no second wake-up.
		 */
		if (!__atomic_exchange_n(&t.kick_pending, 1U, __ATOMIC_RELEASE))
			futex(&t.kick_pending, FUTEX_WAKE_PRIVATE, 1, nullptr);
		return;
	}
	__atomic_fetch_add(&t.kick_seq, 1, __ATOMIC_RELEASE);
	futex(&t.kick_seq, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

bool UserPlatform::yield_to(u32 cpu)
{
	if (!vcpu_is_preempted(cpu))
		return false;
	vcpus[self].yields++;
	sched_yield();
	return true;
}

bool UserPlatform::yield_any()
{
	for (u32 c = 0; c < nr; c++) {
		if (c != self && vcpu_is_preempted(c)) {
			vcpus[self].yields++;
			sched_yield();
			return true;
		}
	}
	return false;
}

UserPlatform::Counters UserPlatform::counters()
{
	Counters c = {};

	for (u32 i = 0; i < nr; i++) {
		c.waits += vcpus[i].waits;
		c.kicks += vcpus[i].kicks;
		c.yields += vcpus[i].yields;
		c.timeouts += vcpus[i].timeouts;
		c.lost_kicks += vcpus[i].lost_kicks;
	}
	return c;
}

void UserPlatform::reset_counters()
{
	for (u32 i = 0; i < max_cpus; i++)
		vcpus[i].waits = vcpus[i].kicks = vcpus[i].yields = vcpus[i].timeouts =
			vcpus[i].lost_kicks = 0;
}

} /* namespace pvlock */
