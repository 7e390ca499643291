# pvlock top-level Makefile: the entry point for every build and test.
# Each area adds its targets in mk/<area>.mk; `make help` lists them.

.DEFAULT_GOAL := help
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
export TOP BUILD
# GNU make cannot name a path with a space in a rule: refuse at once rather than fail later.
ifneq ($(words $(TOP)),1)
$(error pvlock: the checkout path '$(TOP)' contains a space, which GNU make cannot handle in rules; clone it to a path without spaces)
endif
ifneq ($(words $(BUILD)),1)
$(error pvlock: BUILD='$(BUILD)' contains a space, which GNU make cannot handle in rules; choose a path without spaces)
endif

# Each fragment appends its test tier to TEST_TARGETS.
TEST_TARGETS :=

# $(call checkpatch-series,KERNEL_TREE,PATCH_DIR): the tree's checkpatch.pl --strict on every
# patch of a series. FILE_PATH_CHANGES only asks whether MAINTAINERS needs updating for a new
# file; the series' new files sit in directories whose entries already cover them.
checkpatch-series = cd $(1) && for p in $(2)/0*.patch; do \
	./scripts/checkpatch.pl --strict -q --ignore FILE_PATH_CHANGES "$$p" || exit 1; done
-include $(sort $(wildcard $(TOP)/mk/*.mk))

## test            every test tier, in order (what .ci/run runs; see README.md)
.PHONY: test
test:
	@$(TOP)/scripts/run-tiers $(TEST_TARGETS)

.PHONY: help
help:
	@echo "pvlock targets:"
	@grep -h '^## ' $(TOP)/Makefile $(TOP)/mk/*.mk | sed 's/^## /  /'
