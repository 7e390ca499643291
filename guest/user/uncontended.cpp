// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock-uncontended: what each algorithm costs where nothing contends
 * (issue 18, "1x, measured where drift cannot hide it"): one thread pinned
 * to one CPU, one lock, lock+unlock pairs, in user space on this machine's
 * own cores (the lab's TCG has no meaningful cycle count).
 *
 * Each round times every algorithm once, BATCH pairs each, in an order
 * rotated per round, so drift of the machine (another job, the clock) hits
 * every algorithm of a round alike; each round then gives every algorithm
 * its ratio to the native queued lock of the same round, the user-space
 * stand-in for the kernel's qspinlock (the same MCS template as pvqueued
 * with the PV hooks compiled out: Native<P>). Reported: ns per pair (median
 * over rounds) and the ratio's mean with a 95% interval over the rounds
 * (Student's t, the rounds paired), so pvqueued / queued is what the PV
 * hooks add to an uncontended lock and unlock, and pvticket / ticket the same
 * for the ticket lock. queued-casunlock, the native queued lock released by a
 * locked cmpxchg as upstream's PV qspinlock is, stands in for the lock a KVM
 * guest runs today.
 *
 * What it cannot show: the kernel's dispatch from spin_lock() into the layer
 * (a static call) and cold caches; those need the in-kernel benchmark on
 * hardware.
 *
 *   pvlock-uncontended [--rounds R] [--pairs N] [--cpu C]
 */
#include "../core/algorithms.h"
#include "platform.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

using namespace pvlock;

namespace {

using P = UserPlatform;

constexpr int max_algos = 12;
constexpr u32 max_rounds = 1000;

struct Algo {
	const char *name;
	void (*pairs)(LockWord *l, u32 n);
};

Algo algos[max_algos];
int nalgos;

template <typename L>
void run_pairs(LockWord *l, u32 n)
{
	for (u32 i = 0; i < n; i++) {
		L::lock(l);
		/* The critical section: nothing, but the compiler may not merge pairs. */
		asm volatile("" : : : "memory");
		L::unlock(l);
	}
}

/*
 * Not an algorithm of the layer: the native queued lock released as upstream's
 * PV qspinlock releases (__pv_queued_spin_unlock(): a locked cmpxchg of the
 * locked byte, which finds a halted waiter's mark), so that pvqueued is also
 * compared with the unlock a KVM guest's PV qspinlock pays. Its lock is the
 * native queued lock's: single-threaded, only the fast path runs.
 */
struct QueuedCasUnlock {
	static constexpr const char *name = "queued-casunlock";

	static void lock(LockWord *l)
	{
		Queued<P>::lock(l);
	}

	static void unlock(LockWord *l)
	{
		u8 *owner = byte_of(l, 0);
		u8 v = P::load(owner, Order::relaxed);

		while (!P::cmpxchg(owner, &v, static_cast<u8>(0), Order::seq_cst))
			;
	}
};

struct Collect {
	template <typename L>
	void operator()()
	{
		if (nalgos < max_algos)
			algos[nalgos++] = { L::name, run_pairs<L> };
	}
};

int find(const char *name)
{
	for (int i = 0; i < nalgos; i++)
		if (!strcmp(algos[i].name, name))
			return i;
	return -1;
}

double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Two-sided 95% quantile of Student's t with df degrees of freedom. */
double t95(u32 df)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				    2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };

	if (df <= 30)
		return t[df];
	return df <= 60 ? 2.000 : df <= 120 ? 1.980 : 1.960;
}

int cmp_double(const void *a, const void *b)
{
	double x = *static_cast<const double *>(a), y = *static_cast<const double *>(b);

	return x < y ? -1 : x > y;
}

/* ns per pair of algorithm a in round r; ratio of a to b per round, summarised. */
double ns[max_algos][max_rounds];

void ratio(int a, int b, u32 rounds, double *mean, double *lo, double *hi)
{
	double sum = 0, sq = 0;

	for (u32 r = 0; r < rounds; r++)
		sum += ns[a][r] / ns[b][r];
	*mean = sum / rounds;
	for (u32 r = 0; r < rounds; r++) {
		double d = ns[a][r] / ns[b][r] - *mean;

		sq += d * d;
	}
	double half = rounds > 1 ? t95(rounds - 1) * sqrt(sq / (rounds - 1) / rounds) : NAN;

	*lo = *mean - half;
	*hi = *mean + half;
}

[[noreturn]] void usage(const char *why)
{
	fprintf(stderr, "pvlock-uncontended: %s\n"
		"usage: pvlock-uncontended [--rounds R (2..%u)] [--pairs N] [--cpu C]\n",
		why, max_rounds);
	exit(2);
}

u32 number(const char *v, const char *what, u32 lo, u32 hi)
{
	char *end;
	unsigned long n;

	if (!v || !*v)
		usage(what);
	n = strtoul(v, &end, 10);
	if (*end || n < lo || n > hi)
		usage(what);
	return static_cast<u32>(n);
}

} /* namespace */

int main(int argc, char **argv)
{
	u32 rounds = 31, pairs = 1000000;
	int cpu = -1;
	cpu_set_t set;

	for (int i = 1; i < argc; i += 2) {
		const char *v = i + 1 < argc ? argv[i + 1] : nullptr;

		if (!strcmp(argv[i], "--rounds"))
			rounds = number(v, "--rounds wants 2 or more, at most the limit", 2, max_rounds);
		else if (!strcmp(argv[i], "--pairs"))
			pairs = number(v, "--pairs wants a positive count", 1, 1000000000);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = static_cast<int>(number(v, "--cpu wants a CPU number", 0, CPU_SETSIZE - 1));
		else
			usage(!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ? "help" :
			      "unknown option");
	}

	if (sched_getaffinity(0, sizeof(set), &set))
		usage("cannot read the CPU affinity");
	if (cpu < 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpu = c;
	if (cpu < 0 || !CPU_ISSET(cpu, &set))
		usage("--cpu names a CPU this process may not use");
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		usage("cannot pin to that CPU");

	P::set_nr_cpus(1);
	for_each_algorithm<P>(Collect{});
	Collect{}.operator()<QueuedCasUnlock>();
	int base = find("queued");

	if (base < 0)
		usage("no native queued lock among the algorithms");

	/*
	 * Each batch starts from a free lock word: the encodings differ (a
	 * ticket lock's free word has its two counters equal, not zero).
	 */
	alignas(64) static LockWord lock;

	/* One untimed round: caches, page faults, the CPU's clock. */
	for (int a = 0; a < nalgos; a++) {
		lock = LockWord{};
		algos[a].pairs(&lock, pairs / 4 + 1);
	}
	for (u32 r = 0; r < rounds; r++) {
		for (int k = 0; k < nalgos; k++) {
			int a = (k + static_cast<int>(r)) % nalgos;

			lock = LockWord{};
			double t0 = now_ns();

			algos[a].pairs(&lock, pairs);
			ns[a][r] = (now_ns() - t0) / pairs;
		}
	}

	printf("pvlock-uncontended: %u rounds of %u lock+unlock pairs per algorithm, one thread on "
	       "CPU %d, the algorithms' order rotated per round\n", rounds, pairs, cpu);
	printf("%-16s %12s   %-34s\n", "algorithm", "ns/pair", "/ queued: mean (95% CI over rounds)");
	for (int a = 0; a < nalgos; a++) {
		double sorted[max_rounds], mean, lo, hi;

		memcpy(sorted, ns[a], rounds * sizeof(double));
		qsort(sorted, rounds, sizeof(double), cmp_double);
		ratio(a, base, rounds, &mean, &lo, &hi);
		printf("%-16s %12.2f   %.3f (%.3f..%.3f)\n", algos[a].name, sorted[rounds / 2], mean,
		       lo, hi);
	}
	printf("(ns/pair: the median over rounds)\n");

	/*
	 * What the PV hooks add to each fair lock (its PV build over its native
	 * build), and pvqueued against the native lock with upstream's PV unlock.
	 */
	static const char *const pv_native[][2] = { { "pvqueued", "queued" },
						    { "pvticket", "ticket" },
						    { "pvqueued", "queued-casunlock" } };
	for (const auto &pn : pv_native) {
		int a = find(pn[0]), b = find(pn[1]);
		double mean, lo, hi;

		if (a < 0 || b < 0)
			continue;
		ratio(a, b, rounds, &mean, &lo, &hi);
		printf("uncontended: %s / %s = %.3f (95%% CI %.3f..%.3f, %u rounds)\n",
		       pn[0], pn[1], mean, lo, hi, rounds);
	}
	return 0;
}
