# The main job (issue 5): overcommitted guests in the nested lab, the seeds' tables.
# scripts/overcommit/run does everything (deps, builds, L1 boots, L2 cells, report);
# see its --help and README.md "Results: nested VMs".
## bench           THE MAIN JOB (README): make overcommit, the nested-VM overcommit benchmark
## overcommit      main job: L2 guests at 1x-4x vCPU overcommit, upstream (PLE)/upstream-nople/pvlock/pvlock-noyield/
##                 pvlock-stockhost, 3 repeats,
##                 pvlock-top in L1 beside every cell (OVERCOMMIT_BENCH_ARGS= drops it)
##                 (OVERCOMMIT_ARGS="--configs ... --workloads ... --repeats N"; ~65 min)
## overcommit-smoke  CI short form: lockbench + kernbench + dbench, 1x and 4x, upstream + pvlock, 1 repeat; fails when the lab breaks
## overcommit-dry-run  print the L1/L2 command lines and guest set-up without running (add --host-kvm for a KVM host)
## overcommit-host-kvm  the main job on a real KVM host with the patched modules loaded (no L1)
## overcommit-host-kvm-lab  the real-KVM-host mode run for real: L1 (a real KVM host with the patched
##                 modules) types `scripts/overcommit/run --host-kvm` (lockbench, 1x and 4x, 1 repeat)
## overcommit-selftest  tests of the overcommit scripts and report (cell parsing, CI checks, dry runs), no VM

OVERCOMMIT := $(TOP)/scripts/overcommit/run
OVERCOMMIT_ARGS ?=
# make bench runs the host tool pvlock-top in L1 beside every cell and reports its table and
# its agreement with KVM's debugfs counters (docs/benchmark.md, "pvlock-top beside the cells");
# OVERCOMMIT_BENCH_ARGS= (or --no-pvlock-top in OVERCOMMIT_ARGS) runs without it.
OVERCOMMIT_BENCH_ARGS ?= --pvlock-top

# The VM tier's short form of the main job (~7 min after the builds other tiers do).
TEST_TARGETS += overcommit-selftest overcommit-smoke overcommit-host-kvm-lab

.PHONY: bench overcommit overcommit-smoke overcommit-dry-run overcommit-host-kvm overcommit-selftest \
	overcommit-host-kvm-lab

bench: overcommit

overcommit:
	$(OVERCOMMIT) $(OVERCOMMIT_BENCH_ARGS) $(OVERCOMMIT_ARGS)

overcommit-smoke:
	$(OVERCOMMIT) --smoke --out $(BUILD)/overcommit/smoke $(OVERCOMMIT_ARGS)

overcommit-dry-run:
	$(OVERCOMMIT) --dry-run --out $(BUILD)/overcommit/dry-run $(OVERCOMMIT_ARGS)

overcommit-host-kvm:
	$(OVERCOMMIT) --host-kvm $(OVERCOMMIT_ARGS)

overcommit-selftest:
	@$(TOP)/scripts/install-deps python3 python3-matplotlib >/dev/null
	$(TOP)/selftests/overcommit/test_overcommit.py

# On L0: build what the host needs, and install and check the L2 image's inputs with a dry
# run (L1 cannot install anything); then one L1 boot with the patched KVM runs the host-kvm
# mode inside it. --check: a missing row, a wrong lock or pvlock counters at 0 fail it.
OVERCOMMIT_HOST_KVM_LAB_ARGS ?= --configs upstream,pvlock --workloads lockbench --levels 1,4 \
	--repeats 1 --check
overcommit-host-kvm-lab:
	$(TOP)/scripts/guest/build-kernel
	$(TOP)/scripts/host/build-kvm-modules --variant good
	$(OVERCOMMIT) --host-kvm --dry-run --no-build --pcpus 0 --out $(BUILD)/overcommit/host-kvm-lab/dry \
		$(OVERCOMMIT_HOST_KVM_LAB_ARGS) >/dev/null
	$(TOP)/scripts/lab/l1-run --kvm-modules $(BUILD)/host/kvm-modules --pin-kvm-keys \
		--timeout 1500 --out $(BUILD)/overcommit/host-kvm-lab/l1 \
		-- $(TOP)/scripts/overcommit/host-kvm-in-l1 $(OVERCOMMIT_HOST_KVM_LAB_ARGS)
	@cat $(BUILD)/overcommit/host-kvm-lab/l1/last/out/host-kvm/report.txt 2>/dev/null || true
