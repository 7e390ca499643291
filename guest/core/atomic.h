/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the atomic operations every lock algorithm uses, over the compiler's
 * __atomic builtins. Freestanding: no <atomic>, no library.
 *
 * Atomics are functions on plain memory (as READ_ONCE()/cmpxchg() are in the
 * kernel), not an Atomic<T> object type, because the lock words are shared
 * with C (arch_spinlock_t is a u32) and several algorithms operate on one byte
 * or one half of the 32-bit word. A platform exposes them as static members
 * (BuiltinAtomics below); the deterministic test platform wraps each one with
 * a scheduling point, which is how it can preempt a vCPU at any atomic step.
 */
#ifndef PVLOCK_CORE_ATOMIC_H
#define PVLOCK_CORE_ATOMIC_H

#include "types.h"

namespace pvlock {

/* Memory orders, named as in C11 / the LKMM acquire-release vocabulary. */
enum class Order : int {
	relaxed = __ATOMIC_RELAXED,
	acquire = __ATOMIC_ACQUIRE,
	release = __ATOMIC_RELEASE,
	acq_rel = __ATOMIC_ACQ_REL,
	seq_cst = __ATOMIC_SEQ_CST,
};

/* The success order of a compare-and-swap implies this failure order. */
constexpr int failure_order(Order o)
{
	return o == Order::acq_rel ? __ATOMIC_ACQUIRE :
	       o == Order::release ? __ATOMIC_RELAXED : static_cast<int>(o);
}

/*
 * The hardware atomics. Every platform but the simulator uses these as they
 * are; x86 turns each RMW into one LOCK-prefixed instruction, and every
 * acquire load / release store into a plain MOV.
 */
struct BuiltinAtomics {
	template <typename T>
	static inline T load(const T *p, Order o)
	{
		return __atomic_load_n(p, static_cast<int>(o));
	}

	template <typename T>
	static inline void store(T *p, T v, Order o)
	{
		__atomic_store_n(p, v, static_cast<int>(o));
	}

	template <typename T>
	static inline T xchg(T *p, T v, Order o)
	{
		return __atomic_exchange_n(p, v, static_cast<int>(o));
	}

	/* On failure, *expected is updated with the value found. */
	template <typename T>
	static inline bool cmpxchg(T *p, T *expected, T desired, Order o)
	{
		return __atomic_compare_exchange_n(p, expected, desired, false,
						   static_cast<int>(o),
						   failure_order(o));
	}

	template <typename T>
	static inline T fetch_add(T *p, T v, Order o)
	{
		return __atomic_fetch_add(p, v, static_cast<int>(o));
	}

	template <typename T>
	static inline T fetch_or(T *p, T v, Order o)
	{
		return __atomic_fetch_or(p, v, static_cast<int>(o));
	}

	template <typename T>
	static inline T fetch_and(T *p, T v, Order o)
	{
		return __atomic_fetch_and(p, v, static_cast<int>(o));
	}

	/* smp_mb(): orders earlier stores before later loads (Dekker). */
	static inline void full_fence()
	{
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_ATOMIC_H */
