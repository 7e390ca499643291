/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvlock: what the C files of the lock layer share among themselves (kernel C
 * only; the C++ side sees pvlock_glue.h).
 */
#ifndef PVLOCK_KERNEL_H
#define PVLOCK_KERNEL_H

#include <linux/types.h>

struct pvlock_algo;

/* The algorithm arch_spin_*() run on, or NULL when pvlock is off. */
const struct pvlock_algo *pvlock_current(void);

/* Whether waits halt and kicks wake: a pvlock host, or stock-host mode. */
bool pvlock_host_ok(void);

/*
 * The WAIT hypercalls since boot, summed over every CPU by
 * pvlock_wait_counts(): issued (waits), and of those ended by the bound,
 * with the condition still holding (timeouts) or with it gone, the waker's
 * kick not ending the wait: sent after the bound fired or not sent yet
 * (late_kicks: the waker was slow, e.g. preempted before its kick), or sent
 * and never delivered (lost_kicks: a host or guest bug), or neither known:
 * another wait ran on the CPU between the bound and the count, in an
 * interrupt taken as the call returned, and may have ended by that kick
 * (nested_kicks). All zero without CONFIG_PVLOCK_STAT, which PVLOCK_BENCH
 * selects.
 */
struct pvlock_wait_stats {
	u64 waits;
	u64 timeouts;
	u64 lost_kicks;
	u64 late_kicks;
	u64 nested_kicks;
};

void pvlock_wait_counts(struct pvlock_wait_stats *sum);

/*
 * What CPU @cpu's shared area holds now, as the host last wrote it: false if
 * the CPU has no area registered (pvlock off, stock-host mode, CPU offline),
 * else true with its preempted flags, preempt_seq and guest-physical address.
 */
bool pvlock_area_sample(unsigned int cpu, u8 *preempted, u32 *preempt_seq,
			phys_addr_t *gpa);

#endif /* PVLOCK_KERNEL_H */
