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
 * The WAIT hypercalls since boot, summed over every CPU: issued, ended by
 * the bound with the condition still holding (timeouts), and ended by the
 * bound with it gone (lost kicks: the waker's kick did not wake this wait).
 */
void pvlock_wait_counts(u64 *waits, u64 *timeouts, u64 *lost_kicks);

#endif /* PVLOCK_KERNEL_H */
