// SPDX-License-Identifier: GPL-2.0-only
// Included by src/kernel/include/kernel.h in place of its integer typedefs
// when FL_SYM_TYPES names this file (inside namespace fl::FL_ARCH_NS): the
// port's u32, u64 and unsigned long become symbolic (smt/port/sym.h);
// pgoff_t, size_t and vm_flags_t follow from unsigned long as they do in
// the concrete builds. u8 stays a byte.
typedef uint8_t u8;
typedef ::fl::smt::sym::Sym<32> u32;
typedef ::fl::smt::sym::Sym<64> u64;
typedef ::fl::smt::sym::Sym<FL_BITS> ulong;
using ::fl::smt::sym::check_add_overflow;
using ::fl::smt::sym::check_shl_overflow;
using ::fl::smt::sym::fls_long;
