/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvlock: the kernel platform of guest/core (see guest/core/platform.h).
 *
 * Freestanding C++: no kernel header. Whatever needs the kernel goes through
 * the C layer (pvlock_glue.h): hypercalls, the CPU -> APIC ID map, the shared
 * areas. The hot paths need no call: the CPU number and this CPU's shared
 * area are per-CPU variables of the C layer, read and written %gs-relative
 * exactly as this_cpu_read()/this_cpu_add() do on x86_64 (the per-CPU
 * section is zero-based, so a per-CPU symbol is its own %gs offset).
 *
 * Everything here is in an unnamed namespace: every algorithm instantiated on
 * KernelPlatform then has internal linkage, so g++ emits it in plain .text
 * and .bss instead of COMDAT sections the kernel linker script does not know.
 */
#ifndef PVLOCK_KERNEL_PLATFORM_H
#define PVLOCK_KERNEL_PLATFORM_H

#include "guest/core/atomic.h"
#include "guest/core/platform.h"
#include "guest/kernel/pvlock_glue.h"

#ifndef PVLOCK_MAX_CPUS
#error "PVLOCK_MAX_CPUS (CONFIG_NR_CPUS) comes from scripts/guest/Makefile.cxx"
#endif

/*
 * Per-CPU variables of the C layer and the kernel: their %gs offsets for
 * this CPU's copy, per_cpu_of() below for another CPU's.
 */
extern "C" pvlock::u32 pvlock_cpu_number;
extern "C" struct pvlock_vcpu_area pvlock_vcpu_area;
extern "C" struct pvlock_vcpu_area *pvlock_area_of;
extern "C" pvlock::u32 x86_cpu_to_apicid;

/*
 * The kernel's tracepoints lock:contention_begin/end (struct tracepoint, whose
 * static key is PVLOCK_TRACEPOINT_KEY_OFFSET bytes in). Only their addresses
 * are used, in the jump-label entries of tracepoint_on<>() below;
 * scripts/guest/check-cxx-object admits these two undefined symbols.
 */
extern "C" char __tracepoint_contention_begin[];
extern "C" char __tracepoint_contention_end[];

namespace pvlock {
namespace {

template <typename T>
struct alignas(64) PerCpuSlot {
	T v;
};

/*
 * percpu<T>(cpu) storage: one per-CPU variable per T, placed in the
 * kernel's per-CPU section as DEFINE_PER_CPU places its variables, so
 * setup_per_cpu_areas() gives every possible CPU its own copy, on that
 * CPU's node, and NR_CPUS costs nothing but the offsets table. CPU cpu's
 * copy is __per_cpu_offset[cpu] bytes from the symbol (zero-based per-CPU
 * section), which is what per_cpu_ptr() computes; the integer arithmetic
 * keeps the compiler from reasoning about the symbol's bounds, as
 * RELOC_HIDE() does. Only CPUs below nr_cpu_ids have a copy: callers index
 * by CPU id or by a hash reduced modulo nr_cpus(), never by max_cpus.
 * Trivial types only: the section is an image copied to every CPU, zero.
 *
 * g++ ignores a section attribute on a template instantiation (the copy
 * would land in .bss and every CPU's "copy" would be a wild address), so
 * the template is only declared here and each T gets an explicit
 * specialization, which g++ does place, through PVLOCK_PERCPU() in
 * pvlock_algos.cpp. A T without one is used but never defined: the build
 * fails. scripts/guest/check-cxx-object checks the placement on the object.
 */
extern "C" unsigned long __per_cpu_offset[];

template <typename T>
extern PerCpuSlot<T> percpu_var;

#define PVLOCK_PERCPU(...)							\
	template <>								\
	__attribute__((__section__(".data..percpu")))				\
	PerCpuSlot<__VA_ARGS__> percpu_var<__VA_ARGS__> {}

/*
 * static_key_false() on tracepoint Tp's key, as the kernel inlines it. With
 * CONFIG_JUMP_LABEL the site is a 5-byte NOP plus a __jump_table entry
 * (code, target and key, each relative to the entry's own field, the
 * HAVE_ARCH_JUMP_LABEL_RELATIVE layout of x86_64; key's low bits 0: the
 * branch is unlikely and not in init text). jump_label_init() and every
 * later static_key_enable() of the tracepoint rewrite the NOP into a jump
 * to "on", exactly as for the C sites of trace_contention_begin(); the
 * kernel checks that the bytes it replaces are the NOP it expects. Without
 * CONFIG_JUMP_LABEL the kernel patches nothing: the C layer decides (its
 * trace_contention_*() read the key). Without CONFIG_TRACEPOINTS there is
 * nothing to emit.
 */
template <char (*Tp)[]>
inline __attribute__((__always_inline__)) bool tracepoint_on()
{
#if defined(PVLOCK_HAVE_JUMP_LABEL) && defined(PVLOCK_HAVE_TRACEPOINTS)
	asm goto("1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"
		 ".pushsection __jump_table, \"aw\"\n\t"
		 ".balign 8\n\t"
		 ".long 1b - .\n\t"
		 ".long %l[on] - .\n\t"
		 ".quad %c0 + %c1 - .\n\t"
		 ".popsection"
		 : : "i"(Tp), "i"(PVLOCK_TRACEPOINT_KEY_OFFSET) : : on);
	return false;
on:
	return true;
#elif defined(PVLOCK_HAVE_TRACEPOINTS)
	return true;
#else
	return false;
#endif
}

struct KernelPlatform : BuiltinAtomics {
	static constexpr bool pv = true;
	static constexpr u32 max_cpus = PVLOCK_MAX_CPUS;

	static inline u32 this_cpu()
	{
		u32 cpu;

		asm volatile("movl %%gs:%P1, %0" : "=r"(cpu) : "i"(&pvlock_cpu_number));
		return cpu;
	}

	static inline u32 nr_cpus()
	{
		return __atomic_load_n(&pvlock_nr_cpus, __ATOMIC_RELAXED);
	}

	/* cpu_relax(): PAUSE, which the host sees (pause-loop exiting). */
	static inline void relax()
	{
		asm volatile("pause" ::: "memory");
	}

	static inline u64 clock()
	{
		u32 lo, hi;

		asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
		return (static_cast<u64>(hi) << 32) | lo;
	}

	template <typename T>
	static inline T &percpu(u32 cpu)
	{
		static_assert(__is_trivial(T), "percpu<T>: T must be trivial (no constructor)");
		unsigned long at = reinterpret_cast<unsigned long>(&percpu_var<T>);

		return reinterpret_cast<PerCpuSlot<T> *>(at + __per_cpu_offset[cpu])->v;
	}

	/*
	 * CPU cpu's copy of a per-CPU variable of the C side or the kernel,
	 * what READ_ONCE(per_cpu(var, cpu)) reads: the address percpu<T>()
	 * computes for ours.
	 */
	template <typename T>
	static inline T per_cpu_of(T &var, u32 cpu)
	{
		unsigned long at = reinterpret_cast<unsigned long>(&var);

		return __atomic_load_n(reinterpret_cast<T *>(at + __per_cpu_offset[cpu]),
				       __ATOMIC_RELAXED);
	}

	static inline void wait(const u8 *ptr, u8 val)
	{
		pvlock_k_wait(ptr, val);
	}

	static inline void kick(u32 cpu)
	{
		pvlock_k_kick(cpu);
	}

	static inline bool vcpu_is_preempted(u32 cpu)
	{
		const struct pvlock_vcpu_area *a = per_cpu_of(pvlock_area_of, cpu);

		if (a)
			return __atomic_load_n(&a->preempted, __ATOMIC_RELAXED) &
			       PVLOCK_PREEMPTED;
		/* no area: stock-host mode's steal time, else false */
		return pvlock_k_vcpu_is_preempted(cpu);
	}

	static inline bool yield_to(u32 cpu)
	{
		return pvlock_k_yield(cpu);
	}

	static inline bool yield_any()
	{
		return pvlock_k_yield(no_cpu);
	}

	/* Hints live in this CPU's shared area; plain per-CPU stores. */
	static inline void hint_waiting_on(u32 cpu)
	{
		u32 apicid = cpu == no_cpu ? static_cast<u32>(PVLOCK_VCPU_ANY) :
					     per_cpu_of(x86_cpu_to_apicid, cpu);

		asm volatile("movl %1, %%gs:%P0"
			     : : "i"(&pvlock_vcpu_area.wait_vcpu), "r"(apicid)
			     : "memory");
	}

	/*
	 * lock:contention_begin/end, through the C layer (pvlock_main.c), and
	 * only while the tracepoint is on: tracepoint_on<>() is the test that
	 * trace_contention_begin() makes, inlined here, so with the tracepoints
	 * off the slow path pays a NOP, not a call. PVLOCK_NO_CONTENTION_HOOKS
	 * (benchmark variant only: make PVLOCK_NO_CONTENTION_HOOKS=1,
	 * scripts/guest/contention-cost) compiles the sites out, to measure
	 * what they cost with the tracepoints off.
	 */
	static inline void contention_begin(LockWord *l)
	{
#ifndef PVLOCK_NO_CONTENTION_HOOKS
		if (tracepoint_on<&__tracepoint_contention_begin>())
			pvlock_k_contention_begin(l);
#else
		(void)l;
#endif
	}

	static inline void contention_end(LockWord *l)
	{
#ifndef PVLOCK_NO_CONTENTION_HOOKS
		if (tracepoint_on<&__tracepoint_contention_end>())
			pvlock_k_contention_end(l);
#else
		(void)l;
#endif
	}

	static inline void hint_holding(int delta)
	{
		asm volatile("addl %1, %%gs:%P0"
			     : : "i"(&pvlock_vcpu_area.locks_held), "ri"(delta)
			     : "memory", "cc");
	}
};

} /* namespace */
} /* namespace pvlock */

#endif /* PVLOCK_KERNEL_PLATFORM_H */
