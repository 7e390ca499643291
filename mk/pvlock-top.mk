# pvlock-top (host/tools/pvlock-top): a libbpf CO-RE tool that shows, per VM
# and per vCPU, what the pvlock hypercall handler does, from its kvm_pvlock_*
# tracepoints. See docs/observability.md.
## pvlock-top          build $(BUILD)/pvlock-top/pvlock-top (clang, bpftool, libbpf-dev; vmlinux.h from this kernel's BTF)
## pvlock-top-test     the tool without a VM: builds, -h, bad options, no handler here, JSON parses
## pvlock-top-lab      the tool in the nested lab against KVM's stats, and the kick-dropping host (one L1 boot)

PT_SRC := $(TOP)/host/tools/pvlock-top
PT_OUT := $(BUILD)/pvlock-top
PT_BTF ?= /sys/kernel/btf/vmlinux
PT_CLANG ?= clang
PT_BPFTOOL ?= bpftool
PT_CFLAGS ?= -g -O2 -Wall -Wextra -Wno-unused-parameter
PT_BPF_CFLAGS := -g -O2 -Wall -target bpf -D__TARGET_ARCH_x86 \
	-I$(PT_OUT) -I$(TOP)/hypercall-abi -I$(PT_SRC)
PT_HDRS := $(PT_SRC)/pvlock-top.h $(TOP)/hypercall-abi/pvlock_abi.h

.PHONY: pvlock-top pvlock-top-deps pvlock-top-test pvlock-top-lab

# The quick tier (seconds), and the lab tier: one L1 boot, two L2 guests (~6 min).
TEST_TARGETS += pvlock-top-test pvlock-top-lab

pvlock-top: $(PT_OUT)/pvlock-top

pvlock-top-deps:
	@$(TOP)/scripts/install-deps clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev gcc make python3

# Generated here, never checked in: CO-RE relocates its types to whatever
# kernel the tool later runs on (the nested lab's L1 runs Debian's 6.12).
$(PT_OUT)/vmlinux.h: | pvlock-top-deps
	@[ -r $(PT_BTF) ] || { echo "pvlock-top: no kernel BTF at $(PT_BTF)" \
		"(a kernel with CONFIG_DEBUG_INFO_BTF=y, or PT_BTF=FILE)" >&2; exit 1; }
	@mkdir -p $(@D)
	$(PT_BPFTOOL) btf dump file $(PT_BTF) format c >$@.tmp && mv $@.tmp $@

$(PT_OUT)/pvlock-top.bpf.o: $(PT_SRC)/pvlock-top.bpf.c $(PT_HDRS) $(PT_OUT)/vmlinux.h
	$(PT_CLANG) $(PT_BPF_CFLAGS) -c $< -o $@.tmp
	@# DWARF is for debugging the object; the skeleton embeds only what loading needs (BTF).
	llvm-strip -g $@.tmp && mv $@.tmp $@

$(PT_OUT)/pvlock-top.skel.h: $(PT_OUT)/pvlock-top.bpf.o
	$(PT_BPFTOOL) gen skeleton $< >$@.tmp && mv $@.tmp $@

$(PT_OUT)/pvlock-top: $(PT_SRC)/pvlock-top.c $(PT_HDRS) $(PT_OUT)/pvlock-top.skel.h
	$(CC) $(PT_CFLAGS) -I$(PT_OUT) -I$(TOP)/hypercall-abi -I$(PT_SRC) $< -o $@ -lbpf -lelf -lz


pvlock-top-test: pvlock-top
	$(TOP)/selftests/pvlock-top/quick $(PT_OUT)/pvlock-top

pvlock-top-lab: pvlock-top host-modules
	$(TOP)/selftests/pvlock-top/lab $(PT_OUT)/pvlock-top
