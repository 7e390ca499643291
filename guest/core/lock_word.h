/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: the 32-bit lock word every algorithm uses, and the verbs each one
 * provides.
 *
 * Every algorithm fits the kernel's 4-byte arch_spinlock_t, so the kernel can
 * switch its spinlocks among them at boot. The word is zero when a lock is
 * initialised and, for every algorithm, an unlocked, uncontended lock reads
 * as a value for which value_unlocked() is true.
 *
 * Verbs (the same for every algorithm, as in Concurrency Kit), all static
 * members of the algorithm's class template Algo<P>:
 *   lock(LockWord *)            acquire, spinning/halting as the algorithm says
 *   trylock(LockWord *) -> bool acquire only if free right now
 *   unlock(LockWord *)          release; the caller holds the lock
 *   is_locked(const LockWord *) -> bool
 *   is_contended(const LockWord *) -> bool  someone is waiting
 *   value_unlocked(u32 v) -> bool  v (a copy of the word) is an unlocked lock;
 *                               used by lockref-style cmpxchg users
 *   name                        constexpr const char *, as in pvlock=<name>
 *   cpu_limit                   constexpr u32: the lock serves CPU ids
 *                               0 .. cpu_limit - 1 (the kernel refuses it
 *                               when nr_cpu_ids > cpu_limit); cpu_limit_none
 *                               if its encoding has no limit
 */
#ifndef PVLOCK_CORE_LOCK_WORD_H
#define PVLOCK_CORE_LOCK_WORD_H

#include "types.h"

namespace pvlock {

struct alignas(4) LockWord {
	u32 val;
};

static_assert(sizeof(LockWord) == 4, "the lock word is the kernel's u32");

constexpr u32 cpu_limit_none = ~0U;

/* Byte and half-word views of the word; the layout is little-endian. */
static inline u8 *byte_of(LockWord *l, unsigned int i)
{
	return reinterpret_cast<u8 *>(&l->val) + i;
}

static inline const u8 *byte_of(const LockWord *l, unsigned int i)
{
	return reinterpret_cast<const u8 *>(&l->val) + i;
}

static inline u16 *half_of(LockWord *l, unsigned int i)
{
	return reinterpret_cast<u16 *>(&l->val) + i;
}

} /* namespace pvlock */

#endif /* PVLOCK_CORE_LOCK_WORD_H */
