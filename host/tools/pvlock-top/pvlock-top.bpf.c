// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pvlock-top: count what the pvlock hypercall handler does, per VM (the
 * tgid of the vCPU thread, i.e. the QEMU process) and per vCPU, from the
 * kvm_pvlock_* tracepoints of host/patches.
 *
 * Every counter is kept so that it can be held against the handler's own
 * binary stats (see the field comments in pvlock-top.h): the rules below
 * follow where pvlock.c increments each stat.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pvlock_abi.h"
#include "pvlock-top.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_MAX_VCPUS);
	__type(key, struct pt_key);
	__type(value, struct pt_vcpu);
} vcpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PT_MAX_VMS);
	__type(key, struct pt_vm_id);
	__type(value, struct pt_vm);
} vms SEC(".maps");

/* Events lost because a map was full: the user side reports them. */
__u64 dropped;

/* A new entry starts from this (too large for the 512-byte BPF stack). */
static struct pt_vcpu zero;

static __always_inline void inc(__u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

static __always_inline void add(__u64 *c, __u64 v)
{
	__sync_fetch_and_add(c, v);
}

/* floor(log2(v)), 0 for 0 and 1; a binary search, so there is no loop. */
static __always_inline __u32 slot_of(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r < PT_SLOTS ? r : PT_SLOTS - 1;
}

/*
 * Name the VM after its thread group leader (vCPU threads are "CPU n/KVM"),
 * once per VM: the user side deletes the entry when the VM's process is gone.
 */
static __always_inline void note_vm(const struct pt_vm_id *id, struct task_struct *task)
{
	struct pt_vm vm = {};

	if (bpf_map_lookup_elem(&vms, id))
		return;
	BPF_CORE_READ_STR_INTO(&vm.comm, task, group_leader, comm);
	bpf_map_update_elem(&vms, id, &vm, BPF_NOEXIST);
}

/*
 * The counters of vCPU @vcpu_id of the current task's VM. Every event runs
 * on a thread of that VM: the vCPU's own thread for call, wake and preempt,
 * the kicker's or yielder's for kick and yield, whose target is in the same
 * VM.
 */
static __always_inline struct pt_vcpu *vcpu_of(__u32 vcpu_id)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pt_key key = {};
	struct pt_vcpu *s;

	key.vm.tgid = bpf_get_current_pid_tgid() >> 32;
	key.vm.start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	key.vcpu_id = vcpu_id;
	s = bpf_map_lookup_elem(&vcpus, &key);
	if (s)
		return s;
	bpf_map_update_elem(&vcpus, &key, &zero, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&vcpus, &key);
	if (!s) {
		inc(&dropped);
		return NULL;
	}
	/* named once it has an entry: the user side frees both by the entry's VM */
	note_vm(&key.vm, task);
	return s;
}

SEC("tracepoint/kvm/kvm_pvlock_call")
int pt_call(struct pt_call_entry *ctx)
{
	__u64 op = ctx->a0 & PVLOCK_CALL_OP_MASK;
	bool any = ctx->a1 == PVLOCK_VCPU_ANY;
	long ret = ctx->ret;
	struct pt_vcpu *s;

	s = vcpu_of(ctx->vcpu_id);
	if (!s)
		return 0;
	inc(&s->calls);
	if (ret < 0) {
		inc(&s->errors);
		/*
		 * pvlock_yield() counts a yield as attempted unless the named
		 * target does not exist (-ESRCH); "nobody to yield to" is the
		 * only other error it returns.
		 */
		if (op == PVLOCK_OP_YIELD && ret == -PVLOCK_EAGAIN)
			inc(any ? &s->yield_any : &s->yield_named);
		return 0;
	}

	switch (op) {
	case PVLOCK_OP_WAIT:
		inc(&s->waits);
		/*
		 * A halted vCPU's wait ends in kvm_pvlock_wait_end(), which
		 * fires kvm_pvlock_wake; one that did not halt (kick already
		 * pending, or a zero bound) ended here, and ret says why.
		 */
		if (ctx->halted)
			inc(&s->halts);
		else if (ret <= PVLOCK_WAKE_TIMEOUT)
			inc(&s->wake[ret]);
		break;
	case PVLOCK_OP_KICK:
		inc(&s->kick_calls);
		break;
	case PVLOCK_OP_YIELD:
		if (any) {
			inc(&s->yield_any);
			inc(&s->yield_any_ok);
		} else {
			inc(&s->yield_named);
			inc(&s->yield_named_ok);
		}
		break;
	}
	return 0;
}

SEC("tracepoint/kvm/kvm_pvlock_wake")
int pt_wake(struct pt_wake_entry *ctx)
{
	struct pt_vcpu *s;

	s = vcpu_of(ctx->vcpu_id);
	if (!s)
		return 0;
	if (ctx->reason <= PVLOCK_WAKE_TIMEOUT)
		inc(&s->wake[ctx->reason]);
	add(&s->wait_ns, ctx->waited_ns);
	inc(&s->wait_hist[slot_of(ctx->waited_ns)]);
	/*
	 * The handler reports latency 0 when the kick came before this wait
	 * began (nothing to measure); a measured 0 ns cannot happen.
	 */
	if (ctx->reason == PVLOCK_WAKE_KICK && ctx->latency_ns) {
		add(&s->lat_ns, ctx->latency_ns);
		inc(&s->lat_count);
		inc(&s->lat_hist[slot_of(ctx->latency_ns)]);
	}
	return 0;
}

SEC("tracepoint/kvm/kvm_pvlock_kick")
int pt_kick(struct pt_kick_entry *ctx)
{
	struct pt_vcpu *s;

	s = vcpu_of(ctx->vcpu_id);
	if (s) {
		inc(&s->kicks);
		if (ctx->waiting)
			inc(&s->kicks_woke);
	}
	s = vcpu_of(ctx->target_id);
	if (s)
		inc(&s->kicked);
	return 0;
}

SEC("tracepoint/kvm/kvm_pvlock_yield")
int pt_yield(struct pt_yield_entry *ctx)
{
	char why[12] = {};
	struct pt_vcpu *s;
	__u32 w;

	s = vcpu_of(ctx->vcpu_id);
	if (!s)
		return 0;
	/* why is a __string: the text sits in the entry, at the __data_loc offset. */
	bpf_probe_read_kernel_str(why, sizeof(why),
				  (void *)ctx + (ctx->why_loc & 0xffff));
	if (why[0] == 'n')
		w = PT_WHY_NAMED;
	else if (why[0] == 'h' && why[1] == 'i')
		w = PT_WHY_HINTED;
	else if (why[0] == 'h' && why[1] == 'o')
		w = PT_WHY_HOLDER;
	else if (why[0] == 'p')
		w = PT_WHY_PREEMPTED;
	else
		w = PT_WHY_OTHER;
	inc(&s->tries[w]);
	if (!ctx->ret)
		inc(&s->tries_ok[w]);
	return 0;
}

SEC("tracepoint/kvm/kvm_pvlock_preempt")
int pt_preempt(struct pt_preempt_entry *ctx)
{
	struct pt_vcpu *s;

	/* Only "preempted" counts; "runs again" closes the same episode. */
	if (!ctx->preempted)
		return 0;
	s = vcpu_of(ctx->vcpu_id);
	if (!s)
		return 0;
	inc(&s->preempted);
	if (ctx->holder)
		inc(&s->preempted_holder);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
