// SPDX-License-Identifier: GPL-2.0
/*
 * pvlock test: is pvlock_spin_key read-only to a GPL module at run time?
 *
 * The key switches every spinlock of the kernel between upstream's qspinlock
 * and the pvlock layer; switched after boot, a lock taken with one algorithm
 * would be released with the other. DEFINE_STATIC_KEY_FALSE_RO puts it in
 * __ro_after_init, so static_branch_enable() or static_branch_disable() from a
 * module faults on its first write to key->enabled (the atomic_set() or the
 * cmpxchg) instead of switching it.
 *
 * This module writes key->enabled itself, without the fault becoming an oops:
 * it stores the value the key already holds through __put_kernel_nofault() (an
 * exception-table fixup, as copy_to_kernel_nofault(), which modules cannot
 * call), so the store either faults (-EFAULT: read-only) or changes nothing.
 * Then the same store into a static key of its own (DEFINE_STATIC_KEY_FALSE,
 * writable), which must go through: a method that could not tell a writable
 * key from a read-only one would prove nothing.
 *
 * One line on the console, read by check-console --rokey:
 *   pvlock_rokey: target=pvlock_spin_key enabled=0|1 pte_write=0|1
 *   write=refused|written control_write=refused|written
 * Its negative control is the same module on a kernel booted with rodata=off
 * (selftests/guest-vm/run: rokey-control), where the key stays writable.
 * The module stays loaded (nothing to undo).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/uaccess.h>
#include <asm/pgtable_types.h>
#include <asm/pvlock.h>

static DEFINE_STATIC_KEY_FALSE(pvlock_rokey_writable);

/*
 * Store the value *v already holds: 0 if the store went through, -EFAULT if
 * it faulted.
 */
static int pvlock_rokey_store_same(atomic_t *v)
{
	int same = atomic_read(v);

	pagefault_disable();
	__put_kernel_nofault(&v->counter, &same, int, fault);
	pagefault_enable();
	return 0;
fault:
	pagefault_enable();
	return -EFAULT;
}

static int pvlock_rokey_pte_write(const void *addr)
{
	unsigned int level;
	pte_t *pte = lookup_address((unsigned long)addr, &level);

	return pte ? !!pte_write(*pte) : -1;
}

static int __init pvlock_rokey_init(void)
{
	struct static_key *key = &pvlock_spin_key.key;
	int write, control;

	write = pvlock_rokey_store_same(&key->enabled);
	control = pvlock_rokey_store_same(&pvlock_rokey_writable.key.enabled);
	pr_info("target=pvlock_spin_key enabled=%d pte_write=%d write=%s control_write=%s\n",
		static_key_enabled(key), pvlock_rokey_pte_write(&key->enabled),
		write ? "refused" : "written", control ? "refused" : "written");
	return 0;
}

static void __exit pvlock_rokey_exit(void)
{
}

module_init(pvlock_rokey_init);
module_exit(pvlock_rokey_exit);
MODULE_DESCRIPTION("pvlock test: pvlock_spin_key is read-only to modules after boot");
MODULE_LICENSE("GPL");
