# pvlock top-level Makefile: the entry point for every build and test.
# Each area adds its targets in mk/<area>.mk; `make help` lists them.

.DEFAULT_GOAL := help
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
export TOP BUILD

-include $(sort $(wildcard $(TOP)/mk/*.mk))

.PHONY: help
help:
	@echo "pvlock targets:"
	@grep -h '^## ' $(TOP)/mk/*.mk | sed 's/^## /  /'
