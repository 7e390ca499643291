# Guest kernel: the C++ lock layer built into a Linux 6.12 guest, booted under
# QEMU TCG. See docs/guest-kernel.md.
GUEST_SCRIPTS := $(TOP)/scripts/guest

.PHONY: guest-kernel guest-initramfs guest-checkpatch guest-exports guest-distro-check guest-test guest-test-quick guest-boot \
	guest-contention-cost

# The style tier (seconds, after the kernel build) and the VM tier of `make test`:
# every TCG boot case (cold build ~13 min + ~15 boots).
TEST_TARGETS += guest-checkpatch guest-exports guest-distro-check guest-test

## guest-kernel          build the pvlock guest bzImage (installs deps, unpacks, patches, ccache; incremental)
guest-kernel:
	$(GUEST_SCRIPTS)/build-kernel

## guest-initramfs       the busybox test initramfs (selftests/guest-vm/init + locktorture modules)
guest-initramfs: guest-kernel
	$(GUEST_SCRIPTS)/build-initramfs

## guest-checkpatch      the kernel's checkpatch.pl --strict on the guest patch series and the
##                       guest tests' modules, and checkpatch.pl on the C side of the layer
##                       (the C++ side is not kernel C: checkpatch misreads templates).
##                       pvlock_glue.h's typedef pvlock_word_t is the opaque C/C++ bridge
##                       type (struct qspinlock / pvlock::LockWord).
GUEST_C_FILES := pvlock_main.c pvlock_bench.c pvlock_kernel.h
GUEST_TEST_MODULES := $(TOP)/selftests/guest-vm/rokey/pvlock_rokey.c $(TOP)/selftests/guest-vm/nongpl/pvlock_nongpl.c
guest-checkpatch: guest-kernel
	$(call checkpatch-series,$(BUILD)/guest-linux,$(TOP)/guest/kernel/patches) && \
	./scripts/checkpatch.pl -q --no-tree -f $(addprefix $(TOP)/guest/kernel/,$(GUEST_C_FILES)) && \
	./scripts/checkpatch.pl -q --no-tree --ignore NEW_TYPEDEFS -f $(TOP)/guest/kernel/pvlock_glue.h && \
	./scripts/checkpatch.pl -q --no-tree --strict -f $(GUEST_TEST_MODULES)

## guest-exports         a module with a non-GPL licence that takes spinlocks still links
##                       (pvlock_spin_key and the static-call trampolines are EXPORT_SYMBOL)
guest-exports: guest-kernel
	$(GUEST_SCRIPTS)/check-module-exports

## guest-distro-check    Debian's 6.12 config (NR_CPUS=8192, MAXSMP, IBT) + the pvlock fragment:
##                       olddefconfig keeps the layer on, its objects compile, objtool clean
guest-distro-check: guest-kernel
	$(GUEST_SCRIPTS)/distro-config-check

## guest-test            boot the guest under TCG (1/2/4/8 vCPUs, bad params, forced algorithms, negative control)
guest-test: guest-kernel
	$(TOP)/selftests/guest-vm/run

## guest-test-quick      the same, 2 and 8 vCPUs, one forced algorithm and the negative control
guest-test-quick: guest-kernel
	$(TOP)/selftests/guest-vm/run smp2 smp8 param-unknown force-pvqueued negative

## guest-contention-cost  what the lock:contention_* hooks cost with the tracepoints off: the
##                       in-kernel benchmark at 1x, the kernel against a build without them,
##                       paired TCG boots (scripts/guest/contention-cost; CONTENTION_COST_ARGS=
##                       its options; ~10 min cold + ~8 min of boots)
guest-contention-cost:
	$(GUEST_SCRIPTS)/contention-cost $(CONTENTION_COST_ARGS)

## guest-boot SMP=2 APPEND=..  boot the guest by hand with a shell (Ctrl-A X quits)
guest-boot: guest-initramfs
	qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp $(or $(SMP),2) -m 1G \
		-nographic -no-reboot -kernel $(BUILD)/guest-obj/arch/x86/boot/bzImage \
		-initrd $(BUILD)/guest-vm/initramfs.cpio.gz \
		-append "console=ttyS0 panic=-1 pvlock_test.shell=1 pvlock_test.torture_s=0 pvlock_test.bench_ms=0 $(APPEND)"

# The debug guests (issue 17): pvlock-guest.config + debug.config (lockdep,
# PREEMPT, UBSAN) + kasan.config or kcsan.config, each built beside the main
# guest in its own output directory, sharing the unpacked tree and ccache.
GUEST_DEBUG_SANITIZERS := kasan kcsan
.PHONY: guest-debug-test $(addprefix guest-debug-kernel-,$(GUEST_DEBUG_SANITIZERS))
## guest-debug-kernel-kasan / -kcsan  build a debug guest ($(BUILD)/guest-obj-kasan ...)
$(addprefix guest-debug-kernel-,$(GUEST_DEBUG_SANITIZERS)): guest-debug-kernel-%:
	GUEST_OBJ=$(BUILD)/guest-obj-$* GUEST_MODS=$(BUILD)/guest-modules-$* \
	GUEST_CONFIG_EXTRA="$(TOP)/guest/kernel/config/debug.config $(TOP)/guest/kernel/config/$*.config" \
		$(GUEST_SCRIPTS)/build-kernel

## guest-debug-test      slower tier: the debug guests under TCG at 4 vCPUs (lockdep, PREEMPT,
##                       UBSAN, with KASAN, then with KCSAN): every algorithm's benchmark,
##                       locktorture on every lock type over arch_spin_* with CPU hotplug
##                       and stutter, the sanitizers' negative controls (two kernel builds
##                       of ~25 min each from cold, then 12 boots of 0.5-3 min each)
guest-debug-test: guest-kernel $(addprefix guest-debug-kernel-,$(GUEST_DEBUG_SANITIZERS))
	for s in $(GUEST_DEBUG_SANITIZERS); do \
		$(GUEST_SCRIPTS)/check-sanitized-objects $(BUILD)/guest-obj-$$s || exit 1; done
	@# The check's negative control: the main guest has no sanitizer, and must fail it.
	if $(GUEST_SCRIPTS)/check-sanitized-objects $(BUILD)/guest-obj; then \
		echo "check-sanitized-objects passed a tree without sanitizers" >&2; exit 1; fi
	$(TOP)/selftests/guest-vm/run --debug
