# SPDX-License-Identifier: GPL-2.0-only
# The guest kernel's configuration: tinyconfig plus what a static /init that
# drives BPF_F_MMAPABLE array maps needs (docs/real-kernels.md#setup-and-the-pitfalls-it-avoids).
# Sourced by build.sh; its content is part of every cache key.

# make_config SRC OUT ARCH MAKE...
make_config() {
	local src=$1 out=$2 arch=$3
	shift 3
	"$@" -C "$src" O="$out" ARCH="$arch" tinyconfig >/dev/null
	local c=("$src/scripts/config" --file "$src/$out/.config")
	# ARCH=x86_64 makes tinyconfig 64-bit only with 64BIT set explicitly.
	[ "$arch" = x86_64 ] && "${c[@]}" -e 64BIT
	# tinyconfig selects EXPERT, which turns PRINTK/TTY/ADVISE_SYSCALLS off:
	# without ADVISE_SYSCALLS madvise() is ENOSYS. The initramfs is
	# uncompressed, so every RD_* decompressor stays off.
	"${c[@]}" -e PRINTK -e PRINTK_TIME -e EARLY_PRINTK -e TTY -e SERIAL_8250 -e SERIAL_8250_CONSOLE \
		-e BLK_DEV_INITRD -d RD_GZIP -d RD_BZIP2 -d RD_LZMA -d RD_XZ -d RD_LZO -d RD_LZ4 -d RD_ZSTD \
		-e BINFMT_ELF -e ADVISE_SYSCALLS -e BPF_SYSCALL -e MULTIUSER -e PROC_FS -e SYSFS \
		-e KERNEL_GZIP -d KERNEL_XZ
	"$@" -C "$src" O="$out" ARCH="$arch" olddefconfig >/dev/null
}
