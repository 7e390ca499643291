/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvlock: the interface between the thin C layer (pvlock_main.c,
 * pvlock_bench.c), which owns every kernel API, and the freestanding C++
 * object (pvlock_algos.cpp), which holds the algorithms of guest/core
 * instantiated on the kernel platform.
 *
 * Valid C and C++; includes nothing from the kernel. In C a lock word is the
 * kernel's struct qspinlock (arch_spinlock_t), in C++ pvlock::LockWord: both
 * are one aligned 32-bit word, so the function pointers below have the same
 * ABI on both sides.
 */
#ifndef PVLOCK_GLUE_H
#define PVLOCK_GLUE_H

#include "hypercall-abi/pvlock_abi.h"

#ifdef __cplusplus
#include "guest/core/lock_word.h"
typedef pvlock::LockWord pvlock_word_t;
#define PVLOCK_EXTERN_C extern "C"
#else
struct qspinlock;
typedef struct qspinlock pvlock_word_t;
#define PVLOCK_EXTERN_C extern
#endif

/* One algorithm, as the C layer dispatches to it. */
struct pvlock_algo {
	const char *name;	/* as in pvlock=<name> */
	bool pv;		/* uses the PV hooks (wait/kick/yield) */
	bool bench_only;	/* never selectable as the kernel's spinlock */
	void (*lock)(pvlock_word_t *l);
	bool (*trylock)(pvlock_word_t *l);
	void (*unlock)(pvlock_word_t *l);
	bool (*is_locked)(pvlock_word_t *l);
	bool (*is_contended)(pvlock_word_t *l);
	bool (*value_unlocked)(pvlock_u32 val);
	/*
	 * The lock serves CPU ids 0 .. cpu_limit - 1; ~0U: no limit. The C
	 * layer must not choose it when nr_cpu_ids > cpu_limit (8-bit
	 * tickets: 255; ptticket: 127; pvqueued: 16383, its 14-bit tail).
	 */
	pvlock_u32 cpu_limit;
};

/* Provided by the C++ object. */
PVLOCK_EXTERN_C const struct pvlock_algo pvlock_algos[];
PVLOCK_EXTERN_C const unsigned int pvlock_nr_algos;

/*
 * Provided by the C layer for the kernel platform (kernel_platform.h).
 *
 * pvlock_cpu_number is a per-CPU variable: the C++ side reads it %gs-relative,
 * as this_cpu_read() does. pvlock_vcpu_area is this CPU's shared area, also
 * per-CPU, and so is pvlock_area_of, the area while it is registered (NULL
 * otherwise), which the C++ side reads for other CPUs (kernel_platform.h's
 * per_cpu_of()), as it reads the kernel's x86_cpu_to_apicid, the vCPU name
 * the host knows.
 */
PVLOCK_EXTERN_C pvlock_u32 pvlock_nr_cpus;

/* Set one of guest/core's knobs by name (tunables.h); false if refused. */
PVLOCK_EXTERN_C bool pvlock_tunable_set(const char *key, pvlock_u32 value);
/* The names it takes, space-separated. */
PVLOCK_EXTERN_C const char *const pvlock_tunable_keys;

/* u8 in C, pvlock_u8 in C++: both unsigned char, spelled so checkpatch knows it. */
PVLOCK_EXTERN_C void pvlock_k_wait(const unsigned char *ptr, unsigned char val);
PVLOCK_EXTERN_C void pvlock_k_kick(pvlock_u32 cpu);
PVLOCK_EXTERN_C bool pvlock_k_yield(pvlock_u32 cpu);
/* For a CPU with no shared area (stock-host mode: steal time). */
PVLOCK_EXTERN_C bool pvlock_k_vcpu_is_preempted(pvlock_u32 cpu);

/*
 * The kernel's lock:contention_begin/end tracepoints, as upstream's
 * queued_spin_lock_slowpath() emits them; called from the slow path only,
 * and (with CONFIG_JUMP_LABEL) only while the tracepoint is enabled: the C++
 * call sites test the tracepoint's static key inline (kernel_platform.h),
 * the key being PVLOCK_TRACEPOINT_KEY_OFFSET bytes into struct tracepoint
 * (after its name pointer; pvlock_main.c asserts it).
 */
PVLOCK_EXTERN_C void pvlock_k_contention_begin(pvlock_word_t *l);
PVLOCK_EXTERN_C void pvlock_k_contention_end(pvlock_word_t *l);
#define PVLOCK_TRACEPOINT_KEY_OFFSET 8

#endif /* PVLOCK_GLUE_H */
