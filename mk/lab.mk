# Nested lab (L0 QEMU TCG -> L1 stock Debian kernel + KVM -> L2 guests).  See docs/lab.md.
LAB := $(TOP)/scripts/lab
N ?= 30
RETRIES ?= 1

.PHONY: lab-deps lab-smoke lab-reliability lab-selftest lab-vm-checks

# The lab scripts' own tests (no VM) run in `make test`.
TEST_TARGETS += lab-selftest

## lab-deps              install the lab's Debian packages (idempotent)
lab-deps:
	$(LAB)/install-deps

## lab-smoke             one L1 boot running one small L2 guest (stock kernels), bounded, retried
lab-smoke: lab-deps
	$(LAB)/smoke --out $(BUILD)/lab/smoke --retries $(RETRIES) --timeout 600

## lab-reliability N=30  run N lab cells, report the failure rate by kind (with/without retries)
lab-reliability: lab-deps
	$(LAB)/reliability -n $(N) --retries $(RETRIES) --out $(BUILD)/lab/reliability

## lab-selftest          check the lab scripts themselves (console-verdict, bad input), no VM
lab-selftest: lab-deps
	$(TOP)/selftests/lab/run

## lab-vm-checks         l1-run verdicts on real L1 boots: pass, fail, lab failure + retry, panic, wedge (~3 min)
lab-vm-checks: lab-deps
	$(TOP)/selftests/lab/vm-checks $(BUILD)/lab/vm-checks

## fresh-root-check      slower tier, by hand: each no-VM tier alone in a fresh debootstrap'd Debian 12 root (do the install steps suffice?)
.PHONY: fresh-root-check
fresh-root-check:
	$(TOP)/scripts/fresh-root-check $(TIERS)
