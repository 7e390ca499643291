// SPDX-License-Identifier: GPL-2.0
/*
 * A module that declares a GPL-incompatible licence and takes a spinlock:
 * spin_unlock() and arch_spin_*() are inlined into it (spin_lock() is not), so
 * it references pvlock_spin_key and the pvlock static-call trampolines. modpost refuses a
 * GPL-incompatible module that uses a GPL-only symbol, so this builds only
 * while those exports stay usable by every module, as upstream's pv_ops is
 * (scripts/guest/check-module-exports).
 *
 * The source itself is GPL (SPDX above); only the MODULE_LICENSE() string
 * is what a proprietary module would declare, which is what modpost checks.
 */
#include <linux/module.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(pvlock_nongpl_lock);
static arch_spinlock_t pvlock_nongpl_arch_lock = __ARCH_SPIN_LOCK_UNLOCKED;
static unsigned long pvlock_nongpl_count;

static int __init pvlock_nongpl_init(void)
{
	unsigned long flags;

	spin_lock_irqsave(&pvlock_nongpl_lock, flags);
	pvlock_nongpl_count++;
	spin_unlock_irqrestore(&pvlock_nongpl_lock, flags);
	if (spin_trylock(&pvlock_nongpl_lock))
		spin_unlock(&pvlock_nongpl_lock);

	/* spin_lock() is out of line on x86; arch_spin_*() are always inlined */
	local_irq_save(flags);
	arch_spin_lock(&pvlock_nongpl_arch_lock);
	arch_spin_unlock(&pvlock_nongpl_arch_lock);
	if (arch_spin_trylock(&pvlock_nongpl_arch_lock))
		arch_spin_unlock(&pvlock_nongpl_arch_lock);
	local_irq_restore(flags);
	return arch_spin_value_unlocked(pvlock_nongpl_arch_lock) ? 0 : -EBUSY;
}

static void __exit pvlock_nongpl_exit(void)
{
}

module_init(pvlock_nongpl_init);
module_exit(pvlock_nongpl_exit);
MODULE_DESCRIPTION("pvlock test: a non-GPL module that takes a spinlock");
MODULE_LICENSE("Proprietary");
