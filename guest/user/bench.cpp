// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock-bench: every lock algorithm and pthread_mutex, on real threads
 * playing vCPUs, at 1x..4x overcommit of the cores it is given.
 *
 * Cells are interleaved: for each repeat, each overcommit level, each
 * critical-section length, every lock runs once, so slow drifts of the
 * machine (other load, frequency) spread over all locks alike. One CSV row
 * per cell; scripts/bench-report turns the CSV into the seeds' tables, the
 * efficiency at Nx and a plot.
 *
 *   pvlock-bench [--cores N] [--levels 1,2,3,4] [--cs short,long,mixed]
 *                [--duration-ms MS] [--repeats R] [--locks a,b,...]
 *                [--csv FILE] [--tune key=value ...]
 *
 * Besides the algorithms, the variants below (an algorithm with one
 * mechanism turned off) run too, unless --locks names a subset.
 *
 * Of the waits that ended at their bound (wait_bound_us), wait_timeouts
 * counts those whose condition still held, lost_kicks those whose waker
 * had already changed it: a kick that did not end the wait.
 */
#include "thread_lab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

using namespace pvlock;

namespace {

struct CsKind {
	const char *name;
	u32 cs_work;
	u32 think_work;
	u32 cs2_work;		/* a second lock (CellConfig::cs2_work) */
	bool only_if_named;	/* run only when --cs names it */
};

/*
 * ~0.1 us and ~2 us of work in the critical section; and seed 004's mixed
 * case, both in one workload: each round takes a short-hold lock, then a
 * long-hold one (--cs mixed, with the backoff variants below).
 */
const CsKind cs_kinds[] = {
	{ "short", 30, 300, 0, false },
	{ "long", 800, 300, 0, false },
	{ "mixed", 30, 300, 800, true },
};

[[noreturn]] void usage(const char *why)
{
	fprintf(stderr, "pvlock-bench: %s\n"
		"usage: pvlock-bench [--cores N] [--levels 1,2,3,4] [--cs short,long,mixed]\n"
		"                    [--duration-ms MS] [--repeats R] [--locks a,b,...]\n"
		"                    [--csv FILE] [--tune key=value ...]\n"
		"--tune sets an algorithm knob for the whole run (guest/core/tunables.h:\n"
		"%s)\n", why, pvlock::tunable_keys);
	exit(2);
}

/* A number in [lo, hi]; anything else is a usage error naming what it was for. */
u32 parse_u32(const char *s, const char *what, int base = 10, unsigned long lo = 1,
	      unsigned long hi = 100000)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, base);

	if (errno || *end || end == s || v < lo || v > hi) {
		char msg[128];

		snprintf(msg, sizeof(msg), "bad %s '%s'", what, s);
		usage(msg);
	}
	return static_cast<u32>(v);
}

bool in_list(const char *list, const char *name)
{
	if (!list)
		return true;
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? static_cast<size_t>(comma - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/*
 * Variants: an algorithm run with some tunables changed, side by side with
 * the default, so that each mechanism's share of the result is measured.
 */
struct Variant {
	const char *name;
	const char *base;
	void (*apply)(Tunables &t);
};

const Variant variants[] = {
	{ "pvqueued-noyield", "pvqueued", [](Tunables &t) { t.directed_yield = false; } },
	{ "pvqueued-nosteal", "pvqueued", [](Tunables &t) { t.lock_steal = false; } },
	{ "pvqueued-onesteal", "pvqueued", [](Tunables &t) { t.steal_spins = 0; } },
	{ "pvqueued-nodeep", "pvqueued", [](Tunables &t) { t.halt_deep_waiters = false; } },
	{ "pvticket-noyield", "pvticket", [](Tunables &t) { t.directed_yield = false; } },
	{ "backoff-stored", "backoff", [](Tunables &t) { t.collision = Collision::use_stored; } },
	/*
	 * Seed 004's experiment, two by two: one delay per CPU or the 64-entry
	 * table, and on a collision the stored delay or min_delay. backoff
	 * (table, min) and backoff-stored (table, stored) above; backoff-single
	 * is the first version (one delay per CPU, shared by every lock), and
	 * backoff-single-min the same slot with Eric Dumazet's policy: a lock
	 * other than the one that stored the delay starts from min_delay.
	 */
	{ "backoff-single", "backoff", [](Tunables &t) {
		t.delay_slots = 1;
		t.collision = Collision::use_stored;
	} },
	{ "backoff-single-min", "backoff", [](Tunables &t) {
		t.delay_slots = 1;
		t.collision = Collision::use_min;
	} },
};

/* Every lock, then every variant (only when asked for by --locks). */
template <typename F>
void for_each_config(const char *locks, F &&f)
{
	for_each_user_lock([&](const LockOps &ops) { f(ops, ops.name, nullptr); });
	for (const Variant &v : variants) {
		if (!in_list(locks, v.name))
			continue;
		for_each_user_lock([&](const LockOps &ops) {
			if (!strcmp(ops.name, v.base))
				f(ops, v.name, &v);
		});
	}
}

} /* namespace */

int main(int argc, char **argv)
{
	u32 cores = 0, duration_ms = 400, repeats = 3;
	u32 levels[8] = { 1, 2, 3, 4 }, nlevels = 4;
	const char *cs_list = nullptr, *locks = nullptr, *csv_path = nullptr;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : nullptr;

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage("help");
		if (!v)
			usage("missing value");
		i++;
		if (!strcmp(a, "--cores")) {
			cores = parse_u32(v, "--cores");
		} else if (!strcmp(a, "--duration-ms")) {
			duration_ms = parse_u32(v, "--duration-ms");
		} else if (!strcmp(a, "--repeats")) {
			repeats = parse_u32(v, "--repeats");
		} else if (!strcmp(a, "--levels")) {
			nlevels = 0;
			for (char *tok = strtok(strdup(v), ","); tok; tok = strtok(nullptr, ",")) {
				if (nlevels == 8)
					usage("at most 8 levels");
				levels[nlevels++] = parse_u32(tok, "level");
			}
		} else if (!strcmp(a, "--cs")) {
			cs_list = v;
		} else if (!strcmp(a, "--locks")) {
			locks = v;
		} else if (!strcmp(a, "--csv")) {
			csv_path = v;
		} else if (!strcmp(a, "--tune")) {
			char key[32];
			const char *eq = strchr(v, '=');

			if (!eq || eq == v || static_cast<size_t>(eq - v) >= sizeof(key))
				usage("--tune wants key=value");
			memcpy(key, v, eq - v);
			key[eq - v] = '\0';
			if (!tunable_set(tunables, key,
					 parse_u32(eq + 1, "--tune value", 0, 0, 0xffffffffUL)))
				usage("--tune: unknown key or value out of range");
		} else {
			usage("unknown option");
		}
	}

	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		usage("cannot read the CPU affinity");
	u32 online = CPU_COUNT(&set);

	if (!cores)
		cores = online;
	if (cores > online)
		usage("--cores is more than the cores this process may use");
	for (u32 i = 0; i < nlevels; i++)
		if (levels[i] * cores > UserPlatform::max_cpus)
			usage("too many threads for that level");

	/* Validate the names before spending minutes. */
	u32 known = 0;
	for_each_config(locks, [&](const LockOps &, const char *name, const Variant *) {
		known += in_list(locks, name);
	});
	if (!known)
		usage("--locks names no known lock (see the CSV header of a full run)");

	FILE *csv = csv_path ? fopen(csv_path, "w") : stdout;

	if (!csv) {
		perror(csv_path);
		return 2;
	}
	fprintf(csv, "repeat,cs,level,threads,cores,lock,acquisitions,seconds,throughput,"
		     "min_thread,max_thread,waits,kicks,yields,hung,exclusion_broken,"
		     "wait_timeouts,lost_kicks\n");
	fprintf(stderr, "pvlock-bench: %u cores, levels", cores);
	for (u32 i = 0; i < nlevels; i++)
		fprintf(stderr, " %ux", levels[i]);
	fprintf(stderr, ", %u ms per cell, %u repeats, preemption view: %s\n",
		duration_ms, repeats,
		UserPlatform::preemption_visible() ? "perf context switches" : "unavailable");

	int failures = 0;

	for (u32 r = 0; r < repeats; r++) {
		for (u32 li = 0; li < nlevels; li++) {
			for (const CsKind &cs : cs_kinds) {
				if (cs_list ? !in_list(cs_list, cs.name) : cs.only_if_named)
					continue;
				fprintf(stderr, "  repeat %u/%u, %ux, %s critical section\n",
					r + 1, repeats, levels[li], cs.name);
				for_each_config(locks, [&](const LockOps &ops, const char *name,
							   const Variant *var) {
					if (!in_list(locks, name))
						return;
					Tunables saved = tunables;
					CellConfig cfg;

					if (var)
						var->apply(tunables);

					cfg.ncores = cores;
					cfg.nthreads = cores * levels[li];
					cfg.duration_ms = duration_ms;
					cfg.cs_work = cs.cs_work;
					cfg.think_work = cs.think_work;
					cfg.cs2_work = cs.cs2_work;
					CellResult res = run_cell(ops, cfg);

					tunables = saved;
					if (res.hung || res.exclusion_broken)
						failures++;
					fprintf(csv, "%u,%s,%u,%u,%u,%s,%llu,%.4f,%.1f,%llu,%llu,%llu,%llu,%llu,%d,%d,%llu,%llu\n",
						r + 1, cs.name, levels[li], cfg.nthreads, cores, name,
						(unsigned long long)res.acquisitions, res.seconds,
						res.seconds > 0 ? res.acquisitions / res.seconds : 0.0,
						(unsigned long long)res.min_thread,
						(unsigned long long)res.max_thread,
						(unsigned long long)res.events.waits,
						(unsigned long long)res.events.kicks,
						(unsigned long long)res.events.yields, res.hung,
						res.exclusion_broken,
						(unsigned long long)res.events.timeouts,
						(unsigned long long)res.events.lost_kicks);
					fflush(csv);
					if (res.hung) {
						fprintf(stderr, "pvlock-bench: %s hung; stopping\n", name);
						exit(1);
					}
				});
			}
		}
	}
	if (csv != stdout)
		fclose(csv);
	return failures ? 1 : 0;
}
