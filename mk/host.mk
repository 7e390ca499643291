# host/: the KVM pvlock handler (patch series against linux-source-6.12), its
# out-of-tree module build, and its KVM selftests, run inside L1.
## host-modules        build kvm.ko/kvm-amd.ko/kvm-intel.ko with host/patches (+ the broken negative-control variant)
## host-checkpatch     scripts/checkpatch.pl --strict on host/patches
## host-selftests-build  build x86_64/pvlock_test + kvm_pv_test, steal_time, kvm_binary_stats_test
## host-selftests      boot L1 with the patched KVM and run those selftests (TAP in $(HOST_LAB_OUT)/selftests)
## host-negative       boot L1 with the broken KVM (drops kicks, ignores the CPUID bit, stale area, RAX overwritten, INIT kept, IF=0 wake, waits out of a halt): passes only if pvlock_test catches it
## host-selftests-stock  the same selftests on L1's stock KVM (pvlock_test must skip, the rest pass)
## host-negative-msrkick  slower tier (~2 min once built; one L1 boot): a KVM that forgets a pending kick when user space
##                     restores state (host/msrkick/: MSR_KVM_PVLOCK_STATE does not save it, KVM_SET_MP_STATE drops it):
##                     pvlock_test's msr_migrate, vmm_reset and the two mp_state_*kick*, and only they, must fail
## host-selftests-full  slower tier: every x86_64 KVM selftest on stock and patched KVM, compared,
##                     in resumable parts (scripts/host/selftests-full)
## host-test           the host tier of make test: host-checkpatch + host-selftests + host-negative

HOST_SCRIPTS := $(TOP)/scripts/host
HOST_MODULES := $(BUILD)/host/kvm-modules
HOST_MODULES_BROKEN := $(BUILD)/host/kvm-modules-broken
HOST_LAB_OUT ?= $(BUILD)/host/lab
HOST_L1_RUN := $(TOP)/scripts/lab/l1-run
HOST_L1_TIMEOUT ?= 1200
# The payload runs in L1, where BUILD is not in the environment: it is told where the selftests are.
HOST_PAYLOAD := $(TOP)/selftests/kvm/run-in-l1.sh --build $(BUILD)
# The cases of pvlock_test that the broken handler (host/negative/) must fail: it drops
# kicks (0001), ignores KVM_FEATURE_PVLOCK (0002: offers it with kvm.pvlock=0, serves a
# vCPU without it under ENFORCE, tracks preemptions of VMs that did not opt in), and
# undoes 0005 (0003: never resolves the area's cache after a memslot change, and lets a
# wait's end overwrite the RAX user space set), 0006 (0004: a waiting vCPU is saved halted)
# and 0007 (0005: a reset by user space, MSR_KVM_PVLOCK_STATE = 0, is ignored; 0003 also
# leaves a restored area unresolved), keeps state across INIT (0006), ends a wait on an
# interrupt the guest cannot take (0007), and undoes 0008 and 0009 (0008: a yield to any
# reads the hint through an unresolved area and WARNs; a wait's expired bound makes a vCPU
# that user space took out of its halt look runnable).  vmm_reset_during_wait (a reset by
# the MSR inside a wait must leave the vCPU runnable, 0009) fails here through 0004 and
# 0005: the reset is ignored and the waiting vCPU is saved halted.  The dropped kicks also
# fail the kick ring and the waits interrupted by signals, and the kicks pending across
# GET/SET_MP_STATE.  (All eight are applied together: a case is listed for the fault it was
# written for; host/README.md says which.)
HOST_NEGATIVE_CASES := kick_before_wait wait_then_kick supported_cpuid enforce_without_bit \
	no_bookkeeping memslot_change set_regs_during_wait mp_state_during_wait \
	mp_state_pending_kick mp_state_kick_while_stopped vmm_reset msr_migrate \
	vmm_reset_during_wait mp_state_reset_during_wait msr_restore_unmapped \
	signal_during_wait irq_during_wait init_during_wait kick_ring_8vcpus kick_ring_64vcpus

.PHONY: host-modules host-checkpatch host-selftests-build host-selftests \
	host-negative host-negative-msrkick host-selftests-stock host-selftests-full host-test

TEST_TARGETS += host-test

host-modules:
	$(HOST_SCRIPTS)/build-kvm-modules

# The new arch/x86/kvm/pvlock.[ch] need no MAINTAINERS entry: "KVM X86" covers arch/x86/kvm/.
host-checkpatch: host-modules
	$(call checkpatch-series,$(BUILD)/host/linux-source-6.12,$(TOP)/host/patches)

host-selftests-build:
	$(HOST_SCRIPTS)/build-selftests

host-selftests: host-modules host-selftests-build
	$(HOST_L1_RUN) --kvm-modules $(HOST_MODULES) --timeout $(HOST_L1_TIMEOUT) \
		--out $(HOST_LAB_OUT)/selftests -- $(HOST_PAYLOAD)
	@cat $(HOST_LAB_OUT)/selftests/last/out/host-selftests.tap

# l1-run exits 0 only if the payload saw exactly the expected failures.  The broken KVM's
# one WARN on L1's console is expected (negative/0008: the unresolved cache's read, which
# msr_restore_unmapped finds in the host's log); any other fails the run.
host-negative: host-modules host-selftests-build
	$(HOST_L1_RUN) --kvm-modules $(HOST_MODULES_BROKEN) --timeout $(HOST_L1_TIMEOUT) \
		--allow-console 'WARNING: CPU: [0-9]+ PID: [0-9]+ at \S+/kvm_main\.c:[0-9]+ kvm_read_guest_offset_cached\+' \
		--out $(HOST_LAB_OUT)/negative -- $(HOST_PAYLOAD) \
		--expect-fail "$(HOST_NEGATIVE_CASES)"

# The faults host-negative's eight cannot show alone, because its dropped kicks fail every
# kick test first: a pending kick lost when user space saves and restores state.  With
# every broken patch applied, msr_migrate also fails on the restored area (0003) before its
# kick is looked at.  vmm_reset reads the pending kick back from the MSR too.
host-negative-msrkick: host-selftests-build
	$(HOST_SCRIPTS)/build-kvm-modules --variant msrkick
	$(HOST_L1_RUN) --kvm-modules $(BUILD)/host/kvm-modules-msrkick --timeout $(HOST_L1_TIMEOUT) \
		--out $(HOST_LAB_OUT)/negative-msrkick -- $(HOST_PAYLOAD) \
		--expect-fail "vmm_reset msr_migrate mp_state_pending_kick mp_state_kick_while_stopped"

host-selftests-stock: host-selftests-build
	$(HOST_L1_RUN) --timeout $(HOST_L1_TIMEOUT) --out $(HOST_LAB_OUT)/stock \
		-- $(HOST_PAYLOAD) --stock

# In HOST_FULL_PARTS parts (default 12), one L1 boot per part and KVM, resumable: run it
# again after an interruption and the finished parts are kept (HOST_FULL_ONLY=K: part K).
host-selftests-full:
	HOST_LAB_OUT=$(HOST_LAB_OUT) $(HOST_SCRIPTS)/selftests-full \
		$(if $(HOST_FULL_ONLY),--only $(HOST_FULL_ONLY))

host-test:
	$(HOST_SCRIPTS)/test-tier
