# guest/core and its user-space lab: tests and the overcommit benchmark.
## core-test       lock algorithms: schedule exploration, real threads, TSan/UBSan, freestanding build
## bench-user      user-space overcommit lab (threads as vCPUs, 1x-4x, every lock + pthread_mutex), table + CSV + SVG
## bench-user-quick  the same, one repeat, short cells (a smoke run)
## bench-uncontended  one thread, no contention: each algorithm's lock+unlock cost against the native queued lock (95% CI)
## lkmm-test       LKMM and x86-TSO litmus tests of the central pairings (by hand: needs HERD7, HERDLIB; docs/memory-model.md)

CORE_BUILD := $(BUILD)/core
CXX ?= g++
CORE_CXXFLAGS := -std=gnu++17 -g -Wall -Wextra -Werror -fno-strict-aliasing -pthread
CORE_HEADERS := $(wildcard $(TOP)/guest/core/*.h $(TOP)/guest/user/*.h $(TOP)/guest/sim/*.h \
		  $(TOP)/selftests/core/*.h $(TOP)/hypercall-abi/*.h)
USER_SRCS := $(TOP)/guest/user/platform.cpp $(TOP)/guest/user/thread_lab.cpp
SIM_SRCS := $(TOP)/guest/sim/sim.cpp

# The flags the kernel build uses for C++ (see guest/kernel), minus the
# include paths: freestanding, kernel code model, no SSE, no unwind tables.
FREESTANDING_FLAGS := -std=gnu++17 -O2 -fno-pic -fno-pie -nostdinc -nostdinc++ -ffreestanding \
	-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit \
	-fno-gnu-unique -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-mcmodel=kernel -mno-red-zone -mno-sse -mno-mmx -mno-sse2 -mno-avx \
	-fno-strict-aliasing -fno-common -Wall -Wextra -Werror

TEST_TARGETS += core-test

.PHONY: core-test bench-user bench-user-quick bench-uncontended lkmm-test

# Compiling and running the tests take the machine-wide CPU lock (scripts/lab/lib.sh), as the
# kernel builds and VM runs do: tests started beside a benchmark wait for its L1 boot instead
# of slowing its cells. PVLOCK_NO_LOCK=1 when the caller already holds the lock.
CORE_CPU_LOCK := $(if $(PVLOCK_NO_LOCK),,flock /tmp/pvlock-cpu.lock)

$(CORE_BUILD)/test_sim: $(TOP)/selftests/core/test_sim.cpp $(SIM_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $< $(SIM_SRCS)

# The store-buffer modes (x86-TSO, weak) and the fence / order negative controls.
$(CORE_BUILD)/test_sim_memory: $(TOP)/selftests/core/test_sim_memory.cpp $(SIM_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $< $(SIM_SRCS)

$(CORE_BUILD)/test_sim_memory.ubsan: $(TOP)/selftests/core/test_sim_memory.cpp $(SIM_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O1 -fsanitize=undefined -fno-sanitize-recover=all -o $@ $< $(SIM_SRCS)

# TSan ignores fences (-Wno-tsan): the lock code orders its atomics with
# acquire/release too, and the fences only pair atomic accesses (Dekker).

# UBSan on the simulator (its fibers switch stacks, which ASan/TSan do not follow).
$(CORE_BUILD)/test_sim.ubsan: $(TOP)/selftests/core/test_sim.cpp $(SIM_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O1 -fsanitize=undefined -fno-sanitize-recover=all -o $@ $< $(SIM_SRCS)

$(CORE_BUILD)/test_threads: $(TOP)/selftests/core/test_threads.cpp $(USER_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $< $(USER_SRCS)

$(CORE_BUILD)/test_threads.tsan: $(TOP)/selftests/core/test_threads.cpp $(USER_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O1 -fsanitize=thread -Wno-tsan -o $@ $< $(USER_SRCS)

# Slow-unlock lookup cost against the vCPU count (docs/cpu-ids.md); checks it stays flat.
$(CORE_BUILD)/bench_lookup: $(TOP)/selftests/core/bench_lookup.cpp $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $<

$(CORE_BUILD)/freestanding_check.o: $(TOP)/selftests/core/freestanding_check.cpp $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(FREESTANDING_FLAGS) -isystem $(shell $(CXX) -print-file-name=include) -c -o $@ $<

$(CORE_BUILD)/pvlock-bench: $(TOP)/guest/user/bench.cpp $(USER_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $< $(USER_SRCS)

$(CORE_BUILD)/pvlock-uncontended: $(TOP)/guest/user/uncontended.cpp $(USER_SRCS) $(CORE_HEADERS)
	@mkdir -p $(@D)
	$(CORE_CPU_LOCK) $(CXX) $(CORE_CXXFLAGS) -O2 -o $@ $< $(USER_SRCS)

# Each binary prints TAP and a closing "N passed, N failed"; the summary
# line at the end adds them up for CI.
core-test: deps-core $(CORE_BUILD)/test_sim $(CORE_BUILD)/test_sim.ubsan \
	   $(CORE_BUILD)/test_sim_memory $(CORE_BUILD)/test_sim_memory.ubsan $(CORE_BUILD)/test_threads \
	   $(CORE_BUILD)/test_threads.tsan $(CORE_BUILD)/freestanding_check.o $(CORE_BUILD)/bench_lookup \
	   $(CORE_BUILD)/pvlock-uncontended
	@$(CORE_CPU_LOCK) $(TOP)/scripts/run-tests core \
		"$(TOP)/scripts/guest/check-cxx-object nm readelf $(CORE_BUILD)/freestanding_check.o" \
		$(CORE_BUILD)/test_sim \
		$(CORE_BUILD)/test_sim.ubsan \
		$(CORE_BUILD)/test_sim_memory \
		$(CORE_BUILD)/test_sim_memory.ubsan \
		$(CORE_BUILD)/test_threads \
		$(CORE_BUILD)/bench_lookup \
		"env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 setarch -R $(CORE_BUILD)/test_threads.tsan"

# Not in TEST_TARGETS: herd7 is built by hand (scripts/lkmm/build-herd7); without it, a skip.
lkmm-test:
	@$(TOP)/scripts/lkmm/run

BENCH_OUT ?= $(BUILD)/bench-user
BENCH_ARGS ?= --repeats 5 --duration-ms 500

# Takes the machine-wide CPU lock so that no build or VM runs beside it.
bench-user: deps-core $(CORE_BUILD)/pvlock-bench
	@mkdir -p $(BENCH_OUT)
	$(CORE_CPU_LOCK) $(CORE_BUILD)/pvlock-bench $(BENCH_ARGS) --csv $(BENCH_OUT)/results.csv
	$(TOP)/scripts/bench-report $(BENCH_OUT)/results.csv --svg $(BENCH_OUT)/throughput.svg --targets \
		| tee $(BENCH_OUT)/report.txt; true
	@echo "results: $(BENCH_OUT)/results.csv, report: $(BENCH_OUT)/report.txt, plot: $(BENCH_OUT)/throughput.svg"

bench-user-quick: BENCH_ARGS := --repeats 1 --duration-ms 150
bench-user-quick: bench-user

# One thread, no contention: each algorithm's lock+unlock cost against the native queued lock,
# rounds interleaved, 95% intervals (docs/results-user-space.md, "Uncontended").
UNCONTENDED_ARGS ?= --rounds 31 --pairs 1000000
bench-uncontended: deps-core $(CORE_BUILD)/pvlock-uncontended
	$(CORE_CPU_LOCK) $(CORE_BUILD)/pvlock-uncontended $(UNCONTENDED_ARGS)

.PHONY: deps-core
deps-core:
	@$(TOP)/scripts/install-deps make g++ libtsan2 libubsan1 util-linux python3
