# The PV path end to end (issues 3 and 4): pvlock guests under the patched KVM in
# the nested lab, the kvm.pvlock=0 fallback, a hostile host, and a negative control.
## nested-test     L1 with the patched (then a hostile) KVM runs pvlock L2 guests: ABI detected,
##                 locktorture clean, host counters moving; locktorture with CPU hotplug cycling, every
##                 re-onlined CPU registered again (its negative control: nested-hotplug);
##                 ptticket refused at 200 possible CPUs and taken at 127 (issue 17);
##                 kvm.pvlock=0 and the hostile host fall back;
##                 then a pvlock guest kexecs, and one crashes into its kdump capture kernel, which
##                 find its old areas untouched, and ones that kept them registered must be caught
##                 (issue 16)
## nested-contention  (slower tier, ~6 min) lock:contention_* and perf lock contention in pvlock and
##                 upstream L2 guests on the patched KVM, with a lock-per-thread control that must fail
## nested-stock    (slower tier, ~5 min) L1 with Debian's stock KVM: a pvlock L2 guest in stock-host
##                 mode (halts, locktorture clean, no pvlock counter), and pvlock_stock=off's upstream
## nested-lifecycle  (slower tier, ~10 min) a pvlock L2 guest under locktorture moved three times between
##                 QEMU processes in L1 (live migration, save to a file and restore, live migration):
##                 finishes clean with no kick lost, every destination's host serves it, and the guest
##                 sees its areas' preempt_seq move throughout; then the same moved by Debian's QEMU, which does not
##                 restore the areas, whose frozen areas must fail that check (issue 16)
## nested-cpu-add  (slower tier, ~5 min) nested-test's cpu-add case (two vCPUs hot-added at APIC IDs
##                 that are not their numbers, kicked and yielded to), then its negative control
##                 on a host that takes an APIC ID for a vCPU index (host/byindex), which must fail
## nested-hotplug  (slower tier, ~13 min) nested-test's hotplug negative control (a guest whose re-onlined
##                 CPUs do not register must be caught), then locktorture with CPU hotplug cycling, pvlock and upstream's lock
##                 interleaved, two guests each, the scheduler's fair server off (NESTED_HP_FAIR=on: on)
## nested-big      (slower tier) a pvlock L2 guest with 64 vCPUs on L1's one CPU: boots, benchmark and
##                 locktorture clean (issue 17)
.PHONY: nested-test nested-contention nested-stock nested-lifecycle nested-cpu-add nested-hotplug nested-big

TEST_TARGETS += nested-test

nested-test:
	$(TOP)/selftests/nested/run patched hostile kexec

nested-contention:
	$(TOP)/selftests/nested/run contention

nested-stock:
	$(TOP)/selftests/nested/run stock

nested-lifecycle:
	$(TOP)/selftests/nested/run lifecycle

nested-cpu-add:
	$(TOP)/selftests/nested/run cpu-add cpu-add-byindex

nested-hotplug:
	$(TOP)/selftests/nested/run hotplug

nested-big:
	$(TOP)/selftests/nested/run big
