// SPDX-License-Identifier: GPL-2.0
/*
 * pvlock: the in-kernel lock benchmark, in debugfs.
 *
 *   /sys/kernel/debug/pvlock/algos   the algorithms, one per line, then
 *                                    "spinlock" (the kernel's spinlock_t,
 *                                    whatever arch_spin_*() currently are)
 *   /sys/kernel/debug/pvlock/bench   write a run, read its results
 *   /sys/kernel/debug/pvlock/waits   the WAIT hypercalls since boot:
 *                                    "waits=N wait_timeouts=N lost_kicks=N
 *                                    late_kicks=N nested_kicks=N"
 *   /sys/kernel/debug/pvlock/areas   the shared areas as the host last wrote
 *                                    them, one line per online CPU:
 *                                    "cpu=N registered=0|1 preempted=F
 *                                    preempt_seq=S gpa=0x..." (the last
 *                                    three only when registered): a reader
 *                                    that samples
 *                                    preempt_seq twice sees whether the host
 *                                    publishes into the area (the nested
 *                                    lab's check that a migrated guest's
 *                                    areas were restored)
 *   /sys/kernel/debug/pvlock/watch   with pvlock_test_watch= (below): the
 *                                    watched addresses, and whether anyone
 *                                    wrote into them since this kernel
 *                                    filled them with a pattern ("in-use":
 *                                    this kernel's own memory, not watched)
 *
 * A run is one line of key=value words, every one optional:
 *   algo=<name>|all   all = every selectable algorithm, then spinlock;
 *                     "broken" (the negative control) only when named
 *   duration_ms=200   measured window per algorithm
 *   hold_ns=0         busy time inside the critical section (ndelay)
 *   think_ns=0        busy time between two acquisitions (ndelay)
 *   threads=0         kthreads, bound round-robin to the online CPUs;
 *                     0 = one per online CPU; never more than the
 *                     algorithm serves (its cpu_limit)
 *   private=0         1: every thread takes a lock of its own (same
 *                     algorithm, never contended), the control that shows
 *                     what time-sharing the vCPUs costs without any lock
 *                     waiting
 * The write returns when the run is over; reading the file then gives one
 * line per algorithm:
 *   algo=pvqueued threads=4 duration_ms=200 hold_ns=0 think_ns=0 private=0
 *   acquisitions=N throughput_per_s=N min_thread=N max_thread=N
 *   fairness_permille=N violations=N lost_updates=N waits=N
 *   wait_timeouts=N lost_kicks=N late_kicks=N nested_kicks=N verdict=ok|FAIL
 * fairness_permille is 1000 * min_thread / max_thread. violations counts
 * critical sections that found another thread inside, lost_updates the
 * increments of the protected counter that went missing: both are zero for
 * any correct lock, and verdict=FAIL otherwise. waits, wait_timeouts,
 * lost_kicks, late_kicks and nested_kicks are the WAIT hypercalls made
 * during the run, by every CPU (struct pvlock_wait_stats: the bound fired
 * with the condition still holding, or with it gone and the waker's kick
 * sent but lost, or late, or perhaps taken by a wait nested in an
 * interrupt); all zero without a pvlock host.
 */
#define pr_fmt(fmt) "pvlock-bench: " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/crash_dump.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/io.h>
#include <linux/kcsan-checks.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "guest/kernel/pvlock_glue.h"
#include "guest/kernel/pvlock_kernel.h"

#define BENCH_MAX_THREADS	NR_CPUS
#define BENCH_OUT_SIZE		8192

struct bench_cfg {
	char algo[32];
	unsigned int duration_ms;
	unsigned int hold_ns;
	unsigned int think_ns;
	unsigned int threads;
	unsigned int private;
};

/*
 * One lock and what it protects: shared by all threads, or one per thread.
 * The protected data has a cache line of its own, so that its writes do not
 * disturb the waiters spinning on the lock word.
 */
struct bench_lock {
	arch_spinlock_t word;		/* the pvlock algorithm's lock word */
	spinlock_t spin;		/* the spinlock_t peer */
	/* written under the lock only */
	unsigned long counter ____cacheline_aligned;
	unsigned int inside;
} ____cacheline_aligned;

/* What every thread of one algorithm's run shares. */
struct bench_shared {
	const struct pvlock_algo *algo;	/* NULL: the spinlock_t peer */
	unsigned int hold_ns, think_ns;
	struct bench_lock lock;		/* unless private=1 */
	/* start and stop */
	bool go ____cacheline_aligned;
	bool stop;
	wait_queue_head_t go_wq;
	atomic_t running;
};

struct bench_thread {
	struct bench_shared *sh;
	struct bench_lock *lock;	/* &sh->lock, or &own */
	struct bench_lock own;
	struct task_struct *task;
	u64 acquisitions;
	u64 violations;
} ____cacheline_aligned;

static DEFINE_MUTEX(bench_mutex);
static char *bench_out;
static size_t bench_out_len;

static void bench_lock(struct bench_shared *sh, struct bench_lock *lk)
{
	if (sh->algo) {
		preempt_disable();
		sh->algo->lock((pvlock_word_t *)&lk->word);
	} else {
		spin_lock(&lk->spin);
	}
}

static void bench_unlock(struct bench_shared *sh, struct bench_lock *lk)
{
	if (sh->algo) {
		sh->algo->unlock((pvlock_word_t *)&lk->word);
		preempt_enable();
	} else {
		spin_unlock(&lk->spin);
	}
}

/*
 * Named pvlock_* so that a sanitizer report on the data it protects (the
 * KCSAN control: ASSERT_EXCLUSIVE_ACCESS below) names pvlock code.
 */
static int pvlock_bench_thread_fn(void *arg)
{
	struct bench_thread *t = arg;
	struct bench_shared *sh = t->sh;
	struct bench_lock *lk = t->lock;

	wait_event(sh->go_wq, READ_ONCE(sh->go) || kthread_should_stop());
	atomic_inc(&sh->running);
	while (!READ_ONCE(sh->stop) && !kthread_should_stop()) {
		bench_lock(sh, lk);
		/* Another thread inside: mutual exclusion is broken. */
		if (READ_ONCE(lk->inside))
			t->violations++;
		WRITE_ONCE(lk->inside, 1);
		if (sh->hold_ns)
			ndelay(sh->hold_ns);
		/*
		 * A plain read-modify-write: lost if two threads overlap. Under
		 * KCSAN, also an assertion that nobody else touches the counter
		 * while we hold the lock (the broken lock's negative control).
		 */
		ASSERT_EXCLUSIVE_ACCESS(lk->counter);
		WRITE_ONCE(lk->counter, READ_ONCE(lk->counter) + 1);
		WRITE_ONCE(lk->inside, 0);
		bench_unlock(sh, lk);
		t->acquisitions++;
		if (sh->think_ns)
			ndelay(sh->think_ns);
		cond_resched();
	}
	atomic_dec(&sh->running);
	/* Wait for kthread_stop(), which reads nothing more from us. */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static void bench_printf(const char *fmt, ...)
{
	va_list args;

	if (bench_out_len >= BENCH_OUT_SIZE - 1)
		return;
	va_start(args, fmt);
	bench_out_len += vscnprintf(bench_out + bench_out_len,
				    BENCH_OUT_SIZE - bench_out_len, fmt, args);
	va_end(args);
}

static int bench_one(const struct bench_cfg *cfg, const struct pvlock_algo *algo)
{
	unsigned int n = cfg->threads ? cfg->threads : num_online_cpus();
	struct bench_thread *threads;
	struct bench_shared *sh;
	u64 total = 0, min = U64_MAX, max = 0, violations = 0, start, ns;
	struct pvlock_wait_stats w0, w;
	u64 counted;
	unsigned int i, cpu;
	int ret = 0;

	n = min_t(unsigned int, n, BENCH_MAX_THREADS);
	/*
	 * An algorithm serves cpu_limit waiters at most (8-bit tickets: 255,
	 * pvlock_glue.h); boot refuses it as the spinlock past that, and the
	 * benchmark runs it with no more threads than it serves.
	 */
	if (algo)
		n = min_t(unsigned int, n, algo->cpu_limit);
	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	threads = kcalloc(n, sizeof(*threads), GFP_KERNEL);
	if (!sh || !threads) {
		ret = -ENOMEM;
		goto out;
	}
	sh->algo = algo;
	/* kzalloc: the lock words are zero, unlocked for every algorithm */
	spin_lock_init(&sh->lock.spin);
	sh->hold_ns = cfg->hold_ns;
	sh->think_ns = cfg->think_ns;
	init_waitqueue_head(&sh->go_wq);

	cpu = cpumask_first(cpu_online_mask);
	for (i = 0; i < n; i++) {
		struct task_struct *task;

		threads[i].sh = sh;
		threads[i].lock = cfg->private ? &threads[i].own : &sh->lock;
		spin_lock_init(&threads[i].own.spin);
		task = kthread_create_on_cpu(pvlock_bench_thread_fn, &threads[i], cpu,
					     "pvlock_bench/%u");
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			n = i;
			goto stop;
		}
		threads[i].task = task;
		wake_up_process(task);
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	}

	pvlock_wait_counts(&w0);
	start = ktime_get_ns();
	WRITE_ONCE(sh->go, true);
	wake_up_all(&sh->go_wq);
	msleep(cfg->duration_ms);
	WRITE_ONCE(sh->stop, true);
	while (atomic_read(&sh->running))
		usleep_range(1000, 2000);
	ns = ktime_get_ns() - start;
	pvlock_wait_counts(&w);

stop:
	for (i = 0; i < n; i++) {
		kthread_stop(threads[i].task);
		total += threads[i].acquisitions;
		violations += threads[i].violations;
		min = min(min, threads[i].acquisitions);
		max = max(max, threads[i].acquisitions);
	}
	if (ret)
		goto out;

	/* Every increment of every lock's counter, against every acquisition. */
	counted = sh->lock.counter;
	for (i = 0; i < n; i++)
		counted += threads[i].own.counter;
	bench_printf("algo=%s threads=%u duration_ms=%u hold_ns=%u think_ns=%u private=%u acquisitions=%llu throughput_per_s=%llu min_thread=%llu max_thread=%llu fairness_permille=%llu violations=%llu lost_updates=%llu waits=%llu wait_timeouts=%llu lost_kicks=%llu late_kicks=%llu nested_kicks=%llu verdict=%s\n",
		     algo ? algo->name : "spinlock", n, cfg->duration_ms,
		     cfg->hold_ns, cfg->think_ns, cfg->private, total,
		     ns ? div64_u64(total * NSEC_PER_SEC, ns) : 0, min, max,
		     max ? div64_u64(min * 1000, max) : 0, violations,
		     total - counted, w.waits - w0.waits,
		     w.timeouts - w0.timeouts, w.lost_kicks - w0.lost_kicks,
		     w.late_kicks - w0.late_kicks, w.nested_kicks - w0.nested_kicks,
		     violations || total != counted ? "FAIL" : "ok");
out:
	kfree(threads);
	kfree(sh);
	return ret;
}

static int bench_parse(char *line, struct bench_cfg *cfg)
{
	char *word;

	strscpy(cfg->algo, "all", sizeof(cfg->algo));
	cfg->duration_ms = 200;
	cfg->hold_ns = 0;
	cfg->think_ns = 0;
	cfg->threads = 0;
	cfg->private = 0;

	while ((word = strsep(&line, " \t\n")) != NULL) {
		char *val;
		unsigned int *dst;

		if (!*word)
			continue;
		val = strchr(word, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(word, "algo")) {
			strscpy(cfg->algo, val, sizeof(cfg->algo));
			continue;
		} else if (!strcmp(word, "duration_ms")) {
			dst = &cfg->duration_ms;
		} else if (!strcmp(word, "hold_ns")) {
			dst = &cfg->hold_ns;
		} else if (!strcmp(word, "think_ns")) {
			dst = &cfg->think_ns;
		} else if (!strcmp(word, "threads")) {
			dst = &cfg->threads;
		} else if (!strcmp(word, "private")) {
			dst = &cfg->private;
		} else {
			return -EINVAL;
		}
		if (kstrtouint(val, 0, dst))
			return -EINVAL;
	}
	/* Bounded: the threads spin on every CPU for the whole window. */
	if (cfg->duration_ms < 1 || cfg->duration_ms > 10000 ||
	    cfg->hold_ns > 1000000 || cfg->think_ns > 1000000 ||
	    cfg->private > 1)
		return -ERANGE;
	return 0;
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct bench_cfg cfg;
	char buf[160];
	unsigned int i;
	bool all, found = false;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	ret = bench_parse(buf, &cfg);
	if (ret)
		return ret;
	all = !strcmp(cfg.algo, "all");

	mutex_lock(&bench_mutex);
	bench_out_len = 0;
	bench_out[0] = '\0';
	for (i = 0; i < pvlock_nr_algos && !ret; i++) {
		const struct pvlock_algo *a = &pvlock_algos[i];

		if (all ? a->bench_only : strcmp(cfg.algo, a->name))
			continue;
		found = true;
		ret = bench_one(&cfg, a);
	}
	if (!ret && (all || !strcmp(cfg.algo, "spinlock"))) {
		found = true;
		ret = bench_one(&cfg, NULL);
	}
	mutex_unlock(&bench_mutex);
	if (!found)
		return -ENOENT;
	return ret ? ret : count;
}

static ssize_t bench_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&bench_mutex);
	ret = simple_read_from_buffer(ubuf, count, ppos, bench_out, bench_out_len);
	mutex_unlock(&bench_mutex);
	return ret;
}

static const struct file_operations bench_fops = {
	.owner = THIS_MODULE,
	.read = bench_read,
	.write = bench_write,
	.llseek = default_llseek,
};

static int algos_show(struct seq_file *m, void *v)
{
	unsigned int i;

	for (i = 0; i < pvlock_nr_algos; i++)
		seq_printf(m, "%s%s\n", pvlock_algos[i].name,
			   pvlock_algos[i].bench_only ? " (benchmark only)" : "");
	seq_puts(m, "spinlock\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(algos);

static int waits_show(struct seq_file *m, void *v)
{
	struct pvlock_wait_stats w;

	pvlock_wait_counts(&w);
	seq_printf(m, "waits=%llu wait_timeouts=%llu lost_kicks=%llu late_kicks=%llu nested_kicks=%llu\n",
		   w.waits, w.timeouts, w.lost_kicks, w.late_kicks, w.nested_kicks);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(waits);

static int areas_show(struct seq_file *m, void *v)
{
	unsigned int cpu;
	phys_addr_t gpa;
	u32 seq;
	u8 flags;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (pvlock_area_sample(cpu, &flags, &seq, &gpa))
			seq_printf(m, "cpu=%u registered=1 preempted=%u preempt_seq=%u gpa=%pa\n",
				   cpu, flags, seq, &gpa);
		else
			seq_printf(m, "cpu=%u registered=0\n", cpu);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(areas);

/*
 * pvlock_test_watch=PA[,PA...]: testing only, the nested lab's kexec and kdump
 * cases. The guest-physical addresses of the shared areas a previous kernel
 * had registered before it kexec'd into this one, or crashed into it as its
 * capture kernel (booted with pvlock=off, so it registers none of its own).
 * They are reserved before anything can be allocated there, filled with a
 * pattern once the kernel is up, and /sys/kernel/debug/pvlock/watch tells
 * whether any byte of them changed since: a host still writing "preempted"
 * or preempt_seq into an area the previous kernel left registered changes
 * them at the vCPU's next preemption, where a real kernel would have put its
 * own data.
 */
#define WATCH_MAX	64
#define WATCH_PATTERN	0x5a

static phys_addr_t watch_pa[WATCH_MAX];
static bool watch_in_use[WATCH_MAX];
static u8 *watch_va[WATCH_MAX];
static unsigned int watch_nr;
static bool watch_bad_arg;

/*
 * On x86 early parameters are parsed before e820__memblock_setup(), after
 * early_reserve_memory() has reserved this kernel's image, its initrd and
 * the setup data: an address already reserved then is this kernel's own
 * (the initrd is even freed to the page allocator later, whatever else
 * reserved it), so it is neither reserved again nor filled, only reported.
 */
static int __init watch_parse(char *arg)
{
	char *word;
	u64 pa;

	while ((word = strsep(&arg, ",")) != NULL) {
		if (watch_nr == WATCH_MAX || kstrtou64(word, 0, &pa) ||
		    !IS_ALIGNED(pa, PVLOCK_AREA_SIZE)) {
			pr_err("pvlock_test_watch: '%s' is not a 64-byte aligned address, or more than %d\n",
			       word, WATCH_MAX);
			watch_bad_arg = true;
			return -EINVAL;
		}
		if (memblock_is_region_reserved(pa, PVLOCK_AREA_SIZE) ||
		    memblock_reserve(pa, PVLOCK_AREA_SIZE))
			watch_in_use[watch_nr] = true;
		watch_pa[watch_nr++] = pa;
	}
	return 0;
}
early_param("pvlock_test_watch", watch_parse);

/*
 * Where this kernel sees a watched area: its direct map, if the address is
 * its own RAM (kexec); in a capture kernel, the crashed kernel's memory lies
 * outside its RAM (it runs in the crashkernel= reservation) and is mapped as
 * /proc/vmcore maps it, write-back. NULL: an address neither covers, which
 * the watch reports (not_ram) rather than guesses at.
 */
static void *__init watch_map(phys_addr_t pa)
{
	unsigned long pfn = PHYS_PFN(pa);

	if (pfn_valid(pfn) && page_is_ram(pfn))
		return phys_to_virt(pa);
	if (is_kdump_kernel())
		return memremap(pa, PVLOCK_AREA_SIZE, MEMREMAP_WB);
	return NULL;
}

static void __init watch_fill(void)
{
	unsigned int i;

	for (i = 0; i < watch_nr; i++) {
		watch_va[i] = watch_in_use[i] ? NULL : watch_map(watch_pa[i]);
		if (watch_va[i])
			memset(watch_va[i], WATCH_PATTERN, PVLOCK_AREA_SIZE);
	}
}

static int watch_show(struct seq_file *m, void *v)
{
	unsigned int i, j, intact = 0, changed = 0, unmapped = 0, in_use = 0;
	const u8 *va;

	for (i = 0; i < watch_nr; i++) {
		if (watch_in_use[i]) {
			in_use++;
			seq_printf(m, "pa=%pa state=in-use\n", &watch_pa[i]);
			continue;
		}
		va = watch_va[i];
		if (!va) {
			unmapped++;
			seq_printf(m, "pa=%pa state=not-ram\n", &watch_pa[i]);
			continue;
		}
		for (j = 0; j < PVLOCK_AREA_SIZE; j++)
			if (READ_ONCE(va[j]) != WATCH_PATTERN)
				break;
		if (j == PVLOCK_AREA_SIZE) {
			intact++;
			seq_printf(m, "pa=%pa state=intact\n", &watch_pa[i]);
		} else {
			changed++;
			seq_printf(m, "pa=%pa state=changed first_offset=%u first_8_bytes=%8ph\n",
				   &watch_pa[i], j, va);
		}
	}
	seq_printf(m, "watched=%u intact=%u changed=%u not_ram=%u in_use=%u bad_arg=%d capture_kernel=%d\n",
		   watch_nr, intact, changed, unmapped, in_use, watch_bad_arg,
		   is_kdump_kernel());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(watch);

static int __init pvlock_bench_init(void)
{
	struct dentry *dir;

	bench_out = kzalloc(BENCH_OUT_SIZE, GFP_KERNEL);
	if (!bench_out)
		return -ENOMEM;
	dir = debugfs_create_dir("pvlock", NULL);
	debugfs_create_file("algos", 0444, dir, NULL, &algos_fops);
	debugfs_create_file("bench", 0600, dir, NULL, &bench_fops);
	debugfs_create_file("waits", 0444, dir, NULL, &waits_fops);
	/* root only: they show guest-physical addresses */
	debugfs_create_file("areas", 0400, dir, NULL, &areas_fops);
	if (watch_nr || watch_bad_arg) {
		watch_fill();
		debugfs_create_file("watch", 0400, dir, NULL, &watch_fops);
	}
	return 0;
}
late_initcall(pvlock_bench_init);
