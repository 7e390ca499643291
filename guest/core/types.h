/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: fixed-width types for the freestanding C++ core. They come from the
 * compiler's predefined macros, so no header (not even <stdint.h>) is needed
 * in the kernel build, where -nostdinc is in force.
 */
#ifndef PVLOCK_CORE_TYPES_H
#define PVLOCK_CORE_TYPES_H

namespace pvlock {

using u8 = __UINT8_TYPE__;
using u16 = __UINT16_TYPE__;
using u32 = __UINT32_TYPE__;
using u64 = __UINT64_TYPE__;
using s8 = __INT8_TYPE__;
using s16 = __INT16_TYPE__;
using s32 = __INT32_TYPE__;
using s64 = __INT64_TYPE__;
using uptr = __UINTPTR_TYPE__;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	      "lock words are laid out byte by byte for little-endian");

} /* namespace pvlock */

#endif /* PVLOCK_CORE_TYPES_H */
