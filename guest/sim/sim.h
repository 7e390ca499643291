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
 * What it does not model: weak memory. Every step is sequentially
 * consistent; the memory orders are checked by reasoning (the comments that
 * pair each barrier) and by the threaded tests under ThreadSanitizer.
 */
#ifndef PVLOCK_SIM_SIM_H
#define PVLOCK_SIM_SIM_H

#include "../core/atomic.h"
#include "../core/platform.h"

namespace pvlock {
namespace sim {

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
};

const char *outcome_name(Outcome o);

/* Run body(vcpu, arg) on cfg.nvcpus vCPUs until all return or it fails. */
Result run(const Config &cfg, void (*body)(u32 vcpu, void *arg), void *arg);

/* The scheduling point: called before every atomic step and by relax(). */
void step();

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
 * the simulated host. Memory orders are ignored (see above).
 */
struct SimPlatform {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = 16;

	template <typename T>
	static T load(const T *p, Order)
	{
		sim::step();
		return __atomic_load_n(p, __ATOMIC_RELAXED);
	}

	template <typename T>
	static void store(T *p, T v, Order)
	{
		sim::step();
		__atomic_store_n(p, v, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T xchg(T *p, T v, Order)
	{
		sim::step();
		T old = __atomic_exchange_n(p, v, __ATOMIC_RELAXED);

		sim::doorway();
		return old;
	}

	template <typename T>
	static bool cmpxchg(T *p, T *expected, T desired, Order)
	{
		sim::step();
		return __atomic_compare_exchange_n(p, expected, desired, false,
						   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T fetch_add(T *p, T v, Order)
	{
		sim::step();
		T old = __atomic_fetch_add(p, v, __ATOMIC_RELAXED);

		sim::doorway();
		return old;
	}

	template <typename T>
	static T fetch_or(T *p, T v, Order)
	{
		sim::step();
		return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
	}

	template <typename T>
	static T fetch_and(T *p, T v, Order)
	{
		sim::step();
		return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
	}

	static void full_fence() { sim::step(); }

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
