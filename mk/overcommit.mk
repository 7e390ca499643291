# The main job (issue 5): overcommitted guests in the nested lab, the seeds' tables.
# scripts/overcommit/run does everything (deps, builds, L1 boots, L2 cells, report);
# see its --help and README.md "Results: nested VMs".
## bench           THE MAIN JOB (README): make overcommit, the nested-VM overcommit benchmark
## overcommit      main job: L2 guests at 1x-4x vCPU overcommit, upstream/pvlock/pvlock-noyield, 3 repeats
##                 (OVERCOMMIT_ARGS="--configs ... --workloads ... --repeats N"; ~40 min)
## overcommit-smoke  CI short form: lockbench + kernbench + dbench, 1x and 4x, upstream + pvlock, 1 repeat; fails when the lab breaks
## overcommit-dry-run  print the L1/L2 command lines and guest set-up without running (add --host-kvm for a KVM host)
## overcommit-host-kvm  the main job on a real KVM host with the patched modules loaded (no L1)
## overcommit-selftest  tests of the overcommit scripts and report (cell parsing, CI checks, dry runs), no VM

OVERCOMMIT := $(TOP)/scripts/overcommit/run
OVERCOMMIT_ARGS ?=

# The VM tier's short form of the main job (~7 min after the builds other tiers do).
TEST_TARGETS += overcommit-selftest overcommit-smoke

.PHONY: bench overcommit overcommit-smoke overcommit-dry-run overcommit-host-kvm overcommit-selftest

bench: overcommit

overcommit:
	$(OVERCOMMIT) $(OVERCOMMIT_ARGS)

overcommit-smoke:
	$(OVERCOMMIT) --smoke --out $(BUILD)/overcommit/smoke $(OVERCOMMIT_ARGS)

overcommit-dry-run:
	$(OVERCOMMIT) --dry-run --out $(BUILD)/overcommit/dry-run $(OVERCOMMIT_ARGS)

overcommit-host-kvm:
	$(OVERCOMMIT) --host-kvm $(OVERCOMMIT_ARGS)

overcommit-selftest:
	@$(TOP)/scripts/install-deps python3 >/dev/null
	$(TOP)/selftests/overcommit/test_overcommit.py
