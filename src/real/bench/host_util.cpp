// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/host_util.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <vector>

namespace fl::bench {

std::string errno_text(const char *what)
{
	return std::string(what) + ": " + strerror(errno);
}

uint64_t page_stamp(uint64_t page_index)
{
	return 0xfa17000000000000ull | page_index;
}

UniqueFd make_filled_memfd(const char *name, const Geometry &g, std::string *err)
{
	UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
	if (!fd) {
		*err = errno_text("memfd_create");
		return fd;
	}
	std::vector<uint8_t> page(g.page_size, 0);
	for (uint64_t i = 0; i < g.pages(); i++) {
		uint64_t stamp = page_stamp(i);
		memcpy(page.data(), &stamp, sizeof(stamp));
		if (pwrite(fd.get(), page.data(), page.size(), off_t(i * g.page_size)) != ssize_t(page.size())) {
			*err = errno_text("memfd write");
			return UniqueFd();
		}
	}
	return fd;
}

}  // namespace fl::bench
