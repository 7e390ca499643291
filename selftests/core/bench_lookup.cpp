// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: what a slow unlock pays to find the node it kicks, against the
 * number of vCPUs (issue 17, "every CPU id, every size").
 *
 * N CPUs (ids 0 .. N - 1 of a platform with 8192 possible CPUs, Debian's
 * NR_CPUS) each have a node halted on one of 1024 locks, hashed as a
 * halting waiter hashes itself. Timed per call, best of 5 runs, with warm
 * caches (in a guest the table's two lines, and the scan's N * 4 node
 * lines, are often cold: the scan then pays N * 4 cache misses, the table
 * two or three):
 *   scan hit    WaitNodes::find_by_scan() of the last CPU's node: what the
 *               unlock did before the table (nr_cpus * max_nesting nodes)
 *   scan miss   the same for a lock nobody waits on (pvticket's slow flag
 *               is sticky: its unlocks often look up a ticket not halted)
 *   table hit   WaitNodes::find(), the lookup every slow unlock uses now
 *   table miss
 *   kick        WaitNodes::kick_halted() (table lookup, cmpxchg, kick() as
 *               a no-op here), the whole slow-unlock path but the hypercall
 * Prints the table, then checks that the table's cost is flat (N = 8192
 * within 4x of N = 2) and the scan's is not.
 *
 * Usage: bench_lookup [max-N]
 */
#include "../../guest/core/wait_node.h"
#include "harness.h"

#include <stdlib.h>
#include <time.h>

using namespace pvlock;

namespace {

struct BenchPlatform : BuiltinAtomics {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = 8192;
	static inline u32 cur, nr = 1;
	static inline u64 kicks;

	static u32 this_cpu() { return cur; }
	static u32 nr_cpus() { return nr; }
	static void relax() { __builtin_ia32_pause(); }
	static u64 clock() { return __builtin_ia32_rdtsc(); }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];

		return storage[cpu];
	}

	static void wait(const u8 *, u8) {}
	static void kick(u32) { kicks++; }
	static bool vcpu_is_preempted(u32) { return false; }
	static bool yield_to(u32) { return false; }
	static bool yield_any() { return false; }
	static void hint_waiting_on(u32) {}
	static void hint_holding(int) {}
	static void contention_begin(LockWord *) {}
	static void contention_end(LockWord *) {}
};

using WN = WaitNodes<BenchPlatform>;

constexpr u32 nlocks = 1024;
LockWord locks[nlocks], target, nobody;
WaitNode *nodes[BenchPlatform::max_cpus];

double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call of f, best of 5 runs of about 2 ms each. */
template <typename F>
double time_per_call(F &&f, u32 calls)
{
	double best = 1e30;

	for (int r = 0; r < 5; r++) {
		double t0 = now_ns();

		for (u32 i = 0; i < calls; i++)
			f();
		double per = (now_ns() - t0) / calls;

		if (per < best)
			best = per;
	}
	return best;
}

struct Row {
	u32 n;
	double scan_hit, scan_miss, hit, miss, kick;
};

Row measure(u32 n)
{
	Row r = { n, 0, 0, 0, 0, 0 };

	BenchPlatform::nr = n;
	for (u32 c = 0; c < n; c++) {
		BenchPlatform::cur = c;
		/* The last CPU's lock is its own: the scan must reach it. */
		nodes[c] = WN::get(c == n - 1 ? &target : &locks[c % nlocks], c & 0xff);
		nodes[c]->state = node_halted;
		WN::hash(nodes[c]);
	}
	WaitNode *last = nodes[n - 1];
	const LockWord *ll = last->lock;
	u32 lt = last->tag;
	/* Scans: about 4M node probes per run, at least 100 calls. */
	u32 scan_calls = 4000000 / (n * max_nesting) + 100;
	volatile uptr sink = 0;

	r.scan_hit = time_per_call([&] { sink = sink + reinterpret_cast<uptr>(
						 WN::find_by_scan(ll, lt, node_halted)); }, scan_calls);
	r.scan_miss = time_per_call([&] { sink = sink + reinterpret_cast<uptr>(
						  WN::find_by_scan(&nobody, 1, node_halted)); }, scan_calls);
	r.hit = time_per_call([&] { sink = sink + reinterpret_cast<uptr>(
					    WN::find(ll, lt, node_halted)); }, 200000);
	r.miss = time_per_call([&] { sink = sink + reinterpret_cast<uptr>(
					     WN::find(&nobody, 1, node_halted)); }, 200000);
	r.kick = time_per_call([&] {
		WN::kick_halted(ll, lt, node_halted);
		last->state = node_halted;
	}, 200000);
	for (u32 c = n; c-- > 0;) {
		BenchPlatform::cur = c;
		WN::put(nodes[c]);
	}
	return r;
}

u32 max_n = BenchPlatform::max_cpus;

} /* namespace */

TEST("slow-unlock lookup: the table's cost is flat in the vCPU count, the scan's linear")
{
	Row rows[16];
	u32 nrows = 0;

	printf("#   %6s %12s %12s %12s %12s %12s   (ns per lookup, best of 5)\n", "vCPUs",
	       "scan hit", "scan miss", "table hit", "table miss", "kick");
	for (u32 n = 2; n <= max_n && nrows < 16; n *= 2) {
		Row r = measure(n);

		rows[nrows++] = r;
		printf("#   %6u %12.1f %12.1f %12.1f %12.1f %12.1f\n", r.n, r.scan_hit,
		       r.scan_miss, r.hit, r.miss, r.kick);
	}
	const Row &a = rows[0], &b = rows[nrows - 1];

	EXPECT(BenchPlatform::kicks > 0, "kick_halted() never found its node");
	EXPECT(b.hit < 4 * a.hit + 20 && b.miss < 4 * a.miss + 20,
	       "table lookup grows: %.1f ns at %u vCPUs, %.1f at %u", b.hit, b.n, a.hit, a.n);
	if (b.n >= 1024)
		EXPECT(b.scan_miss > 20 * a.scan_miss, "scan did not grow: %.1f ns at %u, %.1f at %u",
		       b.scan_miss, b.n, a.scan_miss, a.n);
}

int main(int argc, char **argv)
{
	if (argc > 1 && atoi(argv[1]) >= 2) {
		max_n = static_cast<u32>(atoi(argv[1]));
		if (max_n > BenchPlatform::max_cpus)
			max_n = BenchPlatform::max_cpus;
		argc = 1;
	}
	return harness::run_all(argc, argv);
}
