// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock-top: watch the pvlock hypercall handler of a KVM host, per VM and
 * per vCPU: waits and why they ended, kicks, directed yields, preempted lock
 * holders, kick-to-run latency and wait-duration histograms.
 *
 * The counting is done by pvlock-top.bpf.c on the kvm_pvlock_* tracepoints
 * of host/patches; this side checks the host, loads the programs, reads the
 * per-vCPU map every interval and prints a table, a summary or JSON lines.
 * docs/observability.md has the how and the numbers.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pvlock_abi.h"
#include "pvlock-top.h"
#include "pvlock-top.skel.h"

#define PROG "pvlock-top"
#define NR_COUNTERS (sizeof(struct pt_vcpu) / sizeof(__u64))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define U(x) ((unsigned long long)(x))	/* __u64 is unsigned long here */

static_assert(sizeof(struct pt_vcpu) % sizeof(__u64) == 0,
	      "pt_vcpu must be a plain array of __u64 for snap_sub()/vm_sum()");

static const char usage_text[] =
"usage: pvlock-top [-i SEC] [-d SEC] [-j] [-p PID] [-v]\n"
"\n"
"Show what the KVM pvlock handler (host/patches) does, per VM and per vCPU,\n"
"from its kvm_pvlock_* tracepoints. A VM is the process of its vCPU threads.\n"
"\n"
"  -i, --interval SEC   refresh the live table every SEC seconds (default 1);\n"
"                       each table counts what happened in its interval\n"
"  -d, --duration SEC   count for SEC seconds (or until SIGINT), print one\n"
"                       summary with histograms, exit\n"
"  -j, --json           JSON lines: one object per interval, or one at the end\n"
"                       with -d\n"
"  -p, --pid PID        only the VM whose process is PID\n"
"  -v, --verbose        show libbpf's messages\n"
"      --fake-data      print one report of made-up counts without touching the\n"
"                       kernel (tests of the output format)\n"
"  -h, --help           this text\n"
"\n"
"Needs root, a kernel with BTF, and kvm.ko built with host/patches.\n";

static struct {
	double interval;
	double duration;
	bool json;
	bool verbose;
	bool fake;
	long pid;
	bool no_sweep;		/* not in the host's pid and time namespaces */
} env = { .interval = 1.0 };

/*
 * SIGINT and SIGTERM stay blocked and end the naps of sleep_until(): no
 * handler, so nothing is shared with one.
 */
static sigset_t stop_signals;
static bool exiting;

/* One line, the program's name first: every failure a user can cause. */
static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* libbpf's own messages are for debugging: -v shows them, else they would bury ours. */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 86400 * 365)
		return false;
	*out = v;
	return true;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "fake-data", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *end;
	int c;

	opterr = 0;	/* getopt's messages take two lines; ours below take one */
	while ((c = getopt_long(argc, argv, ":hi:d:jp:v", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'i':
			if (!parse_secs(optarg, &env.interval))
				return fail(2, "bad interval '%s': a positive number of seconds",
					    optarg);
			break;
		case 'd':
			if (!parse_secs(optarg, &env.duration))
				return fail(2, "bad duration '%s': a positive number of seconds",
					    optarg);
			break;
		case 'j':
			env.json = true;
			break;
		case 'p':
			errno = 0;
			env.pid = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || env.pid <= 0 || env.pid > 0x3fffffff)
				return fail(2, "bad pid '%s'", optarg);
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'F':
			env.fake = true;
			break;
		case ':':
			return fail(2, "option '%s' needs a value (see -h)", argv[optind - 1]);
		default:
			/*
			 * For "--json=1" (a value to an option that takes
			 * none) getopt_long() sets optopt to the option's
			 * short letter: name the word as typed instead.
			 */
			if (optopt && !strncmp(argv[optind - 1], "--", 2) &&
			    strchr(argv[optind - 1], '='))
				return fail(2, "option '%.*s' takes no value (see -h)",
					    (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
			if (optopt && strncmp(argv[optind - 1], "--", 2))
				return fail(2, "unknown option '-%c' (see -h)", optopt);
			return fail(2, "unknown option '%s' (see -h)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(2, "unexpected argument '%s' (see -h)", argv[optind]);
	return 0;
}

/* --- the host: BTF, tracefs, the handler's tracepoints and their layout --- */

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
static const char *tracefs;

static bool has_events(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/events", dir);
	return access(path, F_OK) == 0;
}

/*
 * libbpf finds a tracepoint's id in tracefs. A host may boot without it
 * mounted (this project's build machine does); mount it where the kernel
 * provides the mount point rather than fail on a detail of setup.
 */
static int find_tracefs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		if (has_events(tracefs_dirs[i])) {
			tracefs = tracefs_dirs[i];
			return 0;
		}
	}
	if (mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) == 0 &&
	    has_events(tracefs_dirs[0])) {
		tracefs = tracefs_dirs[0];
		return 0;
	}
	return fail(1,
		    "tracefs is not mounted and mounting it failed (%s): mount -t tracefs nodev %s",
		    strerror(errno), tracefs_dirs[0]);
}

struct field_want {
	const char *name;
	unsigned int offset;
	unsigned int size;
};

#define FIELD(type, f, name) \
	{ name, __builtin_offsetof(type, f), sizeof(((type *)0)->f) }

struct event_want {
	const char *name;
	struct field_want fields[6];
};

static const struct event_want events[] = {
	{ "kvm_pvlock_call", {
		FIELD(struct pt_call_entry, vcpu_id, "vcpu_id"),
		FIELD(struct pt_call_entry, a0, "a0"),
		FIELD(struct pt_call_entry, a1, "a1"),
		FIELD(struct pt_call_entry, ret, "ret"),
		FIELD(struct pt_call_entry, halted, "halted") } },
	{ "kvm_pvlock_wake", {
		FIELD(struct pt_wake_entry, vcpu_id, "vcpu_id"),
		FIELD(struct pt_wake_entry, reason, "reason"),
		FIELD(struct pt_wake_entry, waited_ns, "waited_ns"),
		FIELD(struct pt_wake_entry, latency_ns, "latency_ns") } },
	{ "kvm_pvlock_kick", {
		FIELD(struct pt_kick_entry, vcpu_id, "vcpu_id"),
		FIELD(struct pt_kick_entry, target_id, "target_id"),
		FIELD(struct pt_kick_entry, waiting, "waiting") } },
	{ "kvm_pvlock_yield", {
		FIELD(struct pt_yield_entry, vcpu_id, "vcpu_id"),
		FIELD(struct pt_yield_entry, target_id, "target_id"),
		FIELD(struct pt_yield_entry, why_loc, "why"),
		FIELD(struct pt_yield_entry, ret, "ret") } },
	{ "kvm_pvlock_preempt", {
		FIELD(struct pt_preempt_entry, vcpu_id, "vcpu_id"),
		FIELD(struct pt_preempt_entry, preempted, "preempted"),
		FIELD(struct pt_preempt_entry, holder, "holder"),
		FIELD(struct pt_preempt_entry, seq, "seq") } },
};

/* Hold one event's format file against the layout pvlock-top.h declares. */
static int check_event(const struct event_want *ev)
{
	char path[256], line[512], decl[256], *name;
	const struct field_want *w;
	unsigned int off, size;
	bool seen[6] = {};
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/events/kvm/%s/format", tracefs, ev->name);
	f = fopen(path, "r");
	if (!f)
		return fail(1,
			    "no tracepoint kvm:%s (%s): kvm module without the pvlock handler (host/patches) loaded?",
			    ev->name, path);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " field:%255[^;]; offset:%u; size:%u;", decl, &off, &size) != 3)
			continue;
		/* "unsigned long a0", "__data_loc char[] why": the name is the last word */
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		for (i = 0; i < 6 && ev->fields[i].name; i++) {
			w = &ev->fields[i];
			if (strcmp(w->name, name))
				continue;
			seen[i] = true;
			if (w->offset != off || w->size != size) {
				fclose(f);
				return fail(1,
					    "kvm:%s: field %s is at offset %u size %u, the tool expects %u/%u: it does not match this kernel's pvlock patch",
					    ev->name, name, off, size, w->offset, w->size);
			}
		}
	}
	fclose(f);
	for (i = 0; i < 6 && ev->fields[i].name; i++)
		if (!seen[i])
			return fail(1,
				    "kvm:%s has no field %s: it does not match this kernel's pvlock patch",
				    ev->name, ev->fields[i].name);
	return 0;
}

/* The inode numbers of the initial namespaces (include/linux/proc_ns.h). */
#define PROC_PID_INIT_INO	0xEFFFFFFCU
#define PROC_TIME_INIT_INO	0xEFFFFFFAU

/*
 * Whether this process is in namespace @ns of the host: @init_ino is the
 * initial namespace's inode; a kernel without that kind of namespace has
 * only the host's.
 */
static bool in_host_ns(const char *ns, unsigned long init_ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &st))
		return errno == ENOENT;
	return st.st_ino == init_ino;
}

static int check_host(void)
{
	size_t i;
	int err;

	if (geteuid() != 0)
		return fail(1,
			    "must run as root (loading BPF programs needs CAP_BPF and CAP_PERFMON)");
	/*
	 * BPF sees host pids and boot times; /proc in another pid namespace
	 * has other pids, and in another time namespace other start times:
	 * every VM would look gone. Count on, and say that exits go unseen.
	 */
	if (!in_host_ns("pid", PROC_PID_INIT_INO) || !in_host_ns("time", PROC_TIME_INIT_INO)) {
		env.no_sweep = true;
		fprintf(stderr, PROG
			": not in the host's pid and time namespaces: exited VMs are not detected (their entries stay)\n");
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail(1,
			    "this kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE needs CONFIG_DEBUG_INFO_BTF=y");
	err = find_tracefs();
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		err = check_event(&events[i]);
		if (err)
			return err;
	}
	return 0;
}

/* --- snapshots of the per-vCPU map --- */

struct row {
	struct pt_key key;
	struct pt_vcpu v;
	/* the VM's process is gone: its last counts, its name kept from the map */
	bool exited;
	char comm[PT_COMM_LEN];
};

struct snap {
	struct row *rows;
	size_t n, cap;
};

static int vm_cmp(const struct pt_vm_id *x, const struct pt_vm_id *y)
{
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

/* By VM (tgid, then start: a reused tgid's VMs in the order they started), then vCPU. */
static int key_cmp(const void *a, const void *b)
{
	const struct pt_key *x = a, *y = b;
	int c = vm_cmp(&x->vm, &y->vm);

	if (c)
		return c;
	if (x->vcpu_id != y->vcpu_id)
		return x->vcpu_id < y->vcpu_id ? -1 : 1;
	return 0;
}

static struct row *snap_add(struct snap *s, const struct pt_key *key)
{
	struct row *r;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->rows = realloc(s->rows, s->cap * sizeof(*s->rows));
		if (!s->rows) {
			fail(1, "out of memory");
			exit(1);
		}
	}
	r = &s->rows[s->n++];
	memset(r, 0, sizeof(*r));
	r->key = *key;
	return r;
}

/*
 * BPF only adds entries, and only this side deletes them (sweep_gone(), not
 * during a walk), so walking the keys while BPF adds some is safe.
 */
static int snap_read(int fd, struct snap *s)
{
	struct pt_key key, next, *prev = NULL;
	struct row *r;

	s->n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		r = snap_add(s, &next);
		if (bpf_map_lookup_elem(fd, &next, &r->v))
			s->n--;
		key = next;
		prev = &key;
	}
	qsort(s->rows, s->n, sizeof(*s->rows), key_cmp);
	return 0;
}

/* cur -= prev, row by row: what happened since prev was taken. */
static void snap_sub(struct snap *cur, const struct snap *prev)
{
	const struct row *p;
	__u64 *c;
	size_t i, k;

	for (i = 0; i < cur->n; i++) {
		p = bsearch(&cur->rows[i].key, prev->rows, prev->n, sizeof(*prev->rows), key_cmp);
		if (!p)
			continue;
		c = (__u64 *)&cur->rows[i].v;
		for (k = 0; k < NR_COUNTERS; k++)
			c[k] -= ((const __u64 *)&p->v)[k];
	}
}

static void vm_sum(struct pt_vcpu *sum, const struct pt_vcpu *v)
{
	size_t k;

	for (k = 0; k < NR_COUNTERS; k++)
		((__u64 *)sum)[k] += ((const __u64 *)v)[k];
}

static void snap_copy(struct snap *dst, const struct snap *src)
{
	size_t i;

	dst->n = 0;
	for (i = 0; i < src->n; i++)
		*snap_add(dst, &src->rows[i].key) = src->rows[i];
}

/* dst += src's rows, kept sorted (the summary: the map's VMs and the gone ones). */
static void snap_merge(struct snap *dst, const struct snap *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		*snap_add(dst, &src->rows[i].key) = src->rows[i];
	qsort(dst->rows, dst->n, sizeof(*dst->rows), key_cmp);
}

/* --- made-up counts (--fake-data): every output path without a kernel --- */

static void fake_snap(struct snap *s)
{
	/* three VMs of 2, 3 and 16 vCPUs: the last one's rows overflow a small screen */
	static const __u32 vm_pids[] = { 4242, 4343, 4444 };
	static const unsigned int vm_vcpus[] = { 2, 3, 16 };
	struct pt_key key = {};
	struct pt_vcpu *v;
	struct row *r;
	unsigned int m, c, k;

	for (m = 0; m < 3; m++) {
		for (c = 0; c < vm_vcpus[m]; c++) {
			key.vm.tgid = vm_pids[m];
			key.vm.start_ns = 1000000000ULL * (m + 1);
			key.vcpu_id = c;
			r = snap_add(s, &key);
			/* the second VM's process is gone: its last report */
			r->exited = m == 1;
			if (r->exited)
				snprintf(r->comm, sizeof(r->comm), "qemu-gone-%u", key.vm.tgid);
			v = &r->v;
			k = 10 * (m + 1) + c;
			v->waits = 10 * k;
			v->halts = 8 * k;
			v->wake[PVLOCK_WAKE_KICK] = 7 * k;
			v->wake[PVLOCK_WAKE_IRQ] = 2 * k;
			v->wake[PVLOCK_WAKE_TIMEOUT] = k;
			v->wait_ns = 8 * k * 20000;
			v->wait_hist[14] = 5 * k;
			v->wait_hist[15] = 3 * k;
			v->kick_calls = 9 * k;
			v->kicks = 9 * k;
			v->kicks_woke = 6 * k;
			v->kicked = 9 * k;
			v->lat_count = 6 * k;
			v->lat_ns = 6 * k * 5000;
			v->lat_hist[12] = 6 * k;
			v->yield_named = 4 * k;
			v->yield_named_ok = 2 * k;
			v->yield_any = 3 * k;
			v->yield_any_ok = k;
			v->tries[PT_WHY_NAMED] = 4 * k;
			v->tries_ok[PT_WHY_NAMED] = 2 * k;
			v->tries[PT_WHY_HOLDER] = 2 * k;
			v->tries_ok[PT_WHY_HOLDER] = k;
			v->tries[PT_WHY_PREEMPTED] = k;
			v->preempted = 5 * k;
			v->preempted_holder = k;
			v->errors = 3 * k;
			v->calls = v->waits + v->kick_calls + v->yield_named + v->yield_any + 1;
		}
	}
}

/* --- output --- */

static struct pvlock_top_bpf *skel;

/*
 * The start time (clock ticks since boot, field 22) and the name of process
 * @tgid from /proc/TGID/stat; false with errno ENOENT or ESRCH if there is
 * no such process, another errno if it could not be read.
 */
static bool proc_stat(__u32 tgid, unsigned long long *start, char *comm, size_t len)
{
	char path[64], buf[1024], *open_paren, *close_paren, *f;
	size_t n;
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	/* a process that exits after the open reads as nothing (ESRCH) */
	if (!n && ferror(fp)) {
		int err = errno;

		fclose(fp);	/* may touch errno: keep the read's */
		errno = err;
		return false;
	}
	fclose(fp);
	buf[n] = 0;
	errno = EINVAL;
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return false;
	if (comm)
		snprintf(comm, len, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	/* fields 3 (state) to 22 (starttime) follow the name */
	f = close_paren + 1;
	for (i = 3; i < 22 && f; i++)
		f = strchr(f + 1, ' ');
	if (!f)
		return false;
	*start = strtoull(f + 1, NULL, 10);
	return true;
}

/*
 * Whether VM @id's process is gone: no process @tgid, or one that started at
 * another time (the tgid was reused). /proc gives the start in clock ticks,
 * start_boottime / (NSEC_PER_SEC / CLK_TCK) rounded down, so the two compare
 * exactly. This side must see the pids BPF sees: the host's pid namespace.
 */
static bool vm_gone(const struct pt_vm_id *id)
{
	static long ticks_per_s;
	unsigned long long start;

	if (env.no_sweep)
		return false;
	if (!ticks_per_s)
		ticks_per_s = sysconf(_SC_CLK_TCK);
	/* only "no such process" is gone: any other error says nothing */
	if (!proc_stat(id->tgid, &start, NULL, 0))
		return errno == ENOENT || errno == ESRCH;
	return ticks_per_s > 0 && start != id->start_ns / (1000000000ULL / ticks_per_s);
}

static void vm_comm(const struct row *r, char *buf, size_t len)
{
	unsigned long long start;
	struct pt_vm vm;

	if (r->exited && r->comm[0]) {
		snprintf(buf, len, "%.*s", PT_COMM_LEN, r->comm);
		return;
	}
	if (env.fake) {
		snprintf(buf, len, "qemu-fake-%u", r->key.vm.tgid);
		return;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.vms), &r->key.vm, &vm) && vm.comm[0]) {
		snprintf(buf, len, "%.*s", PT_COMM_LEN, vm.comm);
		return;
	}
	/* (the name map was full when the VM came) */
	if (vm_gone(&r->key.vm) || !proc_stat(r->key.vm.tgid, &start, buf, len))
		snprintf(buf, len, "?");
}

/*
 * The VMs of @seen (the last snapshot) whose process is gone, found before
 * the next snapshot is read: a gone process adds no event, so that snapshot
 * holds all of its counts. mark_gone() flags their rows in it.
 */
static void find_gone(const struct snap *seen, struct snap *gone)
{
	size_t i;

	gone->n = 0;
	for (i = 0; i < seen->n; i++) {
		if (i && !vm_cmp(&seen->rows[i].key.vm, &seen->rows[i - 1].key.vm))
			continue;
		if (vm_gone(&seen->rows[i].key.vm))
			snap_add(gone, &seen->rows[i].key);
	}
}

static void mark_gone(struct snap *s, const struct snap *gone)
{
	struct row *r;
	size_t i, j;

	for (i = 0; i < s->n; i++)
		for (j = 0; j < gone->n; j++) {
			r = &s->rows[i];
			if (r->exited || vm_cmp(&r->key.vm, &gone->rows[j].key.vm))
				continue;
			/* its name, while the map still has it */
			vm_comm(r, r->comm, sizeof(r->comm));
			r->exited = true;
		}
}

/*
 * Free the map entries of @s's exited VMs and take their rows out of @s,
 * into @keep if given (a -d run keeps them for its summary). This is what
 * keeps the maps from filling on a host that keeps starting VMs.
 */
static void sweep_gone(struct snap *s, struct snap *keep)
{
	int vcpus_fd = bpf_map__fd(skel->maps.vcpus), vms_fd = bpf_map__fd(skel->maps.vms);
	size_t i, n = 0;

	for (i = 0; i < s->n; i++) {
		if (!s->rows[i].exited) {
			s->rows[n++] = s->rows[i];
			continue;
		}
		bpf_map_delete_elem(vcpus_fd, &s->rows[i].key);
		if (!i || vm_cmp(&s->rows[i].key.vm, &s->rows[i - 1].key.vm))
			bpf_map_delete_elem(vms_fd, &s->rows[i].key.vm);
		if (keep)
			*snap_add(keep, &s->rows[i].key) = s->rows[i];
	}
	s->n = n;
}

static __u64 dropped_events(void)
{
	return env.fake ? 0 : skel->bss->dropped;
}

/* "1.2ms" style: histograms span ns to seconds. */
static const char *human_ns(__u64 ns, char *buf, size_t len)
{
	if (ns < 10000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 10000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
	return buf;
}

/*
 * The q-quantile of a histogram, as the bound of its log2 bucket: "< 2.1ms",
 * or ">= 2.1s" when it is in the last bucket, which has no upper bound (a
 * wait's duration is measured when the vCPU runs again, so a VM stopped by
 * its VMM inside a wait lands there); "-" when the histogram is empty.
 */
static const char *quantile(const __u64 *hist, double q, char *buf, size_t len)
{
	__u64 total = 0, seen = 0;
	char b[24];
	int i;

	for (i = 0; i < PT_SLOTS; i++)
		total += hist[i];
	if (!total) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (i = 0; i < PT_SLOTS - 1; i++) {
		seen += hist[i];
		if (seen >= q * total)
			break;
	}
	if (i == PT_SLOTS - 1)
		snprintf(buf, len, ">= %s", human_ns(1ULL << i, b, sizeof(b)));
	else
		snprintf(buf, len, "< %s", human_ns(2ULL << i, b, sizeof(b)));
	return buf;
}

static void print_hist(const char *title, const __u64 *hist)
{
	int i, lo = PT_SLOTS, hi = -1, stars, width = 40;
	__u64 max = 0;

	for (i = 0; i < PT_SLOTS; i++) {
		if (!hist[i])
			continue;
		if (i < lo)
			lo = i;
		hi = i;
		if (hist[i] > max)
			max = hist[i];
	}
	printf("  %s\n", title);
	if (hi < 0) {
		printf("    (none)\n");
		return;
	}
	printf("    %23s : %-8s distribution\n", "ns", "count");
	for (i = lo; i <= hi; i++) {
		stars = (int)((hist[i] * width + max - 1) / max);
		/* the last bucket has no upper bound (pvlock-top.h) */
		if (i == PT_SLOTS - 1)
			printf("    %10llu -> %-9s : %-8llu |%-*.*s|\n", 1ULL << i, "more",
			       (unsigned long long)hist[i], width, stars,
			       "****************************************");
		else
			printf("    %10llu -> %-9llu : %-8llu |%-*.*s|\n",
			       i ? 1ULL << i : 0ULL, (2ULL << i) - 1,
			       (unsigned long long)hist[i], width, stars,
			       "****************************************");
	}
}

static void print_header_row(void)
{
	printf(" %5s %7s %7s %6s %6s %5s %5s %6s %6s %6s %6s %6s %6s %6s %6s %7s %6s\n",
	       "vcpu", "calls", "waits", "halts", "w:kick", "w:irq", "w:tmo",
	       "kcalls", "kicks", "woke", "recvd", "y:name", "ok", "y:any", "ok",
	       "preempt", "holder");
}

static void print_row(const char *label, const struct pt_vcpu *v)
{
	printf(" %5s %7llu %7llu %6llu %6llu %5llu %5llu", label,
	       U(v->calls), U(v->waits), U(v->halts), U(v->wake[PVLOCK_WAKE_KICK]),
	       U(v->wake[PVLOCK_WAKE_IRQ]), U(v->wake[PVLOCK_WAKE_TIMEOUT]));
	printf(" %6llu %6llu %6llu %6llu %6llu %6llu %6llu %6llu %7llu %6llu\n",
	       U(v->kick_calls), U(v->kicks), U(v->kicks_woke), U(v->kicked),
	       U(v->yield_named), U(v->yield_named_ok), U(v->yield_any), U(v->yield_any_ok),
	       U(v->preempted), U(v->preempted_holder));
}

static void print_vm_notes(const struct pt_vcpu *t)
{
	char a[32], b[32], c[32], d[32];
	__u64 halted = 0;
	int i;

	for (i = 0; i < PT_SLOTS; i++)
		halted += t->wait_hist[i];
	printf("   wait: %llu ended, avg %s, p50 %s, p99 %s;",
	       U(t->wake[0] + t->wake[1] + t->wake[2]),
	       human_ns(halted ? t->wait_ns / halted : 0, a, sizeof(a)),
	       quantile(t->wait_hist, 0.5, b, sizeof(b)),
	       quantile(t->wait_hist, 0.99, c, sizeof(c)));
	printf(" kick->run: %llu, avg %s, p99 %s\n", U(t->lat_count),
	       human_ns(t->lat_count ? t->lat_ns / t->lat_count : 0, a, sizeof(a)),
	       quantile(t->lat_hist, 0.99, d, sizeof(d)));
	printf("   yield targets tried/ok: named %llu/%llu hinted %llu/%llu",
	       U(t->tries[PT_WHY_NAMED]), U(t->tries_ok[PT_WHY_NAMED]),
	       U(t->tries[PT_WHY_HINTED]), U(t->tries_ok[PT_WHY_HINTED]));
	printf(" holder %llu/%llu preempted %llu/%llu; errors %llu\n",
	       U(t->tries[PT_WHY_HOLDER]), U(t->tries_ok[PT_WHY_HOLDER]),
	       U(t->tries[PT_WHY_PREEMPTED]), U(t->tries_ok[PT_WHY_PREEMPTED]),
	       U(t->errors));
}

static bool wanted(__u32 tgid)
{
	return !env.pid || tgid == (__u32)env.pid;
}

/* Rows [*i, end) of one VM; their sum in *total. */
static size_t vm_rows(const struct snap *s, size_t i, struct pt_vcpu *total)
{
	size_t end = i;

	memset(total, 0, sizeof(*total));
	while (end < s->n && !vm_cmp(&s->rows[end].key.vm, &s->rows[i].key.vm))
		vm_sum(total, &s->rows[end++].v);
	return end;
}

static int term_lines(void)
{
	struct winsize ws;

	/* smaller: not a screen to redraw (the first VM's block and two cuts need 11) */
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 12)
		return 0;
	return ws.ws_row - 1;	/* the cursor ends on the last one */
}

/* The live table turned the terminal's line wrap off (print_table()). */
static bool live_screen;

/* How many wanted VMs the rows from i on hold (rows are sorted by VM). */
static size_t vms_from(const struct snap *s, size_t i)
{
	struct pt_vcpu sum;
	size_t n = 0;

	while (i < s->n) {
		n += wanted(s->rows[i].key.vm.tgid);
		i = vm_rows(s, i, &sum);
	}
	return n;
}

/*
 * A table: per VM a total row, its notes, and its vCPUs while the screen
 * lasts; in the live mode (a terminal) what does not fit is cut, and the
 * cut says how many vCPUs or VMs it left out.
 */
static void print_table(const struct snap *s, double secs, bool summary)
{
	int lines = summary ? 0 : term_lines(), used, reserve;
	struct pt_vcpu total;
	char comm[64], label[16], tbuf[32];
	size_t i, j, end, vms = 0;
	time_t now = time(NULL);

	/*
	 * top-like: one screen, redrawn, with line wrap off (a row wider than
	 * the terminal is cut at its edge, not wrapped onto the next line,
	 * which the line count below would not see); main() turns it on again
	 */
	if (lines) {
		printf("\033[?7l\033[H\033[J");
		live_screen = true;
	}
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime(&now));
	printf("pvlock-top %s  %s %.1f s", tbuf, summary ? "summary of" : "interval", secs);
	if (dropped_events())
		printf("  (%llu events dropped: maps full)", U(dropped_events()));
	printf("\n");
	used = 1;
	for (i = 0; i < s->n; i = end) {
		end = vm_rows(s, i, &total);
		if (!wanted(s->rows[i].key.vm.tgid))
			continue;
		/* the two lines of a "more VMs" cut, if one may follow this VM */
		reserve = vms_from(s, end) ? 2 : 0;
		/* the first VM always; a later one if its six lines and one more fit */
		if (lines && vms && used + 7 + reserve > lines) {
			printf("\n   ... %zu more VMs (-p PID shows one)\n", vms_from(s, i));
			break;
		}
		vms++;
		vm_comm(&s->rows[i], comm, sizeof(comm));
		printf("\nVM pid %u %s, %zu vCPUs seen%s\n", s->rows[i].key.vm.tgid, comm, end - i,
		       s->rows[i].exited ? " (exited)" : "");
		print_header_row();
		print_row("all", &total);
		print_vm_notes(&total);
		used += 6;
		for (j = i; j < end; j++) {
			/* a row that is not the last needs room for a cut after it */
			if (lines && used + reserve + (j + 1 < end ? 2 : 1) > lines) {
				printf("   ... %zu more vCPUs\n", end - j);
				used++;
				break;
			}
			snprintf(label, sizeof(label), "%u", s->rows[j].key.vcpu_id);
			print_row(label, &s->rows[j].v);
			used++;
		}
		if (summary) {
			print_hist("wait duration (halted waits, kvm_pvlock_wake):",
				   total.wait_hist);
			print_hist("kick-to-run latency (kicked waits):", total.lat_hist);
		}
	}
	if (!vms)
		printf("\nno pvlock activity%s\n", env.pid ? " from that pid" : "");
	fflush(stdout);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		/*
		 * (and bytes past ASCII: a comm cut at 15 bytes may end inside
		 * a UTF-8 sequence, which would make the line invalid JSON)
		 */
		else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_hist(const char *name, const __u64 *hist)
{
	int i, last = -1;

	for (i = 0; i < PT_SLOTS; i++)
		if (hist[i])
			last = i;
	printf(",\"%s\":[", name);
	for (i = 0; i <= last; i++)
		printf("%s%llu", i ? "," : "", U(hist[i]));
	printf("]");
}

static void json_why(const char *name, const __u64 *v)
{
	printf(",\"%s\":{\"named\":%llu,\"hinted\":%llu,\"holder\":%llu",
	       name, U(v[PT_WHY_NAMED]), U(v[PT_WHY_HINTED]), U(v[PT_WHY_HOLDER]));
	printf(",\"preempted\":%llu,\"other\":%llu}",
	       U(v[PT_WHY_PREEMPTED]), U(v[PT_WHY_OTHER]));
}

/* The counters of one vCPU or VM; the pvlock_* names are KVM's binary stats. */
static void json_counters(const struct pt_vcpu *v)
{
	printf("\"calls\":%llu,\"pvlock_errors\":%llu,\"pvlock_waits\":%llu,\"halts\":%llu",
	       U(v->calls), U(v->errors), U(v->waits), U(v->halts));
	printf(",\"pvlock_wake_kick\":%llu,\"pvlock_wake_irq\":%llu,\"pvlock_wake_timeout\":%llu",
	       U(v->wake[PVLOCK_WAKE_KICK]), U(v->wake[PVLOCK_WAKE_IRQ]),
	       U(v->wake[PVLOCK_WAKE_TIMEOUT]));
	printf(",\"pvlock_wait_ns\":%llu,\"kick_calls\":%llu,\"pvlock_kicks\":%llu",
	       U(v->wait_ns), U(v->kick_calls), U(v->kicks));
	printf(",\"kicks_woke\":%llu,\"kicks_received\":%llu", U(v->kicks_woke), U(v->kicked));
	printf(",\"pvlock_wake_latency_ns\":%llu,\"latency_count\":%llu",
	       U(v->lat_ns), U(v->lat_count));
	printf(",\"pvlock_yield_attempted\":%llu,\"pvlock_yield_successful\":%llu",
	       U(v->yield_named + v->yield_any), U(v->yield_named_ok + v->yield_any_ok));
	printf(",\"yield_named_attempted\":%llu,\"yield_named_successful\":%llu",
	       U(v->yield_named), U(v->yield_named_ok));
	printf(",\"pvlock_yield_any\":%llu,\"yield_any_successful\":%llu",
	       U(v->yield_any), U(v->yield_any_ok));
	printf(",\"pvlock_yield_any_hinted\":%llu,\"pvlock_yield_any_holder\":%llu",
	       U(v->tries_ok[PT_WHY_HINTED]), U(v->tries_ok[PT_WHY_HOLDER]));
	json_why("yield_tries", v->tries);
	json_why("yield_tries_successful", v->tries_ok);
	printf(",\"pvlock_preempted\":%llu,\"preempted_holder\":%llu",
	       U(v->preempted), U(v->preempted_holder));
	json_hist("wait_hist", v->wait_hist);
	json_hist("latency_hist", v->lat_hist);
}

static void print_json(const struct snap *s, double secs, bool summary)
{
	struct pt_vcpu total;
	char comm[64], tbuf[40];
	size_t i, j, end;
	bool first = true;
	time_t now = time(NULL);

	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	printf("{\"type\":\"%s\",\"time\":\"%s\",\"seconds\":%.3f,\"dropped\":%llu",
	       summary ? "summary" : "interval", tbuf, secs, U(dropped_events()));
	printf(",\"hist_unit\":\"ns, log2: bucket i counts [2^i, 2^(i+1)), bucket 0 also 0\"");
	printf(",\"vms\":[");
	for (i = 0; i < s->n; i = end) {
		end = vm_rows(s, i, &total);
		if (!wanted(s->rows[i].key.vm.tgid))
			continue;
		vm_comm(&s->rows[i], comm, sizeof(comm));
		printf("%s{\"pid\":%u,\"comm\":", first ? "" : ",", s->rows[i].key.vm.tgid);
		json_str(comm);
		printf(",\"start_boottime_ns\":%llu,\"exited\":%s",
		       U(s->rows[i].key.vm.start_ns), s->rows[i].exited ? "true" : "false");
		printf(",\"total\":{");
		json_counters(&total);
		printf("},\"vcpus\":[");
		for (j = i; j < end; j++) {
			printf("%s{\"vcpu\":%u,", j == i ? "" : ",", s->rows[j].key.vcpu_id);
			json_counters(&s->rows[j].v);
			printf("}");
		}
		printf("]}");
		first = false;
	}
	printf("]}\n");
	fflush(stdout);
}

static void report(const struct snap *s, double secs, bool summary)
{
	if (env.json)
		print_json(s, secs, summary);
	else
		print_table(s, secs, summary);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until @until (monotonic seconds) or until SIGINT or SIGTERM comes. */
static void sleep_until(double until)
{
	struct timespec ts;
	double left;

	while (!exiting && (left = until - now_s()) > 0) {
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		if (sigtimedwait(&stop_signals, NULL, &ts) > 0)
			exiting = true;
	}
}

/* Exit status 1 if anything written to stdout was lost (a full disk). */
static int output_status(void)
{
	if (fflush(stdout))
		return fail(1, "writing the output failed: %s", strerror(errno));
	/* (an earlier write's errno may have been overwritten since: no reason) */
	if (ferror(stdout))
		return fail(1, "writing the output failed (an earlier write)");
	return 0;
}

int main(int argc, char **argv)
{
	struct snap cur = {}, prev = {}, delta = {}, gone = {}, kept = {};
	double start, next;
	int err, fd;

	err = parse_args(argc, argv);
	if (err)
		return err;
	if (env.fake) {
		fake_snap(&cur);
		report(&cur, env.duration ? env.duration : env.interval, env.duration > 0);
		if (live_screen)
			printf("\033[?7h");
		return output_status();
	}
	err = check_host();
	if (err)
		return err;
	/* Blocked before the programs attach: a later Ctrl-C ends a -d run with its summary. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);

	libbpf_set_print(print_libbpf);
	skel = pvlock_top_bpf__open_and_load();
	if (!skel)
		return fail(1, "loading the BPF programs failed: %s (-v shows libbpf's log)",
			    strerror(errno));
	err = pvlock_top_bpf__attach(skel);
	if (err) {
		pvlock_top_bpf__destroy(skel);
		return fail(1,
			    "attaching to the kvm_pvlock_* tracepoints failed: %s (-v shows libbpf's log)",
			    strerror(-err));
	}
	fd = bpf_map__fd(skel->maps.vcpus);

	start = now_s();
	if (env.duration) {
		/* On stderr in JSON mode too: scripts wait for it to know the tool is attached. */
		fprintf(stderr, PROG ": counting for %.1f s (Ctrl-C ends it early)\n",
			env.duration);
		/*
		 * Every interval, the VMs gone since the last look leave the
		 * maps for the summary's list of exited VMs (kept).
		 */
		for (next = start + env.interval; !exiting; next += env.interval) {
			sleep_until(next < start + env.duration ? next : start + env.duration);
			find_gone(&prev, &gone);
			snap_read(fd, &cur);
			mark_gone(&cur, &gone);
			if (exiting || now_s() >= start + env.duration)
				break;
			sweep_gone(&cur, &kept);
			snap_copy(&prev, &cur);
			/* after a stop (Ctrl-Z), one look for the time missed, not a burst */
			if (next + env.interval < now_s())
				next = now_s();
		}
		snap_merge(&cur, &kept);
		report(&cur, now_s() - start, true);
	} else {
		double last = start, t;

		for (next = start + env.interval; !exiting; next += env.interval) {
			sleep_until(next);
			if (exiting)
				break;
			find_gone(&prev, &gone);
			snap_read(fd, &cur);
			mark_gone(&cur, &gone);
			t = now_s();
			snap_copy(&delta, &cur);
			snap_sub(&delta, &prev);
			/* the time the counts cover, which a stop (Ctrl-Z) stretches */
			report(&delta, t - last, false);
			/* an exited VM is shown once more, with its last counts, then freed */
			sweep_gone(&cur, NULL);
			snap_copy(&prev, &cur);
			last = t;
			/* after a stop, one report for the time missed, not a burst */
			if (next + env.interval < t)
				next = t;
		}
	}
	if (live_screen)
		printf("\033[?7h");	/* line wrap on again */
	pvlock_top_bpf__destroy(skel);
	free(cur.rows);
	free(prev.rows);
	free(delta.rows);
	free(gone.rows);
	free(kept.rows);
	return output_status();
}
