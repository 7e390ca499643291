/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: a per-CPU table of per-lock values, hashed by lock address.
 *
 * Seed 004: one per-CPU backoff delay regresses when locks with different
 * hold times are contended together (-13%); a 64-entry per-CPU table hashed by
 * lock address fixes it (+45%). The backoff lock keeps its delays here and the
 * preemptable ticket lock its hand-over times. Each entry remembers the hash
 * of the lock that wrote it, so a reader can tell a collision from a hit and
 * apply the collision policy it was configured with (tunables.collision).
 *
 * Only the owning CPU reads or writes its table, so no atomics are needed;
 * the kernel accesses it with preemption disabled (inside arch_spin_lock).
 */
#ifndef PVLOCK_CORE_LOCK_HASH_H
#define PVLOCK_CORE_LOCK_HASH_H

#include "lock_word.h"

namespace pvlock {

constexpr unsigned int lock_hash_bits = 6;
constexpr unsigned int lock_hash_slots = 1U << lock_hash_bits;

/* Fibonacci hashing of the address, as the kernel's hash_32/hash_ptr do. */
static inline u32 lock_hash(const LockWord *l)
{
	u64 a = static_cast<u64>(reinterpret_cast<uptr>(l));

	return static_cast<u32>(((a >> 2) * 0x61c8864680b583ebULL) >> 32);
}

/*
 * The same for a (lock, key) pair: the wait-node hash (wait_node.h) keys a
 * ticket waiter by its ticket, so the waiters of one lock spread over the
 * table instead of filling one probe window.
 */
static inline u32 lock_hash_key(const LockWord *l, u32 key)
{
	u64 a = static_cast<u64>(reinterpret_cast<uptr>(l)) >> 2;

	return static_cast<u32>(((a + key * 0x9e3779b9ULL) * 0x61c8864680b583ebULL) >> 32);
}

/* Multiply-shift range reduction: a 32-bit hash to [0, n), for any n. */
static inline u32 hash_range(u32 hash, u32 n)
{
	return static_cast<u32>((static_cast<u64>(hash) * n) >> 32);
}

static inline unsigned int lock_hash_slot(u32 hash)
{
	return hash >> (32 - lock_hash_bits);
}

struct LockHashEntry {
	u32 tag;	/* lock_hash() of the lock that last wrote value, 0 = empty */
	u32 value;
};

struct LockHashTable {
	LockHashEntry slot[lock_hash_slots];
};

/* This CPU's entry for lock l, and whether it was written for l. */
template <typename P, typename Tag>
struct LockHash {
	struct Table : LockHashTable {};

	/*
	 * slots: how many of the table's slots are used (a power of two,
	 * 1..lock_hash_slots); fewer slots, more locks share an entry.
	 */
	static inline LockHashEntry &entry(const LockWord *l, bool *hit,
					   u32 slots = lock_hash_slots)
	{
		u32 h = lock_hash(l) | 1;	/* never 0, the empty tag */
		LockHashEntry &e = P::template percpu<Table>(P::this_cpu())
					   .slot[lock_hash_slot(h) & (slots - 1)];

		*hit = e.tag == h;
		return e;
	}

	static inline void store(const LockWord *l, LockHashEntry &e, u32 value)
	{
		e.tag = lock_hash(l) | 1;
		e.value = value;
	}
};

} /* namespace pvlock */

#endif /* PVLOCK_CORE_LOCK_HASH_H */
