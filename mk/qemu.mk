# The lab's patched QEMU: Debian's qemu source package + qemu/patches (see qemu/README.md).
.PHONY: qemu qemu-ple-check

## qemu            build qemu-system-x86_64 from Debian's qemu source + qemu/patches (ccache; once per machine)
qemu:
	$(TOP)/scripts/qemu/build-qemu
