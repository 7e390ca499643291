// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: the deterministic simulator's scheduler. See sim.h for the model.
 */
#include "sim.h"
#include "../core/tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Fiber switch: save the callee-saved registers on the current stack, store
 * its pointer in *save, load new_sp and pop the other fiber's registers.
 * A new fiber's stack is laid out so that the first switch "returns" into
 * sim_fiber_start with the entry point in r12 and its argument in rbx.
 */
extern "C" void sim_switch(void **save, void *new_sp);
extern "C" void sim_fiber_start();
asm(R"(
	.text
	.globl sim_switch
	.type sim_switch, @function
sim_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size sim_switch, .-sim_switch

	.globl sim_fiber_start
	.type sim_fiber_start, @function
sim_fiber_start:
	movq %rbx, %rdi
	callq *%r12
	ud2
	.size sim_fiber_start, .-sim_fiber_start
)");

namespace pvlock {

Tunables tunables = default_tunables;
namespace sim {

namespace {

enum class State { runnable, halted, done };

constexpr unsigned long stack_size = 256 * 1024;

/* A store buffer entry: size bytes of value for addr. */
struct Pending {
	u8 *addr;
	u8 size;
	bool release;	/* Memory::weak: leaves only once it is the oldest */
	u8 val[8];
};

constexpr unsigned int buffer_size = 32;	/* a core's, roughly (Skylake: 56) */

struct Vcpu {
	Pending buf[buffer_size];
	u32 nbuf;
	void *sp;
	char *stack;
	State state;
	bool on_cpu;
	bool kick_pending;
	bool in_irq;
};

struct World {
	Config cfg;
	Vcpu vcpu[SimPlatform::max_cpus];
	void *sched_sp;
	u32 cur;
	u64 steps;
	u64 rng;
	Result res;
	void (*body)(u32, void *);
	void *arg;
	bool in_run;
} w;

struct PercpuArea {
	void *p;
	unsigned long size;
} percpu_areas[64];
unsigned int nr_percpu_areas;

u64 next_random()
{
	/* xorshift64*: small, fast, and the same on every machine. */
	w.rng ^= w.rng >> 12;
	w.rng ^= w.rng << 25;
	w.rng ^= w.rng >> 27;
	return w.rng * 0x2545f4914f6cdd1dULL;
}

u32 random_below(u32 n) { return static_cast<u32>(next_random() % n); }

bool chance(u32 permille) { return random_below(1000) < permille; }

u32 count_on_cpu()
{
	u32 n = 0;

	for (u32 i = 0; i < w.cfg.nvcpus; i++)
		n += w.vcpu[i].on_cpu;
	return n;
}

/* A random vCPU among those for which pred holds, or ~0U. */
template <typename Pred>
u32 pick(Pred pred)
{
	u32 cand[SimPlatform::max_cpus], n = 0;

	for (u32 i = 0; i < w.cfg.nvcpus; i++)
		if (pred(w.vcpu[i]))
			cand[n++] = i;
	return n ? cand[random_below(n)] : ~0U;
}

bool is_preempted(const Vcpu &v) { return v.state == State::runnable && !v.on_cpu; }

/* Write entry i of v's buffer to memory and take it out. */
void flush_entry(Vcpu &v, u32 i)
{
	Pending &e = v.buf[i];

	memcpy(e.addr, e.val, e.size);
	memmove(&v.buf[i], &v.buf[i + 1], (v.nbuf - i - 1) * sizeof(Pending));
	v.nbuf--;
}

void drain(Vcpu &v)
{
	for (u32 i = 0; i < v.nbuf; i++)
		memcpy(v.buf[i].addr, v.buf[i].val, v.buf[i].size);
	v.nbuf = 0;
}

bool overlaps(const Pending &e, const u8 *p, unsigned int size)
{
	return e.addr < p + size && p < e.addr + e.size;
}

/* Memory::weak: entry i may leave now (see sim.h). */
bool may_leave(const Vcpu &v, u32 i)
{
	if (v.buf[i].release && i)
		return false;
	for (u32 j = 0; j < i; j++)
		if (overlaps(v.buf[j], v.buf[i].addr, v.buf[i].size))
			return false;
	return true;
}

/* The scheduler's choice: one entry of one vCPU's buffer goes to memory. */
void flush_one()
{
	u32 c = pick([](const Vcpu &v) { return v.nbuf > 0; });

	if (c == ~0U)
		return;
	Vcpu &v = w.vcpu[c];
	u32 i = 0;

	if (w.cfg.memory == Memory::weak) {
		u32 cand[buffer_size], n = 0;

		for (u32 j = 0; j < v.nbuf; j++)
			if (may_leave(v, j))
				cand[n++] = j;
		i = cand[random_below(n)];	/* the oldest always may */
	}
	flush_entry(v, i);
	w.res.flushes++;
}

SiteInfo site_table[512];
unsigned int nr_sites;

bool in_core(const char *file)
{
	return strstr(file, "guest/core/") != nullptr;
}

bool ends_with(const char *s, const char *suffix)
{
	unsigned long a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

void record(const Site &s, Op op, Order o)
{
	if (!in_core(s.file))
		return;
	for (unsigned int i = 0; i < nr_sites; i++)
		if (site_table[i].site.line == s.line && !strcmp(site_table[i].site.file, s.file))
			return;
	if (nr_sites < sizeof(site_table) / sizeof(site_table[0]))
		site_table[nr_sites++] = { s, op, o };
}

bool is_mutated(const Site &s)
{
	const Mutation *m = w.cfg.mutate;

	if (!m || m->line != s.line || !ends_with(s.file, m->file))
		return false;
	w.res.mutated++;
	return true;
}

/* The order the site runs with: its own, or the mutation's. */
Order effective(const Site &s, Op op, Order o)
{
	if (w.cfg.record_sites)
		record(s, op, o);
	if (is_mutated(s))
		return w.cfg.mutate->order;
	return o;
}

void fiber_main(void *arg)
{
	u32 id = static_cast<u32>(reinterpret_cast<unsigned long>(arg));

	w.body(id, w.arg);
	/* Its buffered stores leave later, by the scheduler's flushes. */
	w.vcpu[id].state = State::done;
	w.vcpu[id].on_cpu = false;
	sim_switch(&w.vcpu[id].sp, w.sched_sp);
	abort();	/* a finished fiber is never resumed */
}

void prepare_fiber(u32 id)
{
	Vcpu &v = w.vcpu[id];

	if (!v.stack)
		v.stack = static_cast<char *>(aligned_alloc(64, stack_size));
	unsigned long top = reinterpret_cast<unsigned long>(v.stack + stack_size) & ~15UL;
	void **sp = reinterpret_cast<void **>(top - 64 - 8);

	/* Popped by sim_switch: r15 r14 r13 r12 rbx rbp, then ret. */
	sp[0] = nullptr;
	sp[1] = nullptr;
	sp[2] = nullptr;
	sp[3] = reinterpret_cast<void *>(&fiber_main);
	sp[4] = reinterpret_cast<void *>(static_cast<unsigned long>(id));
	sp[5] = nullptr;
	sp[6] = reinterpret_cast<void *>(&sim_fiber_start);
	v.sp = sp;
	v.state = State::runnable;
	v.on_cpu = false;
	v.kick_pending = false;
	v.in_irq = false;
	v.nbuf = 0;
}

/* Back to the scheduler; returns when the scheduler picks this vCPU again. */
void to_scheduler()
{
	sim_switch(&w.vcpu[w.cur].sp, w.sched_sp);
}

} /* namespace */

const char *memory_name(Memory m)
{
	switch (m) {
	case Memory::sc:
		return "sc";
	case Memory::tso:
		return "tso";
	case Memory::weak:
		return "weak";
	}
	return "?";
}

const SiteInfo *sites(unsigned int *n)
{
	*n = nr_sites;
	return site_table;
}

void clear_sites() { nr_sites = 0; }

const char *outcome_name(Outcome o)
{
	switch (o) {
	case Outcome::done:
		return "done";
	case Outcome::lost_wakeup:
		return "lost wake-up (every unfinished vCPU halted)";
	case Outcome::step_limit:
		return "step limit (livelock or starvation)";
	}
	return "?";
}

void register_percpu(void *storage, unsigned long size)
{
	if (nr_percpu_areas == sizeof(percpu_areas) / sizeof(percpu_areas[0])) {
		fprintf(stderr, "sim: too many per-CPU areas\n");
		abort();
	}
	percpu_areas[nr_percpu_areas++] = { storage, size };
}

Result run(const Config &cfg, void (*body)(u32, void *), void *arg)
{
	if (cfg.nvcpus == 0 || cfg.nvcpus > SimPlatform::max_cpus || cfg.npcpus == 0) {
		fprintf(stderr, "sim: bad config (%u vCPUs, %u pCPUs)\n", cfg.nvcpus,
			cfg.npcpus);
		abort();
	}
	/* A fresh machine: per-CPU data of an earlier (failed) run is gone. */
	for (unsigned int i = 0; i < nr_percpu_areas; i++)
		memset(percpu_areas[i].p, 0, percpu_areas[i].size);
	w.cfg = cfg;
	w.rng = cfg.seed * 0x9e3779b97f4a7c15ULL + 1;
	w.steps = 0;
	w.res = Result{};
	w.res.outcome = Outcome::done;
	w.body = body;
	w.arg = arg;
	for (u32 i = 0; i < cfg.nvcpus; i++)
		prepare_fiber(i);
	w.in_run = true;
	mem_active = cfg.memory != Memory::sc;
	w.cur = ~0U;

	for (;;) {
		/* Hand free physical CPUs to preempted vCPUs. */
		while (count_on_cpu() < cfg.npcpus) {
			u32 c = pick(is_preempted);

			if (c == ~0U)
				break;
			w.vcpu[c].on_cpu = true;
		}
		/* Preemption: a running vCPU makes way for a preempted one. */
		if (chance(cfg.preempt_permille)) {
			u32 in = pick(is_preempted);

			if (in != ~0U) {
				u32 out = pick([](const Vcpu &v) { return v.on_cpu; });

				w.vcpu[out].on_cpu = false;
				w.vcpu[in].on_cpu = true;
				w.res.preemptions++;
				drain(w.vcpu[out]);	/* the timer's VM exit */
			}
		}
		/*
		 * A store leaves a buffer. Draws from the PRNG only with a
		 * store buffer, so Memory::sc seeds replay as before.
		 */
		if (mem_active && chance(cfg.flush_permille))
			flush_one();
		u32 next = w.cur;

		if (next == ~0U || !w.vcpu[next].on_cpu || chance(cfg.switch_permille))
			next = pick([](const Vcpu &v) { return v.on_cpu; });
		if (next == ~0U) {
			bool all_done = true;

			for (u32 i = 0; i < cfg.nvcpus; i++)
				all_done &= w.vcpu[i].state == State::done;
			w.res.outcome = all_done ? Outcome::done : Outcome::lost_wakeup;
			break;
		}
		if (++w.steps > cfg.step_limit) {
			w.res.outcome = Outcome::step_limit;
			break;
		}
		w.cur = next;
		sim_switch(&w.sched_sp, w.vcpu[next].sp);
	}
	for (u32 i = 0; i < cfg.nvcpus; i++)
		drain(w.vcpu[i]);
	w.in_run = false;
	mem_active = false;
	w.res.steps = w.steps;
	return w.res;
}

void (*doorway_hook)(u32 vcpu);

void doorway()
{
	if (w.in_run && doorway_hook)
		doorway_hook(w.cur);
}

void (*irq_hook)(u32 vcpu);

void step()
{
	if (!w.in_run)
		return;
	to_scheduler();
	/* Interrupts draw from the PRNG only when enabled: seeds replay. */
	if (w.cfg.irq_permille && irq_hook && !w.vcpu[w.cur].in_irq &&
	    chance(w.cfg.irq_permille)) {
		u32 me = w.cur;

		w.vcpu[me].in_irq = true;
		w.res.irqs++;
		irq_hook(me);
		w.vcpu[me].in_irq = false;
	}
}

u32 current() { return w.in_run ? w.cur : 0; }
u32 nr_vcpus() { return w.in_run ? w.cfg.nvcpus : 1; }
u64 now() { return w.steps; }

bool preempted(u32 vcpu)
{
	step();
	return vcpu < w.cfg.nvcpus && is_preempted(w.vcpu[vcpu]);
}

void halt_while(const u8 *ptr, u8 val)
{
	Vcpu &v = w.vcpu[w.cur];

	/* The way into the halt (a hypercall's exit, say), one step or more. */
	for (u32 i = 0; i < w.cfg.wait_steps; i++)
		step();
	drain(v);	/* the hypercall (sim.h: why it drains) */
	if (v.kick_pending) {
		v.kick_pending = false;
		return;
	}
	if (__atomic_load_n(ptr, __ATOMIC_RELAXED) != val)
		return;
	v.state = State::halted;
	v.on_cpu = false;
	w.res.halts++;
	to_scheduler();
	/* Kicked: the kick is consumed by this wake-up. */
	v.kick_pending = false;
}

void kick(u32 vcpu)
{
	step();
	drain(w.vcpu[w.cur]);	/* the hypercall */
	w.res.kicks++;
	Vcpu &t = w.vcpu[vcpu];

	if (t.state == State::halted)
		t.state = State::runnable;	/* off CPU: preempted until placed */
	else if (t.state == State::runnable && w.cfg.sticky_kicks)
		t.kick_pending = true;
	else if (t.state == State::runnable)
		w.res.dropped_kicks++;
}

bool yield_to(u32 vcpu)
{
	step();
	drain(w.vcpu[w.cur]);	/* the hypercall */
	if (vcpu >= w.cfg.nvcpus || !is_preempted(w.vcpu[vcpu]))
		return false;
	w.vcpu[w.cur].on_cpu = false;
	w.vcpu[vcpu].on_cpu = true;
	w.res.yields++;
	to_scheduler();
	return true;
}

bool yield_any()
{
	step();
	drain(w.vcpu[w.cur]);	/* the hypercall */
	u32 c = pick(is_preempted);

	if (c == ~0U)
		return false;
	return yield_to(c);
}

/*
 * The store buffers. Each function runs right after the vCPU's scheduling
 * point, so what it does is one atomic step of that vCPU.
 */
bool mem_active;

void mem_load(const void *p, void *out, unsigned int size, Order o, Site s)
{
	Vcpu &v = w.vcpu[w.cur];
	const u8 *a = static_cast<const u8 *>(p);
	u8 *dst = static_cast<u8 *>(out);

	effective(s, Op::load, o);	/* loads are in order: nothing to weaken */
	memcpy(dst, a, size);
	/* Store forwarding: our own stores, oldest first, newest wins. */
	for (u32 i = 0; i < v.nbuf; i++) {
		const Pending &e = v.buf[i];

		if (!overlaps(e, a, size))
			continue;
		for (unsigned int b = 0; b < e.size; b++)
			if (e.addr + b >= a && e.addr + b < a + size)
				dst[e.addr + b - a] = e.val[b];
	}
}

bool mem_store(void *p, const void *val, unsigned int size, Order o, Site s)
{
	Vcpu &v = w.vcpu[w.cur];
	Order eff = effective(s, Op::store, o);

	/* seq_cst: xchg (or mov; mfence) on x86, stlr + the drain we model on arm64. */
	if (eff == Order::seq_cst) {
		drain(v);
		return false;
	}
	if (v.nbuf == buffer_size)
		flush_entry(v, 0);	/* full: the core stalls until one leaves */
	Pending &e = v.buf[v.nbuf++];

	e.addr = static_cast<u8 *>(p);
	e.size = static_cast<u8>(size);
	e.release = eff == Order::release;
	memcpy(e.val, val, size);
	w.res.buffered++;
	return true;
}

void mem_rmw(void *p, unsigned int size, Order o, Site s)
{
	Vcpu &v = w.vcpu[w.cur];
	Order eff = effective(s, Op::rmw, o);

	/* x86: every RMW is LOCKed, a full barrier whatever its Order. */
	if (w.cfg.memory == Memory::tso || eff == Order::seq_cst ||
	    eff == Order::acq_rel || eff == Order::release) {
		drain(v);
		return;
	}
	/* weak, relaxed or acquire: only our stores to these bytes go first. */
	u32 last = 0;
	const u8 *a = static_cast<const u8 *>(p);

	for (u32 i = 0; i < v.nbuf; i++)
		if (overlaps(v.buf[i], a, size))
			last = i + 1;
	while (last--)
		flush_entry(v, 0);
}

void mem_fence(Site s)
{
	if (w.cfg.record_sites)
		record(s, Op::fence, Order::seq_cst);
	if (is_mutated(s))
		return;		/* the negative control: no fence here */
	drain(w.vcpu[w.cur]);
}

} /* namespace sim */
} /* namespace pvlock */
