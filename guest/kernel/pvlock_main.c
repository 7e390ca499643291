// SPDX-License-Identifier: GPL-2.0
/*
 * pvlock: the thin C layer of the guest lock layer. It owns every kernel API
 * the C++ algorithms (pvlock_algos.cpp) need: the boot parameter, discovery
 * of the host ABI, the per-CPU shared areas, the wait/kick/yield hypercalls,
 * the CPU -> APIC ID map, and the switch of arch_spin_*() (asm/pvlock.h from
 * the patch series) to the selected algorithm.
 *
 * The choice is made once, by pvlock_spinlock_select(), called from
 * native_smp_prepare_boot_cpu(): the boot CPU is alone, interrupts are off
 * and no spinlock is held. One line in the log says what was chosen and why,
 * printed at early_initcall time, once kvm_spinlock_init() has also made its
 * choice, so that the line describes what the kernel really runs.
 *
 * The shared areas are unregistered again whenever another kernel could
 * take the vCPUs over: CPU offline, reboot/kexec/power-off, crash (see
 * "reboot, kexec, kdump" below and docs/hypercalls.rst, "Lifecycle").
 */
#define pr_fmt(fmt) "pvlock: " fmt

#include <linux/atomic.h>
#include <linux/cc_platform.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/kvm_para.h>
#include <linux/percpu.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/syscore_ops.h>
#include <asm/coco.h>
#include <asm/hypervisor.h>
#include <asm/kvm_para.h>
#include <asm/paravirt.h>
#include <asm/pvlock.h>
#include <asm/mem_encrypt.h>
#include <asm/qspinlock.h>
#include <asm/reboot.h>
#include <asm/set_memory.h>
#include <trace/events/lock.h>

#include "hypercall-abi/pvlock_abi.h"
#include "guest/kernel/pvlock_glue.h"
#include "guest/kernel/pvlock_kernel.h"

/* --- state shared with the C++ platform (pvlock_glue.h) ------------------ */

DEFINE_PER_CPU_READ_MOSTLY(u32, pvlock_cpu_number);
/*
 * The host writes this area: in a confidential (SEV) guest it must be mapped
 * decrypted, as steal time is, so it lives in the page-aligned decrypted
 * per-CPU section and pvlock_areas_share() clears its C-bit.
 */
DEFINE_PER_CPU_DECRYPTED(struct pvlock_vcpu_area, pvlock_vcpu_area)
	__aligned(PVLOCK_AREA_SIZE);
u32 pvlock_nr_cpus __read_mostly = 1;
/*
 * CPU n's area while the host has it registered, else NULL: what
 * vcpu_is_preempted(n) reads. Per-CPU like the area, so it costs nothing per
 * NR_CPUS and sits on CPU n's node; the C++ side reads other CPUs' copies
 * (kernel_platform.h). The vCPU name the host knows is not copied here:
 * kicks and hints read x86_cpu_to_apicid when they need it, as kvm.c's
 * kick does, so a CPU hot-added after boot is named right.
 */
DEFINE_PER_CPU_READ_MOSTLY(struct pvlock_vcpu_area *, pvlock_area_of);

/* --- arch_spin_*() dispatch (asm/pvlock.h) -------------------------------- */

/*
 * Read-only after init: the key is switched once, by pvlock_spinlock_select()
 * long before mark_rodata_ro(), and never again (a later switch would fault,
 * and would be unsafe anyway: see asm/pvlock.h). jump_label_init_ro() seals
 * it, so a module loading later gets its arch_spin_*() sites patched to the
 * key's state without being linked to the key.
 *
 * EXPORT_SYMBOL, not _GPL, deliberately: every module that takes a spinlock
 * inlines arch_spin_*() and so references this key (its jump entries) and the
 * static-call trampolines (EXPORT_STATIC_CALL_TRAMP, also non-GPL). Upstream's
 * inlined PV unlock reaches pv_ops the same way, and pv_ops is EXPORT_SYMBOL;
 * a GPL-only export here would make a kernel with pvlock refuse non-GPL
 * modules that load on any other kernel.
 */
DEFINE_STATIC_KEY_FALSE_RO(pvlock_spin_key);
EXPORT_SYMBOL(pvlock_spin_key);

/* The static-call targets while pvlock is off: upstream's queued spinlock. */
void pvlock_qspin_lock(struct qspinlock *lock)
{
	queued_spin_lock(lock);
}

bool pvlock_qspin_trylock(struct qspinlock *lock)
{
	return queued_spin_trylock(lock);
}

void pvlock_qspin_unlock(struct qspinlock *lock)
{
	queued_spin_unlock(lock);
}

bool pvlock_qspin_is_locked(struct qspinlock *lock)
{
	return queued_spin_is_locked(lock);
}

bool pvlock_qspin_is_contended(struct qspinlock *lock)
{
	return queued_spin_is_contended(lock);
}

bool pvlock_qspin_value_unlocked(u32 val)
{
	return !(val & _Q_LOCKED_MASK);
}

DEFINE_STATIC_CALL(pvlock_spin_lock, pvlock_qspin_lock);
DEFINE_STATIC_CALL(pvlock_spin_trylock, pvlock_qspin_trylock);
DEFINE_STATIC_CALL(pvlock_spin_unlock, pvlock_qspin_unlock);
DEFINE_STATIC_CALL(pvlock_spin_is_locked, pvlock_qspin_is_locked);
DEFINE_STATIC_CALL(pvlock_spin_is_contended, pvlock_qspin_is_contended);
DEFINE_STATIC_CALL(pvlock_spin_value_unlocked, pvlock_qspin_value_unlocked);
/* Modules inline arch_spin_unlock() and friends: they may call, not update. */
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_lock);
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_trylock);
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_unlock);
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_is_locked);
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_is_contended);
EXPORT_STATIC_CALL_TRAMP(pvlock_spin_value_unlocked);

/* --- the boot parameter --------------------------------------------------- */

/*
 * pvlock=off | auto | <algorithm>[,force]
 *   off          never use pvlock: upstream spinlocks
 *   auto         the default: pvlock's default algorithm when the host
 *                speaks the ABI, upstream otherwise
 *   <algorithm>  that algorithm when the host speaks the ABI
 *   ,force       use the algorithm even when the host does not speak the
 *                ABI (testing, e.g. under TCG): waits spin instead of
 *                halting, kicks and yields are dropped
 * Anything else is reported and ignored (auto). An algorithm that does not
 * serve nr_cpu_ids CPUs (its cpu_limit) is refused with one line, and the
 * default is used instead (pvlock_pick()).
 */
static const struct pvlock_algo *pvlock_wanted;
static bool pvlock_off __initdata;
static bool pvlock_force __initdata;
static char pvlock_param_error[96] __initdata;

static const struct pvlock_algo *pvlock_find(const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < pvlock_nr_algos; i++) {
		const struct pvlock_algo *a = &pvlock_algos[i];

		if (strlen(a->name) == len && !strncmp(a->name, name, len))
			return a;
	}
	return NULL;
}

static int __init pvlock_parse(char *arg)
{
	const struct pvlock_algo *a = NULL;
	bool force = false, off = false;
	char *comma;
	size_t len;

	/*
	 * The last valid pvlock= wins whole, as for other parameters (a boot
	 * loader appends to the command line); an invalid one is reported and
	 * changes nothing.
	 */
	if (!arg || !*arg)
		goto bad;
	comma = strchr(arg, ',');
	len = comma ? comma - arg : strlen(arg);
	if (comma) {
		if (strcmp(comma + 1, "force"))
			goto bad;
		force = true;
	}
	off = len == 3 && !strncmp(arg, "off", 3);
	if (off || (len == 4 && !strncmp(arg, "auto", 4))) {
		if (comma)
			goto bad;
		goto set;
	}
	a = pvlock_find(arg, len);
	if (!a) {
		snprintf(pvlock_param_error, sizeof(pvlock_param_error),
			 "unknown algorithm in pvlock=%s", arg);
		return 0;
	}
	if (a->bench_only) {
		snprintf(pvlock_param_error, sizeof(pvlock_param_error),
			 "pvlock=%s: \"%s\" is for the benchmark only, never a spinlock",
			 arg, a->name);
		return 0;
	}
set:
	pvlock_off = off;
	pvlock_wanted = a;
	pvlock_force = force;
	return 0;
bad:
	snprintf(pvlock_param_error, sizeof(pvlock_param_error),
		 "malformed pvlock=%s", arg ? arg : "");
	return 0;
}
early_param("pvlock", pvlock_parse);

/*
 * pvlock_tune=<key>:<value>[,<key>:<value>...]
 *   the algorithms' knobs (guest/core/tunables.h), e.g. pvlock_tune=yield:0
 *   to measure pvlock without directed yield. A malformed or refused pair is
 *   reported and skipped; the others still apply.
 */
static char pvlock_tune_error[96] __initdata;

static int __init pvlock_tune_parse(char *arg)
{
	char *pair, *colon;
	unsigned int value;

	while (arg && (pair = strsep(&arg, ",")) != NULL) {
		colon = strchr(pair, ':');
		if (colon)
			*colon = '\0';
		if (!colon || kstrtouint(colon + 1, 0, &value) ||
		    !pvlock_tunable_set(pair, value)) {
			snprintf(pvlock_tune_error, sizeof(pvlock_tune_error),
				 "pvlock_tune: bad or refused setting \"%s%s%s\"",
				 pair, colon ? ":" : "", colon ? colon + 1 : "");
			if (colon)
				*colon = ':';
		}
	}
	return 0;
}
early_param("pvlock_tune", pvlock_tune_parse);

/*
 * Discovery: the host offers pvlock to this VM by setting KVM_FEATURE_PVLOCK
 * in KVM's PV CPUID leaf (the VMM's per-VM opt-in, docs/hypercalls.rst), and
 * the guest issues no pvlock hypercall without it. This tree's kvm_para.h is
 * upstream's, which predates the bit: the ABI names it too, and the two must
 * agree wherever both are defined.
 */
#ifndef KVM_FEATURE_PVLOCK
#define KVM_FEATURE_PVLOCK PVLOCK_KVM_FEATURE
#endif
static_assert(KVM_FEATURE_PVLOCK == PVLOCK_KVM_FEATURE);

/*
 * pvlock_probe: ask the host (QUERY) even without the CPUID bit. A crutch
 * for the lab, whose L2 VMM (Debian's QEMU 7.2) cannot set the bit, never a
 * default: without the bit the VMM did not offer pvlock to this VM, and the
 * hypercall is only harmless on a KVM that knows nothing of it (docs/
 * hypercalls.rst, "Discovery").
 */
static bool pvlock_probe __initdata;
static bool pvlock_probed __initdata;	/* found by the probe, no bit */

static char pvlock_probe_error[48] __initdata;

static int __init pvlock_probe_parse(char *arg)
{
	bool probe;

	if (!arg)
		pvlock_probe = true;
	else if (!kstrtobool(arg, &probe))
		pvlock_probe = probe;
	else
		snprintf(pvlock_probe_error, sizeof(pvlock_probe_error),
			 "pvlock_probe=%s", arg);
	return 0;
}
early_param("pvlock_probe", pvlock_probe_parse);

/* --- hypercalls ------------------------------------------------------------ */

static bool pvlock_host __read_mostly;	/* host speaks pvlock: wait/kick work */
static u32 pvlock_features __read_mostly;
/*
 * A stock KVM host (no pvlock handler, or not offered to this VM): the
 * algorithms run on what upstream KVM already gives every guest, so that
 * what the host half adds can be measured against it (docs/hypercalls.rst,
 * "Stock-host mode"): KVM_FEATURE_PV_UNHALT's halt and KVM_HC_KICK_CPU for
 * wait and kick, as kvm_wait() and kvm_kick_cpu() use them;
 * KVM_HC_SCHED_YIELD to the holder's APIC ID for directed yield, if offered;
 * the steal-time preempted byte (vcpu_is_preempted(), installed by kvm.c)
 * for a preempted holder. No yield to "any", no shared area, no hints.
 */
static bool pvlock_stock __ro_after_init;
static bool pvlock_stock_yield __ro_after_init;	/* KVM_FEATURE_PV_SCHED_YIELD */
static long pvlock_query_ret __initdata;
static const struct pvlock_algo *pvlock_active_algo __read_mostly;
static const char *pvlock_reason = "not decided";
static char pvlock_reason_buf[80] __initdata;

/* Longest halt of one wait; the algorithms re-check and wait again. */
#define PVLOCK_WAIT_BOUND_NS	(10 * NSEC_PER_MSEC)

/*
 * Every pvlock call passes a2 and a3 as zero: the host refuses nonzero
 * reserved arguments (-PVLOCK_EINVAL), and kvm_hypercall2() would leave
 * whatever RDX and RSI held.
 */
static inline long pvlock_hc(unsigned long op, unsigned long a1)
{
	return kvm_hypercall4(PVLOCK_HC_NR, PVLOCK_CALL(op), a1, 0, 0);
}

/*
 * What the WAIT calls ended in, per CPU, summed by pvlock_wait_counts():
 * waits issued, and of those ended by the bound, the real timeouts (*ptr
 * still held val) and the ones whose condition was gone: the waker changed
 * *ptr and its kick did not end the wait. Those are told apart by
 * pvlock_count_missed_kick(). Only the path that has already made the
 * hypercall counts: nothing is added to a lock or unlock that does not wait.
 * Only with CONFIG_PVLOCK_STAT: otherwise pvlock_stat_inc() and the kick
 * counts below compile to nothing, and only the variables are left.
 */
static DEFINE_PER_CPU(struct pvlock_wait_stats, pvlock_wait_count);

#define pvlock_stat_inc(field)						\
	do {								\
		if (IS_ENABLED(CONFIG_PVLOCK_STAT))			\
			this_cpu_inc(pvlock_wait_count.field);		\
	} while (0)

/*
 * Kicks sent to each CPU, counted by the kicker before its KICK call (begun)
 * and once the call has returned (done: the host has then either woken the
 * target's wait or left the kick pending for its next one). Read by the
 * target only, to classify a wait that its bound ended. Two remote atomics
 * per kick, beside the exit the kick costs anyway (CONFIG_PVLOCK_STAT only);
 * in a line of their own, so that kickers do not bounce the target's other
 * per-CPU data.
 */
struct pvlock_kick_count {
	atomic_t begun;
	atomic_t done;
};

static DEFINE_PER_CPU_ALIGNED(struct pvlock_kick_count, pvlock_kicks_to);

/* Zero without CONFIG_PVLOCK_STAT (nothing counted). */
void pvlock_wait_counts(struct pvlock_wait_stats *sum)
{
	unsigned int cpu;

	memset(sum, 0, sizeof(*sum));
	if (!IS_ENABLED(CONFIG_PVLOCK_STAT))
		return;
	for_each_possible_cpu(cpu) {
		const struct pvlock_wait_stats *c = per_cpu_ptr(&pvlock_wait_count, cpu);

		sum->waits += READ_ONCE(c->waits);
		sum->timeouts += READ_ONCE(c->timeouts);
		sum->lost_kicks += READ_ONCE(c->lost_kicks);
		sum->late_kicks += READ_ONCE(c->late_kicks);
		sum->nested_kicks += READ_ONCE(c->nested_kicks);
	}
}

/*
 * The bound ended a wait whose condition is gone: the waker changed *ptr,
 * and its kick did not end the wait. @begun is this CPU's kicks begun as
 * read before the wait. Either the kick is late, or it was lost:
 *  - it came after the bound fired: the host holds it pending, and a wait
 *    with a zero bound takes it at once (WAKE_KICK). Taking it here also
 *    keeps it from ending this CPU's next wait for nothing;
 *  - it is not sent yet (the waker was preempted between its store and its
 *    KICK, the common case when vCPUs are overcommitted);
 *  - a kick that began after the wait did (more kicks done now than had
 *    begun then: at least one of the done ones began later) completed
 *    without ending the wait, and is not pending: the host lost it, or gave
 *    it to another vCPU. Only this is a lost kick.
 * A kick that began before the wait and completes during it (its waker
 * preempted between the call and its count) is not taken for one of this
 * wait's: it woke an earlier wait, or is pending. The done count is read
 * before the zero-bound wait: a kick completing in between is pending by
 * then, and counted late, as it is. A kick whose waker has not counted it
 * done yet is counted late even if it was lost: lost kicks are a lower
 * bound, never raised by a waker's preemption.
 */
static void pvlock_count_missed_kick(int begun)
{
	int done = atomic_read(&this_cpu_ptr(&pvlock_kicks_to)->done);

	if (pvlock_hc(PVLOCK_OP_WAIT, 0) == PVLOCK_WAKE_KICK || done - begun <= 0)
		pvlock_stat_inc(late_kicks);
	else
		pvlock_stat_inc(lost_kicks);
}

/*
 * Halt while *ptr == val, as kvm_wait() does, with the pvlock WAIT call in
 * place of HLT. Interrupts are disabled around the check so that a kick
 * landing after it is seen by the host as pending; if they were enabled, they
 * are enabled again by STI right before the hypercall: the STI shadow keeps
 * interrupts off until the VMCALL has exited, as "sti; hlt" does in
 * safe_halt(), so an interrupt ends the wait instead of waiting for it.
 *
 * Stock-host mode halts instead, exactly as kvm_wait(): KVM_HC_KICK_CPU sets
 * the target's pv_unhalted, which ends its HLT, or makes its next one return
 * at once, even with interrupts off. No bound: the algorithms wait only on
 * values their waker changes before kicking (guest/core/platform.h), so a
 * kick taken by another wait leaves nothing to halt on.
 */
void pvlock_k_wait(const u8 *ptr, u8 val)
{
	unsigned long flags;
	long ret;
	int begun = 0;
	u64 waits_before = 0;

	if (in_nmi() || !(pvlock_host || pvlock_stock)) {
		cpu_relax();
		return;
	}

	flags = arch_local_save_flags();
	raw_local_irq_disable();
	/* before the call: the kicks begun so far (pvlock_count_missed_kick()) */
	if (IS_ENABLED(CONFIG_PVLOCK_STAT))
		begun = atomic_read(&this_cpu_ptr(&pvlock_kicks_to)->begun);
	if (READ_ONCE(*ptr) != val)
		goto out;
	if (pvlock_stock) {
		if (arch_irqs_disabled_flags(flags))
			halt();
		else
			raw_safe_halt();
		pvlock_stat_inc(waits);
		goto out;
	}
	/* this CPU's waits before this one: did another run in between? (below) */
	if (IS_ENABLED(CONFIG_PVLOCK_STAT))
		waits_before = this_cpu_read(pvlock_wait_count.waits);
	if (arch_irqs_disabled_flags(flags)) {
		ret = pvlock_hc(PVLOCK_OP_WAIT, PVLOCK_WAIT_BOUND_NS);
	} else {
		asm volatile("sti; " KVM_HYPERCALL
			     : "=a"(ret)
			     : "a"((unsigned long)PVLOCK_HC_NR),
			       "b"(PVLOCK_CALL(PVLOCK_OP_WAIT)),
			       "c"((unsigned long)PVLOCK_WAIT_BOUND_NS),
			       "d"(0UL), "S"(0UL)
			     : "memory");
	}
	/*
	 * After the STI'd call interrupts may be on: off again for the
	 * counting, so that no interrupt handler's own wait takes a late kick
	 * between here and pvlock_count_missed_kick(); flags restores them.
	 * That does not close the window before here: an interrupt that came
	 * after the bound fired, while the vCPU was not yet running again (any
	 * length of time on an overcommitted host), is taken right after the
	 * call returns, and a wait in its handler may end by this wait's late
	 * kick, or by its own kick, which counts as one done to this CPU. A
	 * wait in between shows in this CPU's wait count: such a wake-up is
	 * counted nested, neither late nor lost (lost stays a lower bound).
	 * Otherwise a wake-up at the bound whose condition is gone is a kick
	 * that did not end the wait: late or lost.
	 */
	raw_local_irq_disable();
	if (IS_ENABLED(CONFIG_PVLOCK_STAT) && ret == PVLOCK_WAKE_TIMEOUT) {
		if (READ_ONCE(*ptr) == val)
			pvlock_stat_inc(timeouts);
		else if (this_cpu_read(pvlock_wait_count.waits) != waits_before)
			pvlock_stat_inc(nested_kicks);
		else
			pvlock_count_missed_kick(begun);
	}
	pvlock_stat_inc(waits);
out:
	raw_local_irq_restore(flags);
}

void pvlock_k_kick(u32 cpu)
{
	if (cpu >= nr_cpu_ids)
		return;
	if (pvlock_host) {
		struct pvlock_kick_count *c = per_cpu_ptr(&pvlock_kicks_to, cpu);
		bool stat = IS_ENABLED(CONFIG_PVLOCK_STAT);

		/*
		 * Around the call: see pvlock_count_missed_kick(). Both
		 * increments are locked instructions and VMCALL serializes:
		 * on x86 the three are seen in this order.
		 */
		if (stat)
			atomic_inc(&c->begun);
		pvlock_hc(PVLOCK_OP_KICK, per_cpu(x86_cpu_to_apicid, cpu));
		if (stat)
			atomic_inc(&c->done);
	} else if (pvlock_stock)	/* a0: flags, none defined; a1: the APIC ID */
		kvm_hypercall2(KVM_HC_KICK_CPU, 0,
			       per_cpu(x86_cpu_to_apicid, cpu));
}

/*
 * cpu == no vCPU (~0U): yield to whichever preempted vCPU the host picks.
 * A stock host names no such call, and its KVM_HC_SCHED_YIELD answers 0
 * whether or not it yielded (it does when the target is runnable but not
 * running, which the caller has just read in its steal time): true means
 * "asked", there.
 */
bool pvlock_k_yield(u32 cpu)
{
	unsigned long target;

	if (pvlock_stock) {
		if (!pvlock_stock_yield || cpu >= nr_cpu_ids)
			return false;
		return kvm_hypercall1(KVM_HC_SCHED_YIELD,
				      per_cpu(x86_cpu_to_apicid, cpu)) == 0;
	}
	if (!pvlock_host)
		return false;
	if (cpu == ~0U) {
		if (!(pvlock_features & PVLOCK_F_YIELD_ANY))
			return false;
		target = PVLOCK_VCPU_ANY;
	} else {
		if (!(pvlock_features & PVLOCK_F_YIELD_TO) || cpu >= nr_cpu_ids)
			return false;
		target = per_cpu(x86_cpu_to_apicid, cpu);
	}
	return pvlock_hc(PVLOCK_OP_YIELD, target) == 0;
}

/*
 * The contention tracepoints of queued_spin_lock_slowpath(), which pvlock
 * bypasses: perf lock contention, and every BPF tool on lock:contention_*,
 * see pvlock's waiters as they see upstream's. Called by the algorithms
 * from their slow paths only (guest/core/platform.h): begin before the
 * first spin or halt, end once the lock is owned. The algorithms call them
 * only while the tracepoint is on (with CONFIG_JUMP_LABEL their sites test
 * the tracepoint's static key inline: a NOP while it is off).
 */
#ifdef CONFIG_TRACEPOINTS
/* The key that tracepoint_on<>() of kernel_platform.h names in its jump entries. */
static_assert(offsetof(struct tracepoint, key) == PVLOCK_TRACEPOINT_KEY_OFFSET);
static_assert(__same_type(__tracepoint_contention_begin.key, struct static_key));
static_assert(__same_type(__tracepoint_contention_end.key, struct static_key));
#endif

/*
 * A CPU without a pvlock shared area: the kernel's vcpu_is_preempted(), which
 * on a stock host is kvm.c's steal-time preempted byte (false without steal
 * time, as for every guest).
 */
bool pvlock_k_vcpu_is_preempted(u32 cpu)
{
	return pvlock_stock && cpu < nr_cpu_ids && vcpu_is_preempted(cpu);
}

void pvlock_k_contention_begin(struct qspinlock *lock)
{
	trace_contention_begin(lock, LCB_F_SPIN);
}

void pvlock_k_contention_end(struct qspinlock *lock)
{
	trace_contention_end(lock, 0);
}

/* --- per-CPU shared areas --------------------------------------------------- */

/*
 * Set once the system goes down (reboot, kexec, power-off, crash): from then
 * on no CPU registers its area again, so none is left registered for the
 * next kernel (a CPU coming online late would otherwise undo the shutdown).
 */
static bool pvlock_areas_closed;

/* Registers this CPU's shared area; 0 or the host's error. */
static long pvlock_area_register(void)
{
	struct pvlock_vcpu_area *a = this_cpu_ptr(&pvlock_vcpu_area);
	long ret;

	a->wait_vcpu = PVLOCK_VCPU_ANY;
	if (!pvlock_host || !(pvlock_features & PVLOCK_F_AREA))
		return 0;
	if (READ_ONCE(pvlock_areas_closed))
		return 0;
	ret = pvlock_hc(PVLOCK_OP_REGISTER, slow_virt_to_phys(a));
	if (!ret)
		this_cpu_write(pvlock_area_of, a);
	return ret;
}

/*
 * Unregisters this CPU's shared area (REGISTER with GPA 0): the host stops
 * writing it, and vcpu_is_preempted() reads false for this CPU from here on.
 * Returns the host's answer (0: the area is off), or 1 if there was none.
 *
 * Called from the CPU-offline callback, from the reboot notifier's IPI and
 * from the crash path, so it must work with interrupts off, in any context,
 * any number of times: it takes no lock and never sleeps; this_cpu_xchg()
 * (a cmpxchg loop on this CPU's copy, safe against its interrupts and NMIs)
 * makes "was registered" exact even if two paths race on this CPU. The hypercall
 * is issued even when nothing was registered, since the host treats a second
 * unregistration as a no-op.
 */
static long pvlock_area_unregister(void)
{
	bool was = this_cpu_xchg(pvlock_area_of, NULL);
	long ret;

	if (!pvlock_host || !(pvlock_features & PVLOCK_F_AREA))
		return 1;
	ret = pvlock_hc(PVLOCK_OP_REGISTER, 0);
	return ret ? ret : !was;
}

/*
 * pvlock_test_online_noreg: testing only, the negative control of the nested
 * lab's CPU-hotplug case. A CPU that comes online after boot does not register
 * its area, as a guest that forgot re-registration would (the CPUs brought up
 * at boot still register): once locktorture has cycled a CPU, the power-off
 * line must count fewer areas unregistered than CPUs online.
 */
static bool pvlock_test_online_noreg __ro_after_init;

static int __init pvlock_test_online_noreg_parse(char *arg)
{
	pvlock_test_online_noreg = true;
	return 0;
}
early_param("pvlock_test_online_noreg", pvlock_test_online_noreg_parse);

/*
 * A secondary CPU the host refuses still takes the lock correctly: it only
 * loses vcpu_is_preempted() (false) for itself.
 */
static int pvlock_cpu_online(unsigned int cpu)
{
	long ret;

	if (pvlock_test_online_noreg && system_state == SYSTEM_RUNNING) {
		pr_info("cpu %u: shared area not registered (pvlock_test_online_noreg)\n", cpu);
		return 0;
	}
	ret = pvlock_area_register();

	if (ret)
		pr_warn("cpu %u: shared area not registered (%ld)\n", cpu, ret);
	return 0;
}

/* Runs on the CPU going down, which therefore needs nothing at reboot. */
static int pvlock_cpu_offline(unsigned int cpu)
{
	pvlock_area_unregister();
	return 0;
}

/* pv_ops.lock.vcpu_is_preempted from the shared area (scheduler, mutexes). */
__visible bool __pvlock_vcpu_is_preempted(long cpu);
__visible bool __pvlock_vcpu_is_preempted(long cpu)
{
	struct pvlock_vcpu_area *a = READ_ONCE(per_cpu(pvlock_area_of, cpu));

	return a && (READ_ONCE(a->preempted) & PVLOCK_PREEMPTED);
}

PV_CALLEE_SAVE_REGS_THUNK(__pvlock_vcpu_is_preempted);

bool pvlock_area_sample(unsigned int cpu, u8 *preempted, u32 *preempt_seq,
			phys_addr_t *gpa)
{
	struct pvlock_vcpu_area *a = READ_ONCE(per_cpu(pvlock_area_of, cpu));

	if (!a)
		return false;
	/* host-written: two reads that may straddle a preemption, which is fine */
	*preempted = READ_ONCE(a->preempted);
	*preempt_seq = READ_ONCE(a->preempt_seq);
	*gpa = slow_virt_to_phys(a);	/* what REGISTER passed */
	return true;
}

/*
 * A confidential guest's memory is encrypted: the host could only write
 * ciphertext into the areas. On SEV the per-CPU copies are mapped decrypted
 * (shared), every possible CPU's at once so that a CPU coming online later
 * finds its copy ready, exactly when kvm.c does its own (before
 * native_smp_prepare_boot_cpu()). Other platforms (TDX) are refused with or
 * without the area (@area: the host offers it): the memory would need
 * converting to shared at run time, and the wait with interrupts on issues
 * VMCALL inline, which TDX does not route to the host (kvm_hypercall*() do).
 * pvlock then stays off.
 */
static int __init pvlock_areas_share(bool area)
{
	unsigned int cpu;
	int ret;

	if (!cc_platform_has(CC_ATTR_GUEST_MEM_ENCRYPT))
		return 0;
	if (cc_vendor != CC_VENDOR_AMD)
		return -EOPNOTSUPP;
	if (!area)
		return 0;
	for_each_possible_cpu(cpu) {
		ret = early_set_memory_decrypted((unsigned long)&per_cpu(pvlock_vcpu_area, cpu),
						 sizeof(struct pvlock_vcpu_area));
		if (ret)
			return ret;
	}
	return 0;
}

/* --- reboot, kexec, kdump, suspend ------------------------------------------- */

/*
 * The host writes a registered area until the vCPU unregisters it or is
 * reset. A reboot through the VMM resets every vCPU, but kexec (and kdump)
 * starts the next kernel on the same vCPUs without a reset: an area left
 * registered would have the host write into memory the next kernel uses for
 * something else. So every CPU unregisters its area on the way down, as
 * arch/x86/kernel/kvm.c does for steal time, PV EOI and async PF:
 *
 * - reboot and kexec: a reboot notifier, the hook kvm.c uses;
 *   kernel_kexec() runs the chain (SYS_RESTART) before it stops the other
 *   CPUs. pvlock's own notifier rather than a call from kvm.c's, because
 *   kvm.c acts only on SYS_RESTART: this one acts on halt and power-off too
 *   (the VM ends anyway; it costs one hypercall per CPU and makes the path
 *   observable on every test boot) and reports what it did in one line.
 *   CPUs already offline unregistered in pvlock_cpu_offline();
 *   pvlock_areas_closed keeps a CPU onlined later from registering again.
 *
 * - crash (kdump): machine_ops.crash_shutdown, which kvm.c also uses. pvlock
 *   chains in front of whatever it found there (kvm_crash_shutdown() on
 *   KVM), so the patch series need not touch kvm.c for it. It runs on the
 *   crashing CPU with interrupts off while other CPUs may still hold any
 *   lock: pvlock_area_unregister() takes none. The other CPUs are stopped
 *   by NMI right after and cannot be asked to unregister; their areas are in
 *   the crashed kernel's memory, which the capture kernel (running from the
 *   crashkernel= reservation) never uses, so host writes there only touch
 *   the dump, as for kvm.c's areas.
 */
static atomic_t pvlock_off_visited, pvlock_off_unregistered, pvlock_off_refused;

/*
 * pvlock_test_keep_areas: testing only, the negative control of the nested
 * lab's kexec and kdump cases. The reboot notifier (saying so) and the
 * crash hook leave every area registered, as a guest without them would: the
 * next kernel must then find the host writing into them.
 */
static bool pvlock_test_keep_areas __ro_after_init;

static int __init pvlock_test_keep_areas_parse(char *arg)
{
	pvlock_test_keep_areas = true;
	return 0;
}
early_param("pvlock_test_keep_areas", pvlock_test_keep_areas_parse);

static void pvlock_area_off_ipi(void *unused)
{
	long ret = pvlock_area_unregister();

	atomic_inc(&pvlock_off_visited);
	if (!ret)
		atomic_inc(&pvlock_off_unregistered);
	else if (ret < 0)
		atomic_inc(&pvlock_off_refused);
}

static int pvlock_reboot_notify(struct notifier_block *nb, unsigned long code,
				void *unused)
{
	const char *why = code == SYS_RESTART ? "restart/kexec" :
			  code == SYS_POWER_OFF ? "power-off" : "halt";
	unsigned int online;

	if (pvlock_test_keep_areas) {
		pr_info("%s: shared areas kept registered (pvlock_test_keep_areas)\n", why);
		return NOTIFY_DONE;
	}
	cpus_read_lock();
	WRITE_ONCE(pvlock_areas_closed, true);
	on_each_cpu(pvlock_area_off_ipi, NULL, 1);
	online = num_online_cpus();
	cpus_read_unlock();

	pr_info("%s: shared areas off on %d of %u online CPUs (%d unregistered, %d refused)\n",
		why, atomic_read(&pvlock_off_visited) - atomic_read(&pvlock_off_refused),
		online, atomic_read(&pvlock_off_unregistered),
		atomic_read(&pvlock_off_refused));
	return NOTIFY_DONE;
}

static struct notifier_block pvlock_reboot_nb = {
	.notifier_call = pvlock_reboot_notify,
};

#ifdef CONFIG_CRASH_DUMP
static void (*pvlock_next_crash_shutdown)(struct pt_regs *regs) __ro_after_init;

static void pvlock_crash_shutdown(struct pt_regs *regs)
{
	WRITE_ONCE(pvlock_areas_closed, true);
	/* testing only: the kdump case's negative control, as for reboot */
	if (!pvlock_test_keep_areas)
		pvlock_area_unregister();
	pvlock_next_crash_shutdown(regs);
}
#endif

/*
 * Suspend to RAM, hibernation and kexec with preserve_context:
 * syscore_suspend() runs on the boot CPU alone with interrupts off, the
 * others already offline (pvlock_cpu_offline() unregistered theirs). The
 * boot CPU's area goes off too, as kvm.c's kvm_suspend() does for steal
 * time: a hibernation's restore kernel jumps into the saved image, whose
 * memory at this kernel's area may hold anything, and a suspend to RAM
 * ends in a reset by the VMM. syscore_resume() registers the area of the
 * kernel that resumes (the image's, after a hibernation) again, unless the
 * system is going down; the other CPUs register theirs as they come online.
 */
static int pvlock_syscore_suspend(void *unused)
{
	pvlock_area_unregister();
	return 0;
}

static void pvlock_syscore_resume(void *unused)
{
	long ret = pvlock_area_register();

	if (ret)
		pr_warn("resume: cpu %u: shared area not registered (%ld)\n",
			smp_processor_id(), ret);
}

static const struct syscore_ops pvlock_syscore_ops = {
	.suspend = pvlock_syscore_suspend,
	.resume = pvlock_syscore_resume,
};

static struct syscore pvlock_syscore = {
	.ops = &pvlock_syscore_ops,
};

/* From an initcall: machine_ops is read-only once init is over. */
static void __init pvlock_lifecycle_init(void)
{
	register_reboot_notifier(&pvlock_reboot_nb);
	register_syscore(&pvlock_syscore);
#ifdef CONFIG_CRASH_DUMP
	pvlock_next_crash_shutdown = machine_ops.crash_shutdown;
	machine_ops.crash_shutdown = pvlock_crash_shutdown;
#endif
}

/* --- the choice ------------------------------------------------------------ */

static const struct pvlock_algo * __init pvlock_decline(const char *why)
{
	pvlock_reason = why;
	return NULL;
}

/*
 * Whether the host offers pvlock to this VM (KVM_FEATURE_PVLOCK), or the
 * probe is asked for; if not, sets pvlock_reason. Only called on KVM.
 */
static bool __init pvlock_host_offers(void)
{
	if (kvm_para_has_feature(KVM_FEATURE_PVLOCK))
		return true;
	if (pvlock_probe) {
		pvlock_probed = true;
		return true;
	}
	pvlock_reason = "host does not offer pvlock (no KVM_FEATURE_PVLOCK in CPUID)";
	return false;
}

/*
 * pvlock_stock=off: on a host that does not offer pvlock, leave the spinlocks
 * to upstream (its PV qspinlock) instead of running pvlock's algorithm on
 * the stock host's halt, kick and yield.
 */
static bool pvlock_stock_off __initdata;

static int __init pvlock_stock_parse(char *arg)
{
	bool on;

	if (kstrtobool(arg ? arg : "", &on)) {
		pr_warn("pvlock_stock=%s: expected on or off; stock-host mode stays on\n",
			arg ? arg : "");
		return 0;
	}
	pvlock_stock_off = !on;
	return 0;
}
early_param("pvlock_stock", pvlock_stock_parse);

/*
 * Whether a host without pvlock gives this VM what stock-host mode needs
 * (KVM_FEATURE_PV_UNHALT: halt until kicked); if not, sets pvlock_reason.
 * Only called on KVM, once pvlock_host_offers() said no.
 */
static bool __init pvlock_stock_offers(void)
{
	if (pvlock_stock_off) {
		pvlock_reason = "host does not offer pvlock, stock-host mode off (pvlock_stock=off)";
		return false;
	}
	if (!kvm_para_has_feature(KVM_FEATURE_PV_UNHALT)) {
		pvlock_reason = "host offers neither pvlock (KVM_FEATURE_PVLOCK) nor PV_UNHALT";
		return false;
	}
	pvlock_stock_yield = kvm_para_has_feature(KVM_FEATURE_PV_SCHED_YIELD);
	return true;
}

/*
 * Whether the host speaks pvlock; on refusal, sets pvlock_reason. Only
 * called on KVM, after pvlock_host_offers(): VMCALL anywhere else would be
 * #UD, and without the bit the VMM did not offer the call.
 */
static bool __init pvlock_host_speaks(void)
{
	long r;

	r = pvlock_hc(PVLOCK_OP_QUERY, 0);
	pvlock_query_ret = r;
	if (r < 0) {
		snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
			 "host does not speak pvlock (%ld)", r);
		pvlock_reason = pvlock_reason_buf;
		return false;
	}
	if (PVLOCK_QUERY_MAJOR(r) != PVLOCK_ABI_MAJOR) {
		snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
			 "host ABI %u.%u, guest speaks %u.x",
			 PVLOCK_QUERY_MAJOR(r), PVLOCK_QUERY_MINOR(r),
			 PVLOCK_ABI_MAJOR);
		pvlock_reason = pvlock_reason_buf;
		return false;
	}
	pvlock_features = PVLOCK_QUERY_FEATURES(r);
	if ((pvlock_features & (PVLOCK_F_WAIT | PVLOCK_F_KICK)) !=
	    (PVLOCK_F_WAIT | PVLOCK_F_KICK)) {
		snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
			 "host lacks wait/kick (features %#x)", pvlock_features);
		pvlock_reason = pvlock_reason_buf;
		return false;
	}
	return true;
}

/*
 * The CPU limits (pvlock_glue.h, docs/cpu-ids.md): an algorithm serves CPU
 * ids 0 .. cpu_limit - 1, so it is never chosen when nr_cpu_ids, final by
 * now (possible_cpus=, NR_CPUS), is larger. pvlock=<name> naming one is
 * reported by pvlock_report() and the default is taken instead.
 */
static const struct pvlock_algo *pvlock_refused;

/*
 * pvlock_test_cpu_limit=N: testing only. The algorithm named by pvlock=
 * serves at most N CPUs, so that the refusal can be seen on a kernel whose
 * NR_CPUS is below every real limit (selftests/guest-vm/run cpu-limit-test).
 */
static unsigned int pvlock_test_limit __initdata = ~0U;

static int __init pvlock_test_limit_parse(char *arg)
{
	return kstrtouint(arg ? arg : "", 0, &pvlock_test_limit);
}
early_param("pvlock_test_cpu_limit", pvlock_test_limit_parse);

static u32 __init pvlock_limit(const struct pvlock_algo *a)
{
	return a == pvlock_wanted ? min(a->cpu_limit, pvlock_test_limit) :
				    a->cpu_limit;
}

static bool __init pvlock_serves(const struct pvlock_algo *a)
{
	return pvlock_limit(a) == ~0U || nr_cpu_ids <= pvlock_limit(a);
}

/* The first PV algorithm of the table that serves every possible CPU. */
static const struct pvlock_algo * __init pvlock_default(void)
{
	unsigned int i;

	for (i = 0; i < pvlock_nr_algos; i++) {
		const struct pvlock_algo *a = &pvlock_algos[i];

		if (a->pv && !a->bench_only && pvlock_serves(a))
			return a;
	}
	snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
		 "no algorithm serves %u CPUs", nr_cpu_ids);
	return pvlock_decline(pvlock_reason_buf);
}

/* pvlock=<name> if it serves every possible CPU, else the default. */
static const struct pvlock_algo * __init pvlock_pick(void)
{
	if (!pvlock_wanted)
		return pvlock_default();
	if (pvlock_serves(pvlock_wanted))
		return pvlock_wanted;
	pvlock_refused = pvlock_wanted;
	return pvlock_default();
}

static const struct pvlock_algo * __init pvlock_choose(void)
{
	bool kvm = kvm_para_available();

	if (pvlock_off)
		return pvlock_decline("disabled by pvlock=off");
	if (pvlock_force && pvlock_wanted) {
		/* Testing: no host support is needed, but any the host has is used. */
		if (kvm && pvlock_host_offers())
			pvlock_host = pvlock_host_speaks();
		else if (kvm)
			pvlock_stock = pvlock_stock_offers();
		return pvlock_pick();
	}
	if (!kvm)
		return pvlock_decline("not running on KVM");
	if (kvm_para_has_hint(KVM_HINTS_REALTIME))
		return pvlock_decline("dedicated pCPUs (KVM_HINTS_REALTIME)");
	if (num_possible_cpus() == 1)
		return pvlock_decline("single vCPU");
	/*
	 * nopvspin asks for no PV spinlocks: pvlock's default is one, on a
	 * pvlock host or a stock one. pvlock=<algorithm> names one anyway.
	 */
	if (nopvspin && !pvlock_wanted)
		return pvlock_decline("PV spinlocks disabled by nopvspin");
	/*
	 * A host that offers pvlock and then fails the query (ABI major,
	 * missing wait/kick) is declined, not used in stock-host mode: the
	 * VMM asked for pvlock, and the log says why it is off.
	 */
	if (pvlock_host_offers()) {
		if (!pvlock_host_speaks())
			return NULL;
		pvlock_host = true;
		return pvlock_pick();
	}
	if (!pvlock_stock_offers())
		return NULL;
	pvlock_stock = true;
	return pvlock_pick();
}

void __init pvlock_spinlock_select(void)
{
	const struct pvlock_algo *a;
	unsigned int cpu;
	long ret;

	for_each_possible_cpu(cpu) {
		per_cpu(pvlock_cpu_number, cpu) = cpu;
		per_cpu(pvlock_vcpu_area, cpu).wait_vcpu = PVLOCK_VCPU_ANY;
	}
	pvlock_nr_cpus = nr_cpu_ids;

	a = pvlock_choose();
	if (!a)
		return;

	/*
	 * A confidential guest that cannot share the area in clear is told
	 * apart from a host that refuses it, but ends the same way.
	 */
	if (pvlock_host) {
		ret = pvlock_areas_share(pvlock_features & PVLOCK_F_AREA);
		if (ret) {
			pvlock_host = false;
			snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
				 ret == -EOPNOTSUPP ?
				 "confidential guest other than SEV: not supported (%ld)" :
				 "confidential guest cannot share the area with the host (%ld)",
				 ret);
			pvlock_reason = pvlock_reason_buf;
			if (!pvlock_force)
				return;
		}
	}

	/*
	 * A host that advertises the shared area and then refuses the boot
	 * CPU's is not one to trust with every spinlock: fall back (a forced
	 * algorithm runs on without host support instead).
	 */
	ret = pvlock_area_register();
	if (ret) {
		pvlock_host = false;
		snprintf(pvlock_reason_buf, sizeof(pvlock_reason_buf),
			 "host refused the shared area (%ld)", ret);
		pvlock_reason = pvlock_reason_buf;
		if (!pvlock_force)
			return;
	}
	if (this_cpu_read(pvlock_area_of))
		pv_ops.lock.vcpu_is_preempted =
			PV_CALLEE_SAVE(__pvlock_vcpu_is_preempted);

	/*
	 * Still SYSTEM_BOOTING on one CPU with interrupts off: every update
	 * below is a text_poke_early(), and no lock is held across it.
	 */
	static_call_update(pvlock_spin_lock, a->lock);
	static_call_update(pvlock_spin_trylock, a->trylock);
	static_call_update(pvlock_spin_unlock, a->unlock);
	static_call_update(pvlock_spin_is_locked, a->is_locked);
	static_call_update(pvlock_spin_is_contended, a->is_contended);
	static_call_update(pvlock_spin_value_unlocked, a->value_unlocked);
	static_branch_enable(&pvlock_spin_key);
	pvlock_active_algo = a;
}

const struct pvlock_algo *pvlock_current(void)
{
	return pvlock_active_algo;
}

bool pvlock_host_ok(void)
{
	return pvlock_host || pvlock_stock;
}

/* What upstream runs instead, read back from the state kvm.c left. */
static const char * __init pvlock_upstream_choice(void)
{
	if (pv_ops.lock.queued_spin_lock_slowpath ==
	    __pv_queued_spin_lock_slowpath)
		return "upstream PV qspinlock";
	if (static_key_enabled(&virt_spin_lock_key))
		return "upstream virt_spin_lock (test-and-set) fallback";
	return "upstream native qspinlock";
}

static int __init pvlock_report(void)
{
	const struct pvlock_algo *a = pvlock_active_algo;

	if (pvlock_param_error[0])
		pr_warn("%s: ignored; expected pvlock=off|auto|<algorithm>[,force]\n",
			pvlock_param_error);
	if (pvlock_probe_error[0])
		pr_warn("%s: ignored; expected pvlock_probe[=<bool>]\n",
			pvlock_probe_error);
	if (pvlock_tune_error[0])
		pr_warn("%s: skipped; keys: %s\n", pvlock_tune_error,
			pvlock_tunable_keys);
	if (pvlock_refused)
		pr_warn("%s refused: it serves %u CPUs, nr_cpu_ids is %u; using %s\n",
			pvlock_refused->name, pvlock_limit(pvlock_refused),
			nr_cpu_ids, a ? a->name : pvlock_upstream_choice());

	if (a && pvlock_host)
		pr_info("using %s (host ABI %u.%u, features %#x)%s%s\n", a->name,
			PVLOCK_QUERY_MAJOR(pvlock_query_ret),
			PVLOCK_QUERY_MINOR(pvlock_query_ret), pvlock_features,
			per_cpu(pvlock_area_of, 0) ? "" : ", no shared area",
			pvlock_probed ? ", found by pvlock_probe without KVM_FEATURE_PVLOCK" : "");
	else if (a && pvlock_stock)
		pr_info("using %s in stock-host mode (no pvlock from the host: PV_UNHALT halt and kick, %s, %s)\n",
			a->name,
			pvlock_stock_yield ? "KVM_HC_SCHED_YIELD to the holder" :
					     "no directed yield (no PV_SCHED_YIELD)",
			kvm_para_has_feature(KVM_FEATURE_STEAL_TIME) ?
				"steal-time preempted" :
				"no preempted state (no STEAL_TIME)");
	else if (a)
		pr_info("using %s without host support (pvlock=%s,force: waits spin, kicks dropped)\n",
			a->name, pvlock_wanted->name);
	else
		pr_info("off: %s, using %s\n", pvlock_reason,
			pvlock_upstream_choice());

	if (a) {
		int ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
						    "x86/pvlock:online",
						    pvlock_cpu_online,
						    pvlock_cpu_offline);

		if (ret < 0)
			pr_err("no CPU hotplug callbacks (%d): a CPU brought online from now on runs without its shared area\n",
			       ret);
		pvlock_lifecycle_init();
	}
	return 0;
}
early_initcall(pvlock_report);
