// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock: proof that guest/core builds as the kernel builds it.
 *
 * Compiled with -nostdinc -ffreestanding -fno-exceptions -fno-rtti and the
 * kernel's x86 code model (mk/core.mk), with a platform whose hooks are
 * extern "C" functions, the way the kernel's thin C layer provides them.
 * check-object then verifies that the object has no constructors, no
 * unwind tables and no undefined symbol other than those hooks.
 */
#include "../../guest/core/algorithms.h"

using namespace pvlock;

Tunables pvlock::tunables = default_tunables;

extern "C" {
u32 pvlock_check_this_cpu(void);
u32 pvlock_check_nr_cpus(void);
u64 pvlock_check_clock(void);
void pvlock_check_wait(const u8 *ptr, u8 val);
void pvlock_check_kick(u32 cpu);
bool pvlock_check_preempted(u32 cpu);
bool pvlock_check_yield_to(u32 cpu);
bool pvlock_check_yield_any(void);
void pvlock_check_hint_waiting_on(u32 cpu);
void pvlock_check_hint_holding(int delta);
void pvlock_check_contention_begin(LockWord *l);
void pvlock_check_contention_end(LockWord *l);
}

namespace {

struct CheckPlatform : BuiltinAtomics {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = 64;

	static u32 this_cpu() { return pvlock_check_this_cpu(); }
	static u32 nr_cpus() { return pvlock_check_nr_cpus(); }
	static void relax() { __builtin_ia32_pause(); }
	static u64 clock() { return pvlock_check_clock(); }

	template <typename T>
	static T &percpu(u32 cpu)
	{
		static T storage[max_cpus];

		return storage[cpu];
	}

	static void wait(const u8 *p, u8 v) { pvlock_check_wait(p, v); }
	static void kick(u32 c) { pvlock_check_kick(c); }
	static bool vcpu_is_preempted(u32 c) { return pvlock_check_preempted(c); }
	static bool yield_to(u32 c) { return pvlock_check_yield_to(c); }
	static bool yield_any() { return pvlock_check_yield_any(); }
	static void hint_waiting_on(u32 c) { pvlock_check_hint_waiting_on(c); }
	static void hint_holding(int d) { pvlock_check_hint_holding(d); }
	static void contention_begin(LockWord *l) { pvlock_check_contention_begin(l); }
	static void contention_end(LockWord *l) { pvlock_check_contention_end(l); }
};

struct Instantiate {
	template <typename A>
	void operator()()
	{
		static LockWord l;

		A::lock(&l);
		if (A::trylock(&l))
			A::unlock(&l);
		A::unlock(&l);
	}
};

} /* namespace */

extern "C" void pvlock_check_all(void)
{
	for_each_algorithm<CheckPlatform>(Instantiate{});
}
