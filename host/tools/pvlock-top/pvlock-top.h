/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock-top: what the BPF side (pvlock-top.bpf.c) and the user side
 * (pvlock-top.c) share: the map key and value, the histogram size, and the
 * layout of the five kvm_pvlock_* trace entries of
 * host/patches/0003-KVM-x86-pvlock-add-tracepoints.patch.
 */
#ifndef __PVLOCK_TOP_H
#define __PVLOCK_TOP_H

#define PT_COMM_LEN	16
/*
 * log2 buckets of nanoseconds, as bcc's tools print them: bucket i counts
 * [2^i, 2^(i+1)), bucket 0 also counts 0, and the last bucket everything
 * from 2^31 ns (2.1 s) up: it has no upper bound. A wait is bounded by
 * PVLOCK_WAIT_MAX_NS (1 s < 2^30 ns), but its duration is measured when the
 * vCPU runs again, so a VM its VMM stopped inside a wait (a pause, a
 * migration's downtime) can land there. KVM's pvlock_wake_latency_hist
 * buckets by fls64(), one higher: its bucket i+1 is this bucket i.
 */
#define PT_SLOTS	32
#define PT_MAX_VCPUS	8192	/* (VM, vCPU) pairs tracked at once */
#define PT_MAX_VMS	1024

/* How kvm_pvlock_yield says its target was chosen (its "why" string). */
enum pt_why {
	PT_WHY_NAMED,		/* YIELD to the vCPU the guest named */
	PT_WHY_HINTED,		/* YIELD to any: the wait_vcpu hint of the area */
	PT_WHY_HOLDER,		/* YIELD to any: a preempted lock holder */
	PT_WHY_PREEMPTED,	/* YIELD to any: any preempted vCPU */
	PT_WHY_OTHER,		/* a string this tool does not know */
	PT_WHY_NR,
};

/*
 * A VM is the thread group of its vCPU threads (the QEMU process), named by
 * its tgid and the start time of its leader: a tgid that a later process
 * reuses is another VM, and the user side can tell that a VM's process is
 * gone (/proc/TGID/stat has no start time, or another one) and free its
 * entries. The tracepoints carry no VM identifier of their own.
 */
struct pt_vm_id {
	__u32 tgid;
	__u32 pad;		/* zero: part of the hash key */
	__u64 start_ns;		/* group_leader->start_boottime */
};

struct pt_key {
	struct pt_vm_id vm;
	__u32 vcpu_id;
	__u32 pad;		/* zero */
};

/*
 * Counters of one vCPU since the tool attached. Names follow KVM's binary
 * stats where the handler keeps one (pvlock_*), so the two can be compared.
 */
struct pt_vcpu {
	__u64 calls;		/* every pvlock hypercall */
	__u64 errors;		/* ... answered < 0 (pvlock_errors) */
	__u64 waits;		/* WAIT calls accepted (pvlock_waits) */
	__u64 halts;		/* ... of which halted the vCPU */
	__u64 wake[3];		/* waits ended, by PVLOCK_WAKE_* (pvlock_wake_*) */
	__u64 wait_ns;		/* time halted (pvlock_wait_ns) */
	__u64 kick_calls;	/* KICK calls answered 0 */
	__u64 kicks;		/* kicks the handler carried out (pvlock_kicks) */
	__u64 kicks_woke;	/* ... of which found the target halted */
	__u64 kicked;		/* kicks this vCPU received */
	__u64 lat_ns;		/* kick-to-run latency (pvlock_wake_latency_ns) */
	__u64 lat_count;	/* ... number of kicked waits measured */
	__u64 yield_named;	/* YIELD to a named vCPU, attempted */
	__u64 yield_named_ok;	/* ... and successful */
	__u64 yield_any;	/* YIELD to any, attempted (pvlock_yield_any) */
	__u64 yield_any_ok;	/* ... and successful */
	__u64 tries[PT_WHY_NR];	/* kvm_pvlock_yield events, by why */
	__u64 tries_ok[PT_WHY_NR];
	__u64 preempted;	/* vCPU preempted (pvlock_preempted) */
	__u64 preempted_holder;	/* ... while it held a pvlock lock */
	__u64 wait_hist[PT_SLOTS];
	__u64 lat_hist[PT_SLOTS];
};

struct pt_vm {
	char comm[PT_COMM_LEN];	/* of the thread group leader */
};

/*
 * The trace entries, as TP_STRUCT__entry lays them out. They are declared
 * here rather than taken from BTF: the events live in the kvm module, whose
 * BTF an out-of-tree build may not have. pvlock-top.c checks every offset
 * against the event's format file before it attaches, so a patch that moves
 * a field makes the tool refuse to run instead of counting garbage.
 * The first 8 bytes are struct trace_entry (type, flags, preempt_count, pid).
 */
struct pt_call_entry {
	__u64 common;
	__u32 vcpu_id;
	__u64 a0;
	__u64 a1;
	__s64 ret;
	__u8 halted;		/* bool */
};

struct pt_wake_entry {
	__u64 common;
	__u32 vcpu_id;
	__u64 reason;
	__u64 waited_ns;
	__u64 latency_ns;
};

struct pt_kick_entry {
	__u64 common;
	__u32 vcpu_id;
	__u32 target_id;
	__u8 waiting;		/* bool */
};

struct pt_yield_entry {
	__u64 common;
	__u32 vcpu_id;
	__u32 target_id;
	/* __string(why): offset of the string in the entry (low 16 bits), length (high 16) */
	__u32 why_loc;
	__s64 ret;
};

struct pt_preempt_entry {
	__u64 common;
	__u32 vcpu_id;
	__u8 preempted;		/* bool */
	__u8 holder;		/* bool */
	__u32 seq;
};

#endif /* __PVLOCK_TOP_H */
