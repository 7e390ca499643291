/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * pvlock hypercall ABI, shared by the guest lock layer and the KVM host handler.
 *
 * This header is the single definition of the interface. It is valid C
 * (kernel and user space) and C++, and includes nothing: the fixed-width
 * types come from the compiler's predefined macros so that the freestanding
 * C++ guest core, the kernel and the selftests can all include it as is.
 *
 * The documentation of every operation is in docs/hypercalls.rst.
 *
 * Register convention (x86, same as every KVM hypercall):
 *   nr = RAX, a0 = RBX, a1 = RCX, a2 = RDX, a3 = RSI, return value in RAX.
 * The guest issues VMCALL (Intel) or VMMCALL (AMD); KVM patches the one the
 * CPU does not support, so either works.
 */
#ifndef PVLOCK_ABI_H
#define PVLOCK_ABI_H

typedef __UINT8_TYPE__ pvlock_u8;
typedef __UINT16_TYPE__ pvlock_u16;
typedef __UINT32_TYPE__ pvlock_u32;
typedef __UINT64_TYPE__ pvlock_u64;
typedef __INT64_TYPE__ pvlock_s64;

#ifdef __cplusplus
#define PVLOCK_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define PVLOCK_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/*
 * Versioning. The major version changes when an operation or the shared area
 * changes incompatibly; a host answers only the major version it implements.
 * The minor version grows with compatible additions, each announced by a
 * feature bit, so a guest tests feature bits, never the minor version.
 */
#define PVLOCK_ABI_MAJOR 1
#define PVLOCK_ABI_MINOR 0

/*
 * The one hypercall number of the ABI. Upstream KVM uses 1..12 and answers
 * every other number with -KVM_ENOSYS, which is how a guest on a stock host
 * learns that the ABI is absent (see PVLOCK_OP_QUERY). The value spells "PVLK"
 * and fits in 32 bits, so it is the same for 32-bit and 64-bit guests.
 */
#define PVLOCK_HC_NR 0x50564c4bUL

/*
 * Discovery and per-VM opt-in: the bit of KVM's PV feature leaf (CPUID
 * 0x40000001, KVM_CPUID_FEATURES, EAX) that says "this VM may use pvlock".
 * KVM_GET_SUPPORTED_CPUID reports it on a host with the handler (unless the
 * kvm.pvlock kill switch is off); the VMM sets it per VM (QEMU: -cpu
 * ...,kvm-pvlock=on), and a guest tests it (kvm_para_has_feature()) before
 * its first pvlock call. Upstream KVM defines bits 0-17 and 24; the host
 * series adds this one to arch/x86/include/uapi/asm/kvm_para.h as
 * KVM_FEATURE_PVLOCK, and where both are visible they must agree.
 */
#define PVLOCK_KVM_FEATURE 23
#ifdef KVM_FEATURE_PVLOCK
PVLOCK_ABI_ASSERT(KVM_FEATURE_PVLOCK == PVLOCK_KVM_FEATURE,
		  "KVM_FEATURE_PVLOCK (kvm_para.h) is PVLOCK_KVM_FEATURE");
#endif

/*
 * The VMM's view of a vCPU's pvlock state: an MSR of KVM's range that only
 * user space reads and writes (KVM_GET_MSRS/KVM_SET_MSRS; a guest's RDMSR or
 * WRMSR of it takes #GP: the guest has the hypercall). A VMM saves and
 * restores it with the vCPU, as it does MSR_KVM_STEAL_TIME, so that the
 * registration and a pending kick survive a migration or a snapshot, and it
 * writes 0 when it resets the vCPU (QEMU's system reset writes every MSR it
 * knows), which unregisters the area and drops the kick, as an INIT inside
 * KVM does. KVM_GET_MSR_INDEX_LIST lists it on a host with the handler.
 *   bit  0     PVLOCK_MSR_AREA_ENABLED: an area is registered, at the GPA in
 *              bits 6-63 (zero when the bit is clear)
 *   bit  1     PVLOCK_MSR_KICK_PENDING: a kick was sent and no wait consumed
 *              it yet
 *   bits 2-5   reserved, zero
 * Restoring an area counts as a preemption: the host writes preempted = 0
 * and bumps preempt_seq past the guest's value before the vCPU runs. The
 * host series names it MSR_KVM_PVLOCK_STATE in kvm_para.h.
 */
#define PVLOCK_MSR_STATE 0x4b564df0U
#define PVLOCK_MSR_AREA_ENABLED ((pvlock_u64)1 << 0)
#define PVLOCK_MSR_KICK_PENDING ((pvlock_u64)1 << 1)
#define PVLOCK_MSR_RESERVED ((pvlock_u64)0x3c)
#define PVLOCK_MSR_GPA_MASK (~(pvlock_u64)0x3f)
#ifdef MSR_KVM_PVLOCK_STATE
PVLOCK_ABI_ASSERT(MSR_KVM_PVLOCK_STATE == PVLOCK_MSR_STATE,
		  "MSR_KVM_PVLOCK_STATE (kvm_para.h) is PVLOCK_MSR_STATE");
#endif

/*
 * a0 of every call: the operation in bits 0-7, the ABI major version the
 * guest speaks in bits 16-23, all other bits zero.
 */
#define PVLOCK_CALL_OP_MASK 0xffUL
#define PVLOCK_CALL_MAJOR_SHIFT 16
#define PVLOCK_CALL_MAJOR_MASK (0xffUL << PVLOCK_CALL_MAJOR_SHIFT)
#define PVLOCK_CALL(op) \
	((unsigned long)(op) | \
	 ((unsigned long)PVLOCK_ABI_MAJOR << PVLOCK_CALL_MAJOR_SHIFT))

/* Operations (a0 bits 0-7). Numbers are never reused. */
#define PVLOCK_OP_QUERY 0	/* -> version and feature mask */
#define PVLOCK_OP_REGISTER 1	/* a1 = GPA of this vCPU's shared area, 0 = off */
#define PVLOCK_OP_WAIT 2	/* a1 = bound in ns: halt until kick/irq/bound */
#define PVLOCK_OP_KICK 3	/* a1 = target vCPU (APIC ID) */
#define PVLOCK_OP_YIELD 4	/* a1 = target vCPU or PVLOCK_VCPU_ANY */
#define PVLOCK_OP_NR 5

/* A vCPU is named by its APIC ID, as KVM_HC_KICK_CPU does. */
#define PVLOCK_VCPU_ANY 0xffffffffUL

/* Longest bound a single PVLOCK_OP_WAIT accepts (1 s), in ns. */
#define PVLOCK_WAIT_MAX_NS 1000000000UL

/*
 * PVLOCK_OP_QUERY result (non-negative):
 *   bits  0-15  minor version of the host
 *   bits 16-23  major version of the host
 *   bits 32-62  feature mask (PVLOCK_F_*)
 */
#define PVLOCK_QUERY_MINOR(r) ((unsigned int)((r) & 0xffff))
#define PVLOCK_QUERY_MAJOR(r) ((unsigned int)(((r) >> 16) & 0xff))
#define PVLOCK_QUERY_FEATURES(r) ((unsigned int)(((r) >> 32) & 0x7fffffff))

/* Feature bits, as returned by PVLOCK_OP_QUERY. */
#define PVLOCK_F_WAIT (1U << 0)		/* PVLOCK_OP_WAIT */
#define PVLOCK_F_KICK (1U << 1)		/* PVLOCK_OP_KICK */
#define PVLOCK_F_YIELD_TO (1U << 2)	/* PVLOCK_OP_YIELD to a named vCPU */
#define PVLOCK_F_YIELD_ANY (1U << 3)	/* PVLOCK_OP_YIELD to PVLOCK_VCPU_ANY */
#define PVLOCK_F_AREA (1U << 4)		/* PVLOCK_OP_REGISTER, preempted state */
#define PVLOCK_F_HOLD_HINT (1U << 5)	/* host prefers lock holders on YIELD_ANY */
#define PVLOCK_F_ALL_V1 0x3fU

/*
 * Errors, returned negated. The values are those of include/uapi/linux/kvm_para.h
 * where KVM has one, so a stock host's -KVM_ENOSYS reads as -PVLOCK_ENOSYS.
 */
#define PVLOCK_EPERM 1		/* guest not at CPL 0 */
#define PVLOCK_ESRCH 3		/* no vCPU with that APIC ID in this VM */
#define PVLOCK_EAGAIN 11	/* yield: nobody preempted to yield to */
#define PVLOCK_EFAULT 14	/* shared area not in guest memory */
#define PVLOCK_EINVAL 22	/* bad argument or nonzero reserved argument */
#define PVLOCK_EPROTONOSUPPORT 93 /* the host does not speak this major version */
#define PVLOCK_EOPNOTSUPP 95	/* unknown operation */
#define PVLOCK_ENOSYS 1000	/* no pvlock on this host (stock KVM, or disabled) */

/* PVLOCK_OP_WAIT results (non-negative): why the vCPU runs again. */
#define PVLOCK_WAKE_KICK 0	/* kicked (possibly before the call) */
#define PVLOCK_WAKE_IRQ 1	/* an interrupt is pending */
#define PVLOCK_WAKE_TIMEOUT 2	/* the bound expired */

/*
 * Per-vCPU shared area, registered with PVLOCK_OP_REGISTER. It lives in guest
 * memory, is 64-byte aligned and exactly one cache line, and must not cross a
 * page (guaranteed by the alignment). Each field has one writer.
 *
 * Host-written (the guest only reads):
 *   preempted      PVLOCK_PREEMPTED while the vCPU thread was scheduled out
 *                  while still runnable (an involuntary preemption, the
 *                  condition KVM uses for vcpu->preempted); 0 when it runs or
 *                  when it halted voluntarily.
 *   preempt_seq    incremented at every involuntary preemption, so a reader
 *                  can tell "was preempted since I last looked".
 *
 * Guest-written (the host only reads, as hints; a wrong hint costs the guest
 * performance and never the host correctness):
 *   wait_vcpu      APIC ID of the vCPU this vCPU is waiting on (a lock
 *                  holder), or PVLOCK_VCPU_ANY when it waits on no one.
 *   locks_held     number of pvlock locks this vCPU holds; the host prefers
 *                  such vCPUs when it picks a yield target on its own.
 *   wait_lock      guest address of the lock being waited on (tracing only).
 */
#define PVLOCK_PREEMPTED (1U << 0)

struct pvlock_vcpu_area {
	/* host-written */
	pvlock_u8 preempted;
	pvlock_u8 pad0[3];
	pvlock_u32 preempt_seq;
	/* guest-written */
	pvlock_u32 wait_vcpu;
	pvlock_u32 locks_held;
	pvlock_u64 wait_lock;
	pvlock_u8 reserved[40];	/* zero; future fields, announced by feature bits */
} __attribute__((aligned(64)));

#define PVLOCK_AREA_SIZE 64
#define PVLOCK_AREA_ALIGN 64

PVLOCK_ABI_ASSERT(sizeof(struct pvlock_vcpu_area) == PVLOCK_AREA_SIZE,
		  "pvlock_vcpu_area must be one 64-byte line");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, preempted) == 0,
		  "preempted at offset 0");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, preempt_seq) == 4,
		  "preempt_seq at offset 4");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, wait_vcpu) == 8,
		  "wait_vcpu at offset 8");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, locks_held) == 12,
		  "locks_held at offset 12");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, wait_lock) == 16,
		  "wait_lock at offset 16");
PVLOCK_ABI_ASSERT(__builtin_offsetof(struct pvlock_vcpu_area, reserved) == 24,
		  "reserved at offset 24");

#endif /* PVLOCK_ABI_H */
