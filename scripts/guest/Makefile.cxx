# SPDX-License-Identifier: GPL-2.0
#
# Kbuild rule for freestanding C++ objects (included from the top-level
# Kbuild), modelled on the Rust rule of scripts/Makefile.build:
#   - if_changed_rule with a real depfile (g++ -MMD, then fixdep), so a
#     changed header or flag rebuilds the object and nothing else;
#   - the flags Kbuild gives a C object of this directory ($(_c_flags) of
#     scripts/Makefile.lib: KBUILD_CFLAGS, ccflags-y, CFLAGS_<obj>.o, and
#     the KASAN, KCSAN, UBSAN and KCOV flags under the same per-object and
#     per-directory switches, KASAN_SANITIZE_<obj>.o := n and the like)
#     minus the C-only ones, so the code model and ABI (-mcmodel=kernel
#     -mno-red-zone, no SSE/MMX/x87, retpoline and return thunks, no unwind
#     tables, stack protector) and the instrumentation are exactly the C
#     objects';
#   - objtool on the object, as for C (cmd_objtool);
#   - scripts/guest/check-cxx-object: no static constructors or destructors,
#     no exception tables, only whitelisted undefined symbols.
# C++ translation units get no kernel include path: -nostdinc, and
# LINUXINCLUDE is not passed. They see guest/, hypercall-abi/ and the
# compiler's own freestanding headers only.

KBUILD_CXX ?= $(patsubst %gcc,%g++,$(CC))

# C-only options g++ rejects or warns about.
cxx-c-only-flags := -std=% -Wstrict-prototypes -Werror=strict-prototypes \
	-Wold-style-definition -Wmissing-prototypes -Wdeclaration-after-statement \
	-Werror=implicit-% -Wno-pointer-sign -Werror=designated-init \
	-Wno-override-init -Werror=incompatible-pointer-types \
	-Wimplicit-int -Wno-packed-not-aligned -Wpacked-not-aligned \
	-Werror=int-conversion -Wno-enum-int-mismatch -Wno-stringop-overflow \
	-Wmissing-declarations -Wnested-externs -Wunused-but-set-variable \
	-Wno-missing-field-initializers -Wenum-conversion \
	-fstrict-flex-arrays=% -Wno-alloc-size-larger-than \
	-Wno-dangling-pointer -Wno-address-of-packed-member \
	-Wold-style-declaration -Wmissing-parameter-type \
	-Wno-array-bounds -Werror=incompatible-pointer-types

cxx-flags = -Wp,-MMD,$(depfile) -nostdinc \
	-isystem $(shell $(KBUILD_CXX) -print-file-name=include) \
	$(filter-out $(cxx-c-only-flags) $(CC_FLAGS_FTRACE), \
		$(_c_flags) $(modkern_cflags)) \
	-std=gnu++17 -ffreestanding -fno-exceptions -fno-rtti \
	-fno-threadsafe-statics -fno-use-cxa-atexit -nostdinc++ \
	-fno-gnu-unique -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wno-missing-field-initializers \
	-DPVLOCK_MAX_CPUS=$(CONFIG_NR_CPUS) \
	$(if $(CONFIG_JUMP_LABEL),-DPVLOCK_HAVE_JUMP_LABEL) \
	$(if $(CONFIG_TRACEPOINTS),-DPVLOCK_HAVE_TRACEPOINTS) \
	-I$(src) $(cxxflags-y)

cxx-check = $(src)/scripts/guest/check-cxx-object

quiet_cmd_cxx_o_cpp = CXX $(quiet_modtag) $@
      cmd_cxx_o_cpp = $(KBUILD_CXX) $(cxx-flags) -c -o $@ $< $(cmd_objtool)

quiet_cmd_cxx_check = CXXCHK  $@
      cmd_cxx_check = $(CONFIG_SHELL) $(cxx-check) $(NM) $(READELF) $@

define rule_cxx_o_cpp
	$(call cmd_and_fixdep,cxx_o_cpp)
	$(call cmd,cxx_check)
	$(call cmd,gen_objtooldep)
endef

$(obj)/%.o: $(obj)/%.cpp $(cxx-check) FORCE
	$(call if_changed_rule,cxx_o_cpp)

# Preprocessed and assembler output, for review (make pvlock/guest/kernel/x.s)
quiet_cmd_cxx_s_cpp = CXX $(quiet_modtag) $@
      cmd_cxx_s_cpp = $(KBUILD_CXX) $(cxx-flags) -fverbose-asm -S -o $@ $<

$(obj)/%.s: $(obj)/%.cpp FORCE
	$(call if_changed_dep,cxx_s_cpp)
