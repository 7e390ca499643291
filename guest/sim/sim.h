/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the deterministic simulator platform.
 *
 * vCPUs are fibers on one thread; a scheduler decides, at every atomic step
 * and every relax(), which vCPU runs the next step, from a seeded PRNG, so a
 * seed replays a schedule exactly. It models a host with npcpus physical CPUs:
 * at most npcpus vCPUs are "on a CPU"; a runnable vCPU that is not is
 * preempted (vcpu_is_preempted() is true), and at any step the scheduler may
 * preempt a running vCPU in favour of a preempted one. wait() halts a vCPU
 * (off its CPU, not preempted) until kick(); a kick that arrives before the
 * halt is kept pending, as the host does, and the next wait() of that vCPU
 * takes it, whichever wait that is (KVM's pv_unhalted). With
 * Config::sticky_kicks off, a kick that finds its target running is
 * dropped: only the check-and-halt of wait(), atomic here, protects a
 * waiter then. wait() has no bound here on purpose: a lost wake-up is then
 * a state where no vCPU can run, which the scheduler reports instead of
 * hiding it behind a timeout.
 *
 * Interrupts: with Config::irq_permille, a running vCPU is interrupted at a
 * scheduling point (any atomic step, relax(), and the entry of wait(), i.e.
 * between a waiter's last re-check and its halt) and runs irq_hook on its
 * own stack, as a handler that takes another lock would; the hook's own
 * waits consume a pending kick as any wait does. Handlers do not nest.
 *
 * Memory (Config::memory, docs/memory-model.md). Memory::sc, the default:
 * every step is sequentially consistent and the orders are ignored; it finds
 * bad schedules, never a missing fence. Memory::tso is x86-TSO: each vCPU
 * has a FIFO store buffer; a plain, relaxed or release store goes into it,
 * a load reads its own buffer first (byte by byte: store forwarding), then
 * memory; a locked RMW (xchg, cmpxchg, fetch_*, whatever its Order), a
 * full_fence() and a seq_cst store (xchg or mov+mfence on x86 compilers)
 * drain the buffer first and act on memory at once. Acquire loads and
 * release stores are plain, as on x86. Memory::weak is a weaker model,
 * for the day the layer runs on arm64, and models the store side only:
 * buffered stores leave in any order except that stores to overlapping
 * bytes keep their order (coherence) and a release store leaves only once
 * every older store has; a seq_cst, acq_rel or release RMW and a fence
 * drain the buffer, a relaxed or acquire RMW only the stores that overlap
 * it; loads are still performed in program order, so load->load and
 * load->store reordering (what acquire forbids on arm64) is not modelled.
 *
 * The scheduler may, at any step, write the oldest (weak: any leavable)
 * entry of any vCPU's buffer to memory (Config::flush_permille), a choice
 * drawn from the seed like any other, so failures replay. A vCPU's buffer
 * is drained where it leaves guest mode: wait(), kick(), yield_to(),
 * yield_any() (a hypercall) and a preemption (the host's timer exit). Is
 * that true? Not because a VM exit serialises: VMCALL is not among the
 * SDM's serialising instructions, and we rely on nothing about VMX
 * transitions. It is true because the host's side of each of these runs on
 * the same physical CPU, and executes LOCKed RMWs and full barriers before
 * anything another vCPU can see (the halt path's set_current_state() and
 * re-check of the value, kvm_vcpu_kick()'s barriers before its IPI, the
 * scheduler's rq lock on a preemption), and on x86 no store passes a
 * LOCKed instruction: our buffered stores are in memory before the host
 * halts us, wakes the target or runs another vCPU here. On arm64 the same
 * holds through the host's smp_mb()s and the exception entry's context
 * synchronisation plus those barriers. The guest-side steps before the
 * exit (Config::wait_steps) drain nothing. In user space the futex
 * syscalls take the futex hash bucket's spinlock, a LOCKed RMW. vcpu_is_preempted() and the
 * hints are reads and writes of shared memory, no exit: they drain nothing.
 *
 * Call sites (Site, from default arguments of every atomic) are recorded
 * with Config::record_sites, and Config::mutate drops the full_fence() or
 * demotes the order at one site: the negative controls of
 * selftests/core/test_sim_memory.cpp, with no edit of the algorithms.
 */
#ifndef PVLOCK_SIM_SIM_H
#define PVLOCK_SIM_SIM_H

#include "../core/atomic.h"
#include "../core/platform.h"

namespace pvlock {
namespace sim {

enum class Memory : u8 {
	sc,		/* sequentially consistent: no store buffer */
	tso,		/* x86-TSO: FIFO store buffer per vCPU */
	weak,		/* arm64-like store side: see the top */
};

const char *memory_name(Memory m);

/* Where an atomic is called: the algorithm's source location. */
struct Site {
	const char *file;
	const char *func;
	int line;
};

enum class Op : u8 { load, store, rmw, fence };

/* A call site seen by a run with Config::record_sites. */
struct SiteInfo {
	Site site;
	Op op;
	Order order;
};

/* Weaken one site: drop its fence, or give it a weaker order. */
struct Mutation {
	const char *file;	/* compared by suffix: "core/ticket.h" */
	int line;
	bool drop_fence;
	Order order;		/* the demoted order (not for a fence) */
};

/* Sites recorded since the last clear, in order of first execution. */
const SiteInfo *sites(unsigned int *n);
void clear_sites();

struct Config {
	u32 nvcpus = 4;
	u32 npcpus = 2;
	u64 seed = 1;
	u32 preempt_permille = 20;	/* chance per step of a preemption */
	u32 switch_permille = 300;	/* chance per step of switching vCPU */
	u64 step_limit = 2000000;	/* then: livelock or starvation */
	bool sticky_kicks = true;	/* a kick before the halt is kept */
	u32 irq_permille = 0;		/* chance per step of an interrupt */
	u32 wait_steps = 1;		/* scheduling points in wait() before
					   its check-and-halt: the way in */
	Memory memory = Memory::sc;	/* see the top */
	u32 flush_permille = 100;	/* chance per step of a buffer flush */
	const Mutation *mutate = nullptr;	/* one site weakened, or none */
	bool record_sites = false;	/* fill sites() with what runs */
};

enum class Outcome {
	done,		/* every vCPU returned */
	lost_wakeup,	/* every unfinished vCPU is halted: nobody can kick */
	step_limit,	/* still running after step_limit steps */
};

struct Result {
	Outcome outcome;
	u64 steps;
	u64 preemptions, halts, kicks, yields;
	u64 irqs;		/* interrupts run (irq_hook calls) */
	u64 dropped_kicks;	/* kicks that found a running vCPU, not sticky */
	u64 buffered;		/* stores that went through a store buffer */
	u64 flushes;		/* entries the scheduler wrote out one by one */
	u64 mutated;		/* executions of the mutated site */
};

const char *outcome_name(Outcome o);

/* Run body(vcpu, arg) on cfg.nvcpus vCPUs until all return or it fails. */
Result run(const Config &cfg, void (*body)(u32 vcpu, void *arg), void *arg);

/* The scheduling point: called before every atomic step and by relax(). */
void step();

/*
 * The store buffers (Memory::tso, weak); mem_active is true inside a run
 * with one. mem_store returns false when the store goes to memory at once
 * (the caller writes it); mem_rmw drains what the RMW orders, after which
 * the caller performs it on memory.
 */
extern bool mem_active;
void mem_load(const void *p, void *out, unsigned int size, Order o, Site s);
bool mem_store(void *p, const void *v, unsigned int size, Order o, Site s);
void mem_rmw(void *p, unsigned int size, Order o, Site s);
void mem_fence(Site s);

u32 current();
u32 nr_vcpus();
u64 now();
bool preempted(u32 vcpu);
void halt_while(const u8 *ptr, u8 val);
void kick(u32 vcpu);
bool yield_to(u32 vcpu);
bool yield_any();
void register_percpu(void *storage, unsigned long size);

/*
 * Called after every fetch_add and xchg: the RMWs by which a waiter enters a
 * ticket or MCS queue (its doorway). A fairness test counts the acquisitions
 * that overtake a waiter after its doorway; nullptr disables the hook.
 */
extern void (*doorway_hook)(u32 vcpu);
void doorway();

/* The interrupt handler of Config::irq_permille; nullptr: no interrupts. */
extern void (*irq_hook)(u32 vcpu);

} /* namespace sim */

/*
 * The platform: atomics wrapped with a scheduling point, PV hooks served by
 * the simulated host. Under Memory::sc the orders are ignored; under tso and
 * weak each access goes through the vCPU's store buffer (sim::mem_*), and
 * every atomic carries its call site (file, function, line: default
 * arguments, so the algorithms' calls are unchanged), which is how a
 * negative control names the one fence or order it removes.
 */
#define PVLOCK_SIM_SITE_ARGS                                                  \
	const char *file = __builtin_FILE(), const char *func = __builtin_FUNCTION(), \
	int line = __builtin_LINE()
#define PVLOCK_SIM_SITE sim::Site{ file, func, line }

struct SimPlatform {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = 16;

	template <typename T>
	static T load(const T *p, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (!sim::mem_active)
			return __atomic_load_n(p, __ATOMIC_RELAXED);
		T v;

		sim::mem_load(p, &v, sizeof(T), o, PVLOCK_SIM_SITE);
		return v;
	}

	template <typename T>
	static void store(T *p, T v, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active && sim::mem_store(p, &v, sizeof(T), o, PVLOCK_SIM_SITE))
			return;		/* in the store buffer */
		__atomic_store_n(p, v, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T xchg(T *p, T v, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_rmw(p, sizeof(T), o, PVLOCK_SIM_SITE);
		T old = __atomic_exchange_n(p, v, __ATOMIC_RELAXED);

		sim::doorway();
		return old;
	}

	template <typename T>
	static bool cmpxchg(T *p, T *expected, T desired, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_rmw(p, sizeof(T), o, PVLOCK_SIM_SITE);
		return __atomic_compare_exchange_n(p, expected, desired, false,
						   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T fetch_add(T *p, T v, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_rmw(p, sizeof(T), o, PVLOCK_SIM_SITE);
		T old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);

		sim::doorway();
		return old;
	}

	template <typename T>
	static T fetch_or(T *p, T v, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_rmw(p, sizeof(T), o, PVLOCK_SIM_SITE);
		return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T fetch_and(T *p, T v, Order o, PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_rmw(p, sizeof(T), o, PVLOCK_SIM_SITE);
		return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
	}

	static void full_fence(PVLOCK_SIM_SITE_ARGS)
	{
		sim::step();
		if (sim::mem_active)
			sim::mem_fence(PVLOCK_SIM_SITE);
	}

	static u32 this_cpu() { return sim::current(); }
	static u32 nr_cpus() { return sim::nr_vcpus(); }
	static void relax() { sim::step(); }
	static u64 clock() { return sim::now(); }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];
		static bool registered =
			(sim::register_percpu(storage, sizeof(storage)), true);

		(void)registered;
		return storage[cpu];
	}

	static void wait(const u8 *ptr, u8 val) { sim::halt_while(ptr, val); }
	static void kick(u32 cpu) { sim::kick(cpu); }
	static bool vcpu_is_preempted(u32 cpu) { return sim::preempted(cpu); }
	static bool yield_to(u32 cpu) { return sim::yield_to(cpu); }
	static bool yield_any() { return sim::yield_any(); }
	static void hint_waiting_on(u32) {}
	static void hint_holding(int) {}
	/* Checked by test_sim's SimTraced, which overrides them. */
	static void contention_begin(LockWord *) {}
	static void contention_end(LockWord *) {}
};

} /* namespace pvlock */

#endif /* PVLOCK_SIM_SIM_H */
