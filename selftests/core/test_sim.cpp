// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: deterministic schedule exploration of every lock algorithm.
 *
 * Each case runs a few hundred seeds of the simulator (guest/sim): vCPUs loop
 * lock / critical section / unlock while the simulated host preempts them at
 * random atomic steps, halts them in wait() and wakes them on kick(). Checked:
 *   - mutual exclusion (two vCPUs in the critical section);
 *   - no lost wake-up (a state where every unfinished vCPU is halted);
 *   - progress (the run ends within its step limit);
 *   - bounded waiting for the fair locks: acquisitions that overtake a waiter
 *     after its doorway (the RMW that queued it).
 * Negative controls: a PV lock whose kicks are dropped, a lock whose
 * test-and-set is not atomic, the unfair lock held to a fair bound, and a
 * queue head that waits on a value that can recur (issue 17) must each be
 * caught.
 *
 * Interrupts (Params::irq_permille): a vCPU is interrupted at any step, in a
 * critical section, while it spins, or between a waiter's last re-check and
 * its halt, and the handler takes a lock of its own (never one the task
 * context takes), so its waits eat kicks meant for the interrupted wait.
 *
 * CPU ids (issue 17, "every CPU id"): SimIds runs the same fibers as CPUs
 * base + stride * i of a platform with thousands of ids, so owners and
 * heads the lock word cannot name (ids >= owner_named_cpus) are exercised,
 * with a count of directed yields that reach the vCPU holding the lock.
 *
 * Contention reports (platform.h's contention_begin/end, the kernel's
 * lock:contention_* tracepoints): SimTraced checks that every spin, halt and
 * yield inside lock() falls between the two, nested interrupts included,
 * and that an uncontended lock() reports nothing.
 *
 * A failure prints its seed; `test_sim <case> <seed>` replays just that seed.
 */
#include "../../guest/core/algorithms.h"
#include "../../guest/sim/sim.h"
#include "../../guest/core/broken.h"
#include "harness.h"

#include <new>
#include <stdlib.h>
#include <sys/mman.h>
#include <type_traits>

using namespace pvlock;

namespace {

struct Params {
	u32 nvcpus = 4;
	u32 npcpus = 2;
	u32 iters = 12;
	u32 cs_steps = 6;
	u32 think_steps = 4;
	u32 seeds = 300;
	u32 overtake_bound = 0;		/* 0: do not check */
	bool doorway_at_entry = false;	/* lock() has no doorway RMW: count from entry */
	u32 nlocks = 1;
	const LockWord *colliding[8];	/* nlocks locks, if > 1 */
	u32 irq_permille = 0;		/* interrupts that take irq_lock */
	u32 irq_cs_steps = 3;
	bool sticky_kicks = true;	/* sim::Config::sticky_kicks */
	u32 wait_steps = 1;		/* sim::Config::wait_steps */
};

u64 only_seed;	/* nonzero: replay this seed only */

/*
 * One lock() call in progress on a vCPU, for SimTraced. An interrupt pushes
 * a frame with no lock: spins in the handler outside its own lock() are not
 * the interrupted lock()'s.
 */
enum class TraceState : u8 { before, begun, ended, outside };

struct TraceFrame {
	LockWord *lock;
	TraceState state;
};

/* Totals over every seed of a case, for the "did anything contend" checks. */
struct TraceTotals {
	u64 begins, ends;
} ttotal;

/* State of one run, shared by the vCPU fibers (one thread, no races). */
struct RunState {
	LockWord locks[64];
	LockWord *lock[8];
	u32 nlocks;
	int in_cs[8];
	u32 violations;
	u32 total_acq;
	u32 doorway_snapshot[SimPlatform::max_cpus];
	bool waiting[SimPlatform::max_cpus];
	u32 max_overtakes;
	LockWord irq_lock;		/* taken only by interrupt handlers */
	int irq_in_cs;
	u32 irq_acq;
	u32 holder;			/* vCPU + 1 in a critical section, 0: none */
	/* lock() calls in progress: task, interrupt, interrupt's lock() */
	TraceFrame trace[SimPlatform::max_cpus][3];
	u32 trace_depth[SimPlatform::max_cpus];
	u32 trace_violations;
	const char *trace_why;
	const Params *p;
};

/*
 * The run state, lock words included, at one fixed address in every
 * execution. The wait-node table and the owner hints hash lock addresses,
 * and where an entry lands decides how many steps its insert takes, so at
 * an address that ASLR moves a seed would replay a different schedule in
 * each execution (issue 17's lost wake-up showed for seed 74 in about one
 * execution in fifteen). If the address is taken, any will do and seeds
 * replay only within one execution.
 */
RunState &fixed_run_state()
{
	void *p = harness::fixed_mapping(reinterpret_cast<void *>(0x200000000000UL),
					  sizeof(RunState), "test_sim");

	return *new (p) RunState{};
}

RunState &rs = fixed_run_state();

void trace_violation(const char *why)
{
	if (!rs.trace_violations++)
		rs.trace_why = why;
}

void trace_push(u32 vcpu, LockWord *l, TraceState s)
{
	rs.trace[vcpu][rs.trace_depth[vcpu]++] = TraceFrame{ l, s };
}

/* A lock() returns, or an interrupt handler does. */
void trace_pop(u32 vcpu)
{
	TraceFrame &f = rs.trace[vcpu][--rs.trace_depth[vcpu]];

	if (f.state == TraceState::begun)
		trace_violation("lock() returned without contention_end");
}

/* A spin, halt or yield: inside lock(), only between begin and end. */
void trace_wait_step()
{
	u32 vcpu = sim::current();
	u32 d = rs.trace_depth[vcpu];

	if (!d)
		return;
	switch (rs.trace[vcpu][d - 1].state) {
	case TraceState::before:
		trace_violation("lock() waited before contention_begin");
		break;
	case TraceState::ended:
		trace_violation("lock() waited after contention_end");
		break;
	default:
		break;
	}
}

void trace_mark(LockWord *l, TraceState from, TraceState to, const char *misuse)
{
	u32 vcpu = sim::current();
	u32 d = rs.trace_depth[vcpu];
	TraceFrame *f = d ? &rs.trace[vcpu][d - 1] : nullptr;

	if (!f || f->lock != l || f->state != from) {
		trace_violation(misuse);
		return;
	}
	f->state = to;
	if (to == TraceState::begun)
		ttotal.begins++;
	else
		ttotal.ends++;
}

/*
 * The simulator with contention reports checked (drop_begin, drop_end: the
 * negative controls, a lock that forgets one of them).
 */
template <bool drop_begin = false, bool drop_end = false>
struct SimTraced : SimPlatform {
	static void relax()
	{
		trace_wait_step();
		SimPlatform::relax();
	}
	static void wait(const u8 *ptr, u8 val)
	{
		trace_wait_step();
		SimPlatform::wait(ptr, val);
	}
	static bool yield_to(u32 cpu)
	{
		trace_wait_step();
		return SimPlatform::yield_to(cpu);
	}
	static bool yield_any()
	{
		trace_wait_step();
		return SimPlatform::yield_any();
	}
	static void contention_begin(LockWord *l)
	{
		if (!drop_begin)
			trace_mark(l, TraceState::before, TraceState::begun,
				   "contention_begin outside lock() or twice");
	}
	static void contention_end(LockWord *l)
	{
		if (!drop_end)
			trace_mark(l, TraceState::begun, TraceState::ended,
				   "contention_end without contention_begin");
	}
};

void on_doorway(u32 vcpu)
{
	if (rs.waiting[vcpu]) {
		rs.doorway_snapshot[vcpu] = rs.total_acq;
		rs.waiting[vcpu] = false;
	}
}

template <typename A>
void body(u32 vcpu, void *)
{
	const Params &p = *rs.p;
	u32 r = vcpu * 7919 + 1;

	for (u32 i = 0; i < p.iters; i++) {
		u32 k = (r = r * 1103515245 + 12345) % rs.nlocks;
		LockWord *l = rs.lock[k];

		rs.waiting[vcpu] = true;
		rs.doorway_snapshot[vcpu] = rs.total_acq;
		trace_push(vcpu, l, TraceState::before);
		A::lock(l);
		trace_pop(vcpu);
		if (!rs.waiting[vcpu] || p.doorway_at_entry) {
			u32 overtakes = rs.total_acq - rs.doorway_snapshot[vcpu];

			if (overtakes > rs.max_overtakes)
				rs.max_overtakes = overtakes;
		}
		rs.waiting[vcpu] = false;
		rs.holder = vcpu + 1;
		if (rs.in_cs[k]++)
			rs.violations++;
		for (u32 s = 0; s < p.cs_steps; s++)
			SimPlatform::relax();
		if (rs.in_cs[k] != 1)
			rs.violations++;
		rs.in_cs[k]--;
		rs.total_acq++;
		rs.holder = 0;
		A::unlock(l);
		for (u32 s = 0; s < p.think_steps; s++)
			SimPlatform::relax();
	}
}

/* An interrupt handler: the lock of its own, a short critical section. */
template <typename A>
void irq_body(u32 vcpu)
{
	trace_push(vcpu, nullptr, TraceState::outside);
	trace_push(vcpu, &rs.irq_lock, TraceState::before);
	A::lock(&rs.irq_lock);
	trace_pop(vcpu);
	if (rs.irq_in_cs++)
		rs.violations++;
	for (u32 s = 0; s < rs.p->irq_cs_steps; s++)
		SimPlatform::relax();
	rs.irq_in_cs--;
	rs.irq_acq++;
	A::unlock(&rs.irq_lock);
	trace_pop(vcpu);
}

struct Verdict {
	u32 failed_seeds;
	u64 first_seed;
	const char *first_reason;
	u32 worst_overtakes;
	u64 preemptions, halts, kicks, yields, irqs, dropped_kicks;
	u32 lost_wakeups;	/* seeds that failed with Outcome::lost_wakeup */
	u32 overtaken;		/* seeds that failed on the fairness bound alone */
};

static const char overtaken_why[] = "waiter overtaken beyond the fairness bound";

template <typename A>
Verdict explore(const Params &p, u64 first_seed = 1)
{
	Verdict v = {};

	sim::doorway_hook = on_doorway;
	for (u64 s = first_seed; s < first_seed + p.seeds; s++) {
		if (only_seed && s != only_seed)
			continue;
		rs = RunState{};
		rs.p = &p;
		rs.nlocks = p.nlocks;
		for (u32 k = 0; k < p.nlocks; k++)
			rs.lock[k] = p.nlocks > 1 ? const_cast<LockWord *>(p.colliding[k])
						  : &rs.locks[0];
		for (u32 k = 0; k < p.nlocks; k++)
			rs.lock[k]->val = 0;

		sim::Config cfg;

		cfg.nvcpus = p.nvcpus;
		cfg.npcpus = p.npcpus;
		cfg.seed = s;
		cfg.sticky_kicks = p.sticky_kicks;
		cfg.irq_permille = p.irq_permille;
		cfg.wait_steps = p.wait_steps;
		sim::irq_hook = irq_body<A>;
		sim::Result res = sim::run(cfg, body<A>, nullptr);
		const char *why = nullptr;

		if (res.outcome != sim::Outcome::done)
			why = sim::outcome_name(res.outcome);
		else if (rs.violations)
			why = "mutual exclusion violated";
		else if (rs.trace_violations)
			why = rs.trace_why;
		else if (p.overtake_bound && rs.max_overtakes > p.overtake_bound)
			why = overtaken_why;
		else if (rs.total_acq != p.nvcpus * p.iters)
			why = "acquisitions missing";
		if (rs.max_overtakes > v.worst_overtakes)
			v.worst_overtakes = rs.max_overtakes;
		v.preemptions += res.preemptions;
		v.halts += res.halts;
		v.kicks += res.kicks;
		v.yields += res.yields;
		v.irqs += res.irqs;
		v.dropped_kicks += res.dropped_kicks;
		v.lost_wakeups += res.outcome == sim::Outcome::lost_wakeup;
		v.overtaken += why == overtaken_why;
		if (why) {
			if (!v.failed_seeds++) {
				v.first_seed = s;
				v.first_reason = why;
			}
		}
	}
	sim::doorway_hook = nullptr;
	sim::irq_hook = nullptr;
	return v;
}

template <typename A>
void expect_correct(const Params &p)
{
	Verdict v = explore<A>(p);

	printf("#   %s: %u seeds, worst overtakes %u, preemptions %llu, halts %llu, "
	       "kicks %llu, yields %llu", A::name, p.seeds, v.worst_overtakes,
	       (unsigned long long)v.preemptions, (unsigned long long)v.halts,
	       (unsigned long long)v.kicks, (unsigned long long)v.yields);
	if (p.irq_permille || !p.sticky_kicks)
		printf(", irqs %llu, dropped kicks %llu", (unsigned long long)v.irqs,
		       (unsigned long long)v.dropped_kicks);
	printf("\n");
	EXPECT(v.failed_seeds == 0, "%s: %u seeds failed, first seed %llu: %s", A::name,
	       v.failed_seeds, (unsigned long long)v.first_seed,
	       v.first_reason ? v.first_reason : "");
}

template <typename A>
Verdict expect_caught(const Params &p, const char *what)
{
	Verdict v = explore<A>(p);

	printf("#   negative control %s: %u of %u seeds caught (first seed %llu: %s),"
	       " worst overtakes %u\n", what, v.failed_seeds, p.seeds, (unsigned long long)v.first_seed,
	       v.first_reason ? v.first_reason : "-", v.worst_overtakes);
	EXPECT(v.failed_seeds > 0, "the harness did not catch %s", what);
	return v;
}

Params overcommit(u32 bound)
{
	Params p;

	p.nvcpus = 6;		/* 3x overcommit of 2 simulated pCPUs */
	p.npcpus = 2;
	p.overtake_bound = bound;
	return p;
}

/* A host that drops every kick: halted waiters must never wake. */
struct SimNoKick : SimPlatform {
	static void kick(u32) {}
};

/* Directed yields SimIds saw, by whether they named the holder's CPU. */
struct YieldCount {
	u64 to_holder, to_other, bad_kicks;
} ycount;

/*
 * The simulator's vCPU i as CPU base + stride * i on a platform of maxc
 * ids, whose per-CPU tables are maxc long: odd and large ids (a guest with
 * thousands of possible CPUs of which a dozen run). Hooks that take a CPU
 * map it back; an id that names no vCPU is a hint gone stale (yield: the
 * host refuses) or a bug (kick: counted, must stay 0).
 */
template <u32 base, u32 stride, u32 maxc>
struct SimIds : SimPlatform {
	static constexpr u32 max_cpus = maxc;
	static_assert(base + stride * (SimPlatform::max_cpus - 1) < maxc, "ids fit");

	static u32 id_of(u32 vcpu) { return base + stride * vcpu; }

	static u32 vcpu_of(u32 cpu)
	{
		if (cpu < base || (cpu - base) % stride || (cpu - base) / stride >= sim::nr_vcpus())
			return ~0U;
		return (cpu - base) / stride;
	}

	static u32 this_cpu() { return id_of(sim::current()); }
	static u32 nr_cpus() { return id_of(sim::nr_vcpus() - 1) + 1; }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];
		static bool registered =
			(sim::register_percpu(storage, sizeof(storage)), true);

		(void)registered;
		return storage[cpu];
	}

	static void kick(u32 cpu)
	{
		u32 v = vcpu_of(cpu);

		if (v == ~0U)
			ycount.bad_kicks++;
		else
			sim::kick(v);
	}

	static bool vcpu_is_preempted(u32 cpu)
	{
		u32 v = vcpu_of(cpu);

		return v != ~0U && sim::preempted(v);
	}

	static bool yield_to(u32 cpu)
	{
		u32 v = vcpu_of(cpu);

		if (v != ~0U && v + 1 == rs.holder)
			ycount.to_holder++;
		else
			ycount.to_other++;
		return v != ~0U && sim::yield_to(v);
	}
};

/* Straddling the codes: 250..252 named, 253.. not (the old CPU 254 = halted). */
using SimStraddle = SimIds<250, 1, 8192>;
/* Large and sparse: 1000, 1617, ... 10255, on 16000 possible CPUs. */
using SimLarge = SimIds<1000, 617, 16000>;

} /* namespace */

/* Fair locks: after its doorway a waiter is overtaken by at most n - 1. */
TEST("sim: ticket (native) is correct and FIFO under 3x overcommit")
{
	expect_correct<Ticket<SimPlatform>>(overcommit(5));
}

TEST("sim: pvticket is correct and FIFO under 3x overcommit")
{
	expect_correct<PvTicket<SimPlatform>>(overcommit(5));
}

TEST("sim: queued (native) is correct and FIFO under 3x overcommit")
{
	expect_correct<Queued<SimPlatform>>(overcommit(5));
}

/*
 * Steals past a halted head are not bounded by a count (as in pvqspinlock, a
 * head that wakes blocks them); what must hold is exclusion and that every
 * vCPU finishes its acquisitions within the step limit.
 */
TEST("sim: pvqueued with lock stealing is correct under 3x overcommit")
{
	expect_correct<PvQueued<SimPlatform>>(overcommit(0));
}

/*
 * vCPUs that take the lock again at once, three on one pCPU: while a queued
 * waiter (or the head before it) is preempted, every other vCPU that runs
 * may steal past it. Counted from the waiter's doorway (its enqueue), the
 * steals past preempted heads are bounded by head_pass_limit per head
 * (worst 68 in 200 seeds of 200 acquisitions each; without the limit
 * 116, and 14 seeds pass 80); counted from lock()'s entry, a stealer must
 * queue, not yield, when the owner is preempted (worst 127; 360 on the lock that
 * yielded: the owner it runs takes the lock again on its fast path, nobody
 * being queued). What remains is the window between a hand-over and the
 * new head's first spin, and the wake-up of a kicked head, which steals may
 * use as upstream's do (the head byte is empty until the head runs). Naming
 * the new head in its byte at the hand-over closed the first (worst 44) but
 * cost pvlock-bench 25-50% of its throughput at 2x-4x: a preempted head,
 * once passed head_pass_limit times, then holds every newcomer in the queue
 * behind it (docs/results-user-space.md).
 */
Params retakers(bool from_entry)
{
	Params p;

	p.nvcpus = 3;
	p.npcpus = 1;
	p.iters = 200;
	p.cs_steps = 6;
	p.think_steps = 1;
	p.seeds = 200;
	p.doorway_at_entry = from_entry;
	p.overtake_bound = from_entry ? 250 : 80;
	return p;
}

TEST("sim: pvqueued bounds the steals past a queued waiter (re-takers, one pCPU)")
{
	expect_correct<PvQueued<SimPlatform>>(retakers(false));
	expect_correct<PvQueued<SimPlatform>>(retakers(true));
}

/* Caught for the overtakes alone: a hang or a broken exclusion is another bug. */
TEST("negative: pvqueued without head_pass_limit fails the steal bound")
{
	Verdict v = expect_caught<PvQueuedUnboundedSteals<SimPlatform>>(
		retakers(false), "unbounded steals past a preempted head");

	EXPECT(v.overtaken == v.failed_seeds, "%u of %u seeds failed for another reason",
	       v.failed_seeds - v.overtaken, v.failed_seeds);
}

TEST("negative: a pvqueued stealer that yields to a preempted owner fails the bound")
{
	Verdict v = expect_caught<PvQueuedStealYields<SimPlatform>>(
		retakers(true), "a stealer yielding instead of queueing");

	EXPECT(v.overtaken == v.failed_seeds, "%u of %u seeds failed for another reason",
	       v.failed_seeds - v.overtaken, v.failed_seeds);
}

TEST("sim: pvqueued with short stealing phases (0, 64 spins) is correct")
{
	Tunables saved = tunables;

	const u32 phases[] = { 0, 64 };

	for (u32 steal_spins : phases) {
		tunables.steal_spins = steal_spins;
		tunables.preempt_check_mask = saved.preempt_check_mask;
		expect_correct<PvQueued<SimPlatform>>(overcommit(0));
		tunables.preempt_check_mask = 0;	/* look at the owner every spin */
		expect_correct<PvQueued<SimPlatform>>(overcommit(0));
	}
	tunables = saved;
}

TEST("sim: pvqueued without lock stealing is FIFO")
{
	tunables.lock_steal = false;
	expect_correct<PvQueued<SimPlatform>>(overcommit(5));
	tunables.lock_steal = true;
}

TEST("sim: pvqueued and pvticket halt at once (spin threshold 0)")
{
	Tunables saved = tunables;

	tunables.spin_threshold = 0;
	tunables.preempt_check_mask = 0;
	expect_correct<PvTicket<SimPlatform>>(overcommit(5));
	expect_correct<PvQueued<SimPlatform>>(overcommit(0));
	tunables.lock_steal = false;
	expect_correct<PvQueued<SimPlatform>>(overcommit(5));
	tunables = saved;
}

TEST("sim: unfair lock is correct under 3x overcommit")
{
	expect_correct<UnfairTas<SimPlatform>>(overcommit(0));
}

TEST("sim: preemptable ticket lock is correct under 3x overcommit")
{
	expect_correct<PreemptTicket<SimPlatform>>(overcommit(0));
}

TEST("sim: backoff ticket lock is correct and FIFO under 3x overcommit")
{
	expect_correct<BackoffTicket<SimPlatform>>(overcommit(5));
}

TEST("sim: every algorithm without overcommit (4 vCPUs on 4 pCPUs)")
{
	Params p;

	p.npcpus = 4;
	expect_correct<Ticket<SimPlatform>>(p);
	expect_correct<PvTicket<SimPlatform>>(p);
	expect_correct<Queued<SimPlatform>>(p);
	expect_correct<PvQueued<SimPlatform>>(p);
	expect_correct<UnfairTas<SimPlatform>>(p);
	expect_correct<PreemptTicket<SimPlatform>>(p);
	expect_correct<BackoffTicket<SimPlatform>>(p);
}

TEST("sim: many vCPUs (12 on 2 pCPUs, 6x) for the PV locks")
{
	Params p;

	p.nvcpus = 12;
	p.iters = 6;
	p.seeds = 100;
	expect_correct<PvTicket<SimPlatform>>(p);
	expect_correct<PvQueued<SimPlatform>>(p);
	expect_correct<PreemptTicket<SimPlatform>>(p);
}

namespace {

/*
 * Issue 17's setting: each vCPU locks again right after its unlock (no think
 * time; it steals past a head that has not run yet), so the owner byte a
 * halting head saw comes back, and waiters halt soon. Interrupts whose
 * handlers wait, and kicks that do not stick, are the two ways a kick that
 * landed before the halt goes missing. The way into a halt takes 30 steps
 * and a handler's critical section 20, as long as an unlock's scan of the
 * wait nodes and a re-lock: with one step each the window between a head's
 * mark and its halt is too short for the old code's lost wake-up to show
 * in 300 seeds (with 30 it does in 15-30 of them).
 */
Params recurring_owner(bool sticky, u32 irq_permille)
{
	Params p = overcommit(0);

	p.think_steps = 0;
	p.wait_steps = 30;
	p.irq_cs_steps = 20;
	p.sticky_kicks = sticky;
	p.irq_permille = irq_permille;
	return p;
}

struct HaltSoon {
	Tunables saved = tunables;

	HaltSoon()
	{
		tunables.spin_threshold = 16;
		tunables.preempt_check_mask = 3;
		tunables.steal_spins = 0;
	}
	~HaltSoon() { tunables = saved; }
};

struct CorrectWith {
	const Params &p;

	template <typename A>
	void operator()() { expect_correct<A>(p); }
};

} /* namespace */

TEST("sim: every algorithm with interrupts that take another lock")
{
	Params p = overcommit(0);

	p.irq_permille = 20;
	for_each_algorithm<SimPlatform>(CorrectWith{ p });
}

TEST("sim: PV waits survive nested waits that eat their kicks (issue 17)")
{
	HaltSoon h;
	const u32 rates[] = { 20, 100 };

	for (u32 rate : rates) {
		Params p = recurring_owner(true, rate);

		expect_correct<PvQueued<SimPlatform>>(p);
		expect_correct<PvTicket<SimPlatform>>(p);
		tunables.lock_steal = false;
		expect_correct<PvQueued<SimPlatform>>(p);
		tunables.lock_steal = true;
	}
}

TEST("sim: PV waits on a host whose kicks do not stick (issue 17)")
{
	HaltSoon h;
	const u32 rates[] = { 0, 50 };

	for (u32 rate : rates) {
		Params p = recurring_owner(false, rate);

		expect_correct<PvQueued<SimPlatform>>(p);
		expect_correct<PvTicket<SimPlatform>>(p);
	}
}

TEST("negative: a queue head halting on the owner byte is caught (nested waits)")
{
	HaltSoon h;
	Verdict v = expect_caught<PvQueuedOwnerWait<SimPlatform>>(
		recurring_owner(true, 100), "head waits on the owner byte, sticky kicks");

	EXPECT(v.lost_wakeups > 0, "caught, but never as a lost wake-up");
}

TEST("negative: a queue head halting on the owner byte is caught (kicks do not stick)")
{
	HaltSoon h;
	Verdict v = expect_caught<PvQueuedOwnerWait<SimPlatform>>(
		recurring_owner(false, 0), "head waits on the owner byte, no sticky kicks");

	EXPECT(v.lost_wakeups > 0, "caught, but never as a lost wake-up");
}

TEST("negative: pvticket on a host that drops kicks is caught")
{
	expect_caught<PvTicket<SimNoKick>>(overcommit(0), "dropped kicks (pvticket)");
}

/*
 * With the default stealing phase the simulator's short critical sections
 * are always stolen before a newcomer would queue and halt, so no kick is
 * ever needed; the control runs with one steal attempt, where waiters halt.
 */
TEST("negative: pvqueued on a host that drops kicks is caught")
{
	Tunables saved = tunables;

	tunables.steal_spins = 0;
	expect_caught<PvQueued<SimNoKick>>(overcommit(0), "dropped kicks (pvqueued)");
	tunables = saved;
}

TEST("negative: a non-atomic test-and-set is caught")
{
	expect_caught<RacyTas<SimPlatform>>(overcommit(0), "non-atomic test-and-set");
}

TEST("negative: the unfair lock fails the FIFO bound")
{
	Params p = overcommit(5);

	p.doorway_at_entry = true;
	expect_caught<UnfairTas<SimPlatform>>(p, "unfairness");
}

struct TracedCorrect {
	const Params &p;

	template <typename A>
	void operator()()
	{
		ttotal = TraceTotals{};
		expect_correct<A>(p);
		printf("#   %s: %llu contended acquisitions reported\n", A::name,
		       (unsigned long long)ttotal.begins);
		EXPECT(ttotal.begins > 0, "%s: no contention reported under 3x overcommit",
		       A::name);
		EXPECT(ttotal.begins == ttotal.ends, "%s: %llu begins, %llu ends", A::name,
		       (unsigned long long)ttotal.begins, (unsigned long long)ttotal.ends);
	}
};

TEST("contention reports: begin before the first wait, end once owned, every algorithm")
{
	Params p = overcommit(0);

	p.irq_permille = 20;
	p.seeds = 150;
	for_each_algorithm<SimTraced<>>(TracedCorrect{ p });

	/* And where the PV locks halt: queue heads and ticket waiters. */
	HaltSoon h;

	TracedCorrect{ p }.operator()<PvQueued<SimTraced<>>>();
	TracedCorrect{ p }.operator()<PvTicket<SimTraced<>>>();
}

struct TracedUncontended {
	template <typename A>
	void operator()()
	{
		Params p;

		p.nvcpus = 1;
		p.npcpus = 1;
		p.seeds = 5;
		ttotal = TraceTotals{};
		expect_correct<A>(p);
		EXPECT(ttotal.begins == 0, "%s: %llu contention reports with one vCPU",
		       A::name, (unsigned long long)ttotal.begins);
	}
};

TEST("contention reports: an uncontended lock() reports nothing")
{
	for_each_algorithm<SimTraced<>>(TracedUncontended{});
}

TEST("negative: a lock that does not report contention_begin is caught")
{
	expect_caught<PvQueued<SimTraced<true, false>>>(overcommit(0), "no begin (pvqueued)");
	expect_caught<PvTicket<SimTraced<true, false>>>(overcommit(0), "no begin (pvticket)");
}

TEST("negative: a lock that does not report contention_end is caught")
{
	expect_caught<PvQueued<SimTraced<false, true>>>(overcommit(0), "no end (pvqueued)");
	expect_caught<UnfairTas<SimTraced<false, true>>>(overcommit(0), "no end (unfair)");
}

TEST("ids: every id's code decodes back or reads 'cannot name', never 'halted'")
{
	u32 bad = 0, named = 0;

	for (u32 id = 0; id < (1U << 20); id++) {
		u8 c = owner_encode(id);
		u32 back = owner_decode(c);
		bool ok = c != owner_none && c != q_head_halted && c != code_head_halted &&
			  (back == id || (c == owner_unnamed && back == no_cpu &&
					  id >= owner_named_cpus));

		named += back == id;
		if (!ok && bad++ < 3)
			printf("#   id %u: code 0x%02x decodes to %d\n", id, c, (int)back);
	}
	printf("#   %u ids named, the rest 'cannot name'\n", named);
	EXPECT(bad == 0, "%u ids with a code that is not theirs or is reserved", bad);
	EXPECT(named == owner_named_cpus, "named %u ids", named);
	EXPECT(owner_decode(q_head_halted) == no_cpu, "head halted decodes to a CPU");
	EXPECT(PvQueued<SimLarge>::cpu_limit == (1U << 14) - 1, "pvqueued limit");
	EXPECT(PvTicket<SimLarge>::cpu_limit == 255 && BackoffTicket<SimLarge>::cpu_limit == 255 &&
	       PreemptTicket<SimLarge>::cpu_limit == 127 &&
	       UnfairTas<SimLarge>::cpu_limit == cpu_limit_none, "ticket limits");
}

namespace {

/* One CPU at a time, any id: for the table tests outside a run. */
struct SimOneId : SimIds<0, 1, 16000> {
	static inline u32 id;
	static u32 this_cpu() { return id; }
	static u32 nr_cpus() { return 16000; }
};

} /* namespace */

TEST("ids: an unnamed owner's hint names it, a colliding lock's does not")
{
	static LockWord locks[2];
	u32 bad = 0;

	for (u32 id = owner_named_cpus; id < 16000; id += 7) {
		SimOneId::id = id;
		OwnerHints<SimOneId>::acquired(&locks[0], owner_encode(id));
		if (OwnerHints<SimOneId>::owner_of(&locks[0], owner_encode(id)) != id)
			bad++;
	}
	EXPECT(bad == 0, "%u unnamed owners not found through the hint", bad);
	EXPECT(OwnerHints<SimOneId>::owner_of(&locks[0], owner_encode(5)) == 5,
	       "a named owner is its code");
	EXPECT(!OwnerHints<SimPlatform>::needed && OwnerHints<SimOneId>::needed,
	       "hints compiled in only where ids can be unnamed");
}

TEST("wait-node table: finds what the scan finds, every node of 16000 CPUs in use (half full)")
{
	using WN = WaitNodes<SimOneId>;
	constexpr u32 ncpus = SimOneId::max_cpus;
	static LockWord locks[997];
	static WaitNode *nodes[ncpus][max_nesting];
	u32 mismatches = 0, hashed = 0, n = 0;

	/* Every CPU waits on 4 locks, nested: the most the table ever holds. */
	for (u32 k = 0; k < ncpus; k++) {
		SimOneId::id = k;
		for (u32 lvl = 0; lvl < max_nesting; lvl++) {
			WaitNode *w = WN::get(&locks[(k * 5 + lvl) % 997], k % 251);

			nodes[k][lvl] = w;
			w->state = lvl % 2 ? node_halted : node_head_halted;
			hashed += WN::hash(w);
			n++;
		}
	}
	printf("#   %u of %u nodes hashed (the others: full windows)\n", hashed, n);
	for (u32 k = 0; k < ncpus; k++) {
		for (u32 lvl = 0; lvl < max_nesting; lvl++) {
			WaitNode *w = nodes[k][lvl];

			if (w->hashed != hash_in)
				continue;
			WaitNode *f = WN::find(w->lock, w->tag, w->state);
			WaitNode *o = WN::find_by_scan(w->lock, w->tag, w->state);

			/* Same lock, tag and state: either node will do. */
			if (!f || !o || f->lock != o->lock || f->tag != o->tag ||
			    f->state != o->state || f->lock != w->lock)
				mismatches++;
		}
	}
	EXPECT(mismatches == 0, "%u hashed nodes the table did not find", mismatches);
	EXPECT(hashed >= n * 99 / 100, "only %u of %u hashed at half load", hashed, n);
	EXPECT(!WN::find(&locks[0], 300, node_halted) && !WN::find_by_scan(&locks[0], 300, node_halted),
	       "a tag nobody waits with");
	/* Taken out again, innermost first as put() requires. */
	for (u32 k = 0; k < ncpus; k++) {
		SimOneId::id = k;
		for (u32 lvl = max_nesting; lvl-- > 0;)
			WN::put(nodes[k][lvl]);
	}
	u32 left = 0;

	for (u32 line = 0; line < SimOneId::max_cpus; line++)
		for (u64 e : SimOneId::percpu<WaitHashLine>(line).entry)
			left += e != 0;
	EXPECT(left == 0, "%u entries left after every put()", left);
}

TEST("sim: CPU ids 250..261 (named and unnamed owners and heads), every algorithm")
{
	Params p = overcommit(0);

	ycount = YieldCount{};
	for_each_algorithm<SimStraddle>(CorrectWith{ p });
	p.irq_permille = 20;
	expect_correct<PvQueued<SimStraddle>>(p);
	expect_correct<PvTicket<SimStraddle>>(p);
	EXPECT(ycount.bad_kicks == 0, "%llu kicks to ids that name no vCPU",
	       (unsigned long long)ycount.bad_kicks);
}

TEST("sim: CPU ids 1000 + 617 i on 16000 possible CPUs, every algorithm, FIFO where fair")
{
	ycount = YieldCount{};
	expect_correct<Ticket<SimLarge>>(overcommit(5));
	expect_correct<PvTicket<SimLarge>>(overcommit(5));
	expect_correct<Queued<SimLarge>>(overcommit(5));
	expect_correct<BackoffTicket<SimLarge>>(overcommit(5));
	tunables.lock_steal = false;
	expect_correct<PvQueued<SimLarge>>(overcommit(5));
	tunables.lock_steal = true;
	for_each_algorithm<SimLarge>(CorrectWith{ overcommit(0) });
	EXPECT(ycount.bad_kicks == 0, "%llu kicks to ids that name no vCPU",
	       (unsigned long long)ycount.bad_kicks);
}

TEST("sim: no lost wake-up with unnamed owners, nested waits and non-sticky kicks (ids 1000+)")
{
	HaltSoon h;
	const bool models[] = { true, false };

	for (bool sticky : models) {
		Params p = recurring_owner(sticky, sticky ? 100 : 0);

		expect_correct<PvQueued<SimLarge>>(p);
		expect_correct<PvTicket<SimLarge>>(p);
		expect_correct<PvQueued<SimStraddle>>(p);
	}
}

TEST("sim: directed yield reaches an owner the byte cannot name (ids 1000+)")
{
	Tunables saved = tunables;
	Params p = overcommit(0);

	/* Look at the owner often, halt late: waiters spin and yield. */
	tunables.preempt_check_mask = 3;
	tunables.spin_threshold = 1U << 12;
	p.cs_steps = 40;
	p.seeds = 100;

	ycount = YieldCount{};
	expect_correct<PvQueued<SimLarge>>(p);
	YieldCount q = ycount;

	ycount = YieldCount{};
	expect_correct<PvTicket<SimLarge>>(p);
	YieldCount t = ycount;

	ycount = YieldCount{};
	expect_correct<UnfairTas<SimLarge>>(p);
	YieldCount u = ycount;

	tunables = saved;
	printf("#   yields to the holder / elsewhere: pvqueued %llu / %llu, pvticket %llu / %llu, "
	       "unfair %llu / %llu\n",
	       (unsigned long long)q.to_holder, (unsigned long long)q.to_other,
	       (unsigned long long)t.to_holder, (unsigned long long)t.to_other,
	       (unsigned long long)u.to_holder, (unsigned long long)u.to_other);
	EXPECT(q.to_holder > 0 && q.to_holder >= 4 * q.to_other,
	       "pvqueued: yields to an unnamed holder %llu, elsewhere %llu",
	       (unsigned long long)q.to_holder, (unsigned long long)q.to_other);
	EXPECT(t.to_holder > 0 && t.to_holder >= 4 * t.to_other,
	       "pvticket: yields to an unnamed holder %llu, elsewhere %llu",
	       (unsigned long long)t.to_holder, (unsigned long long)t.to_other);
	EXPECT(u.to_holder > 0 && u.to_holder >= 4 * u.to_other,
	       "unfair: yields to an unnamed holder %llu, elsewhere %llu",
	       (unsigned long long)u.to_holder, (unsigned long long)u.to_other);
}

namespace {

/*
 * A wait-node table with every window full (entries of a key no lock has):
 * no waiter can hash itself, so none may halt where only a lookup wakes it.
 */
struct SimFullTable : SimPlatform {
	template <typename T>
	static T &percpu(u32 cpu)
	{
		if constexpr (std::is_same_v<T, WaitHashLine>) {
			static WaitHashLine full[max_cpus];

			for (u64 &e : full[cpu].entry)
				e = 0xffffffffULL;	/* key 0: never a lock's (odd) */
			return reinterpret_cast<T &>(full[cpu]);
		} else {
			return SimPlatform::percpu<T>(cpu);
		}
	}
};

} /* namespace */

TEST("wait-node table full: waiters spin or are kicked at once, none is lost")
{
	HaltSoon h;
	const bool models[] = { true, false };

	for (bool sticky : models) {
		Params p = recurring_owner(sticky, sticky ? 100 : 0);
		Verdict v = explore<PvTicket<SimFullTable>>(p);

		printf("#   pvticket, full table, %s kicks: %u seeds failed, halts %llu\n",
		       sticky ? "sticky" : "non-sticky", v.failed_seeds,
		       (unsigned long long)v.halts);
		EXPECT(v.failed_seeds == 0, "pvticket, full table: seed %llu: %s",
		       (unsigned long long)v.first_seed, v.first_reason);
		/* Interrupt handlers' waits are ticket waits too: no halt at all. */
		EXPECT(v.halts == 0, "pvticket halted %llu times with no table entry",
		       (unsigned long long)v.halts);
		expect_correct<PvQueued<SimFullTable>>(p);
	}
}

namespace {

/* One CPU at a time as in SimOneId, on 16 CPUs, and a log of the kicks. */
struct SimKickLog : SimPlatform {
	static inline u32 id;
	static inline u32 kicks[max_cpus];

	static u32 this_cpu() { return id; }
	static u32 nr_cpus() { return max_cpus; }
	static void kick(u32 cpu) { kicks[cpu]++; }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];

		return storage[cpu];
	}
};

} /* namespace */

/*
 * Issue 17's lost wake-up in the wait-node table, step by step. An
 * unlocker's lookup finds CPU 1's node for (l, 4) and is held up; CPU 1
 * takes l, and an interrupt handler on it waits on m with the same node.
 * The held-up unlocker claims the node (halted -> kicked) and is
 * interrupted before its kick by a handler that waits on m behind CPU 1.
 * The unlocker of m that serves CPU 1 must kick it all the same.
 */
TEST("wait-node table: a stale lookup's claim does not take a wake-up from its waker (issue 17)")
{
	using WN = WaitNodes<SimKickLog>;
	static LockWord l, m;

	SimKickLog::id = 1;
	WaitNode *n = WN::get(&l, 4);

	EXPECT(WN::hash(n), "hash (l, 4)");
	n->state = node_halted;

	SimKickLog::id = 0;		/* unlock of l: head = 4, slow */
	WaitNode *stale = WN::find(&l, 4, node_halted);

	EXPECT(stale == n, "the unlock of l finds CPU 1's node");

	SimKickLog::id = 1;		/* kicked by someone, takes l */
	n->state = node_running;
	WN::put(n);
	WaitNode *irq = WN::get(&m, 30);	/* an interrupt waits on m */

	EXPECT(irq == n, "the handler's wait uses the same node");
	EXPECT(WN::hash(irq), "hash (m, 30)");
	irq->state = node_halted;

	SimKickLog::id = 0;		/* the held-up unlock of l goes on */
	WN::kick_node(stale, node_halted);
	EXPECT(irq->state == node_kicked, "the stale claim moved the node");
	/* ... and its kick is held up by CPU 0's own handler, waiting on m. */
	SimKickLog::kicks[1] = 0;

	SimKickLog::id = 4;		/* the unlock of m whose head is 30 */
	WN::kick_halted(&m, 30, node_halted);
	EXPECT(SimKickLog::kicks[1] == 1, "the waiter on m was kicked %u times, not once",
	       SimKickLog::kicks[1]);

	/* Awake, it is left alone; a kick for another ticket never finds it. */
	SimKickLog::id = 1;
	irq->state = node_running;
	SimKickLog::id = 4;
	u32 before = SimKickLog::kicks[1];

	WN::kick_halted(&m, 30, node_halted);
	WN::kick_halted(&m, 31, node_halted);
	EXPECT(SimKickLog::kicks[1] == before, "a running waiter was kicked");

	/* A node in the state the waker wants wins over a kicked one. */
	SimKickLog::id = 2;
	WaitNode *a = WN::get(&m, 40);

	EXPECT(WN::hash(a), "hash (m, 40)");
	a->state = node_kicked;
	SimKickLog::id = 3;
	WaitNode *b = WN::get(&m, 40);

	EXPECT(WN::hash(b), "hash (m, 40) again");
	b->state = node_halted;
	EXPECT(WN::find(&m, 40, node_halted) == b && WN::find_by_scan(&m, 40, node_halted) == b,
	       "the halted node is found first");
	b->state = node_running;
	EXPECT(WN::find(&m, 40, node_halted) == a && WN::find_by_scan(&m, 40, node_halted) == a,
	       "else the kicked one");
	WN::put(b);
	SimKickLog::id = 2;
	WN::put(a);
	SimKickLog::id = 1;
	WN::put(irq);
}

/*
 * The same in a run: the seeds (of 1..3000) of issue 17's setting with
 * interrupts at 100 per mille whose schedules, at the fixed address of the
 * lock words (fixed_run_state()), lost that wake-up before the waker
 * kicked kicked nodes too. Seed 23: CPU 4's unlock finds CPU 1's node
 * for ticket 5, CPU 1 takes the lock and its handler waits on irq_lock
 * (ticket 31) in that node, CPU 4 claims it and its own handler waits on
 * irq_lock behind CPU 1; CPU 0's handler, unlocking irq_lock for ticket
 * 31, finds the node kicked and leaves it alone.
 */
TEST("sim: pvticket replays of a stale lookup's claim on a nested wait (issue 17)")
{
	HaltSoon h;
	Params p = recurring_owner(true, 100);
	const u64 seeds[] = { 23, 469, 1279, 1569 };

	p.seeds = 1;
	for (u64 seed : seeds) {
		Verdict v = explore<PvTicket<SimPlatform>>(p, seed);

		EXPECT(v.failed_seeds == 0, "seed %llu: %s", (unsigned long long)seed,
		       v.first_reason);
	}
}

namespace {

struct TrylockCheck {
	template <typename A>
	void operator()()
	{
		LockWord l = { 0 };

		EXPECT(A::value_unlocked(l.val), "%s: zero word is unlocked", A::name);
		EXPECT(A::trylock(&l), "%s: trylock of a free lock", A::name);
		EXPECT(A::is_locked(&l), "%s: is_locked after trylock", A::name);
		EXPECT(!A::value_unlocked(l.val), "%s: held word", A::name);
		EXPECT(!A::trylock(&l), "%s: trylock of a held lock", A::name);
		A::unlock(&l);
		EXPECT(!A::is_locked(&l), "%s: unlocked", A::name);
		EXPECT(A::value_unlocked(l.val), "%s: word after unlock", A::name);
		A::lock(&l);
		EXPECT(!A::trylock(&l), "%s: trylock while locked", A::name);
		A::unlock(&l);
		EXPECT(A::trylock(&l), "%s: trylock after unlock", A::name);
		A::unlock(&l);
		/* 300 rounds wrap the 8-bit tickets. */
		for (int i = 0; i < 300; i++) {
			A::lock(&l);
			A::unlock(&l);
		}
		EXPECT(A::value_unlocked(l.val), "%s: after ticket wrap", A::name);
		EXPECT(A::trylock(&l), "%s: trylock after wrap", A::name);
		A::unlock(&l);
	}
};

} /* namespace */

TEST("trylock: free succeeds, held fails, for every algorithm")
{
	for_each_algorithm<SimPlatform>(TrylockCheck{});
}

/* Seed 004's setting: several locks whose delays share one hash slot. */
TEST("backoff: colliding locks, both collision policies")
{
	static LockWord pool[4096];
	Params p = overcommit(0);
	u32 n = 0;
	u32 slot0 = lock_hash_slot(lock_hash(&pool[0]) | 1);

	for (u32 i = 1; i < 4096 && n < 3; i++)
		if (lock_hash_slot(lock_hash(&pool[i]) | 1) == slot0)
			p.colliding[++n] = &pool[i];
	p.colliding[0] = &pool[0];
	EXPECT(n == 3, "found %u colliding locks", n);
	p.nlocks = n + 1;

	Tunables saved = tunables;

	const Collision policies[] = { Collision::use_min, Collision::use_stored };

	for (Collision c : policies) {
		tunables.collision = c;
		expect_correct<BackoffTicket<SimPlatform>>(p);
	}

	/* The policies differ exactly on a collision. */
	bool hit;
	LockHashEntry &e = LockHash<SimPlatform, BackoffTicket<SimPlatform>>::entry(&pool[0], &hit);

	LockHash<SimPlatform, BackoffTicket<SimPlatform>>::store(&pool[0], e, 500);
	tunables.collision = Collision::use_min;
	EXPECT(BackoffTicket<SimPlatform>::start_delay(&pool[0]) == 500, "hit keeps delay");
	EXPECT(BackoffTicket<SimPlatform>::start_delay(p.colliding[1]) == tunables.min_delay,
	       "use_min: a colliding lock starts at min_delay");
	tunables.collision = Collision::use_stored;
	EXPECT(BackoffTicket<SimPlatform>::start_delay(p.colliding[1]) == 500,
	       "use_stored: a colliding lock starts at the stored delay");
	tunables = saved;
}

/* Seed 004's first version: one delay per CPU, whatever the lock. */
TEST("backoff: delay_slots=1 shares one delay between every lock")
{
	static LockWord a;
	using Delays = LockHash<SimPlatform, BackoffTicket<SimPlatform>>;
	Tunables saved = tunables;
	bool hit;

	/* Two locks in different slots of the full table... */
	static LockWord pool[256];
	LockWord *other = nullptr;

	for (LockWord &l : pool)
		if (lock_hash_slot(lock_hash(&l) | 1) != lock_hash_slot(lock_hash(&a) | 1)) {
			other = &l;
			break;
		}
	EXPECT(other, "no lock in another slot");
	tunables.collision = Collision::use_stored;
	Delays::store(&a, Delays::entry(&a, &hit), 700);
	EXPECT(BackoffTicket<SimPlatform>::start_delay(other) != 700,
	       "64 slots: another slot's lock starts from a's delay");
	/* ...share the only one with delay_slots=1. */
	tunables.delay_slots = 1;
	Delays::store(&a, Delays::entry(&a, &hit, 1), 900);
	EXPECT(BackoffTicket<SimPlatform>::start_delay(other) == 900,
	       "1 slot, use_stored: every lock starts from the last delay stored");
	tunables.collision = Collision::use_min;
	EXPECT(BackoffTicket<SimPlatform>::start_delay(other) == tunables.min_delay,
	       "1 slot, use_min: another lock is a collision");
	EXPECT(BackoffTicket<SimPlatform>::start_delay(&a) == 900, "1 slot: a's own delay");
	Params p = overcommit(0);

	expect_correct<BackoffTicket<SimPlatform>>(p);
	tunables = saved;
}

TEST("preemptable ticket: the timeout unit adapts to the hold time")
{
	u32 unit[2];
	const u32 cs[2] = { 2, 300 };

	for (int i = 0; i < 2; i++) {
		Params p = overcommit(0);

		p.cs_steps = cs[i];
		p.seeds = 20;
		expect_correct<PreemptTicket<SimPlatform>>(p);
		/* vCPU 0's table after the last seed: the learnt hand-over time. */
		unit[i] = PreemptTicket<SimPlatform>::unit(&rs.locks[0]);
		printf("#   critical section %u steps: unit %u steps (floor %u)\n", cs[i],
		       unit[i], PreemptTicket<SimPlatform>::min_unit);
	}
	EXPECT(unit[1] > unit[0], "a longer hold time must give a longer unit");
	EXPECT(unit[1] > PreemptTicket<SimPlatform>::min_unit, "unit never left its floor");
}

TEST("tunables: set by name; unknown keys and bad values are refused")
{
	Tunables t = default_tunables;

	EXPECT(tunable_set(t, "yield", 0) && !t.directed_yield, "yield:0");
	EXPECT(tunable_set(t, "steal", 0) && !t.lock_steal, "steal:0");
	EXPECT(tunable_set(t, "steal_spins", 512) && t.steal_spins == 512, "steal_spins:512");
	EXPECT(tunable_set(t, "spin", 4096) && t.spin_threshold == 4096, "spin:4096");
	EXPECT(tunable_set(t, "check", 63) && t.preempt_check_mask == 63, "check:63");
	EXPECT(tunable_set(t, "collision", 1) && t.collision == Collision::use_stored,
	       "collision:1");
	EXPECT(tunable_set(t, "delay_slots", 1) && t.delay_slots == 1, "delay_slots:1");
	Tunables before = t;

	EXPECT(!tunable_set(t, "yieldx", 1), "unknown key accepted");
	EXPECT(!tunable_set(t, "yiel", 1), "prefix of a key accepted");
	EXPECT(!tunable_set(t, "yield", 2), "yield:2 accepted");
	EXPECT(!tunable_set(t, "spin", 0), "spin:0 accepted");
	EXPECT(!tunable_set(t, "check", 100), "check:100 (not 2^n - 1) accepted");
	EXPECT(!tunable_set(t, "deep", 256), "deep:256 accepted");
	EXPECT(!tunable_set(t, "delay_slots", 0), "delay_slots:0 accepted");
	EXPECT(!tunable_set(t, "delay_slots", 3), "delay_slots:3 (not 2^n) accepted");
	EXPECT(!tunable_set(t, "delay_slots", 128), "delay_slots:128 accepted");
	EXPECT(!__builtin_memcmp(&before, &t, sizeof(t)), "a refused setting changed a knob");
}

int main(int argc, char **argv)
{
	if (argc > 2)
		only_seed = strtoull(argv[2], nullptr, 0);
	return harness::run_all(argc, argv);
}
