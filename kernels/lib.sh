# SPDX-License-Identifier: GPL-2.0-only
# Shared paths and helpers for the kernels/ scripts (sourced, not run).
# Everything big lives outside the repository, in the cache folder.

KERNELS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KCACHE=${FAULTLINE_CACHE:-$HOME/.cache/faultline}/kernels
KSRC_PKG=linux-source-6.1
KERNEL_PACKAGES=(linux-source-6.1 qemu-system-x86 bc bison flex libelf-dev libssl-dev cpio
	xz-utils gcc-multilib g++-multilib ccache make patch python3)

klog() { printf '[kernels] %s\n' "$*" >&2; }
kdie() { printf '[kernels] %s\n' "$*" >&2; exit 2; }

# The Debian version of the kernel source, e.g. 6.1.192-3 (it moves with
# security updates, so it names the cache folder and every recorded trace).
kernel_version() { echo "${FAULTLINE_KVERSION:-$(dpkg-query -W -f='${Version}' "$KSRC_PKG" 2>/dev/null)}"; }

check_arch() { case "$1" in x86_64|i386) ;; *) kdie "unknown --arch '$1' (x86_64, i386 or both)";; esac; }
