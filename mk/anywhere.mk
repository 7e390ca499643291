# Any checkout location (issue 20): a copy of the checkout under /tmp, read-only with BUILD
# elsewhere, runs the no-VM tiers and one nested-lab cell; a path with a space is refused.
## anywhere-test   the checkout copied under /tmp (then read-only, BUILD=/tmp/...): no-VM tiers + lab-smoke
.PHONY: anywhere-test

TEST_TARGETS += anywhere-test

anywhere-test:
	$(TOP)/selftests/anywhere/run
