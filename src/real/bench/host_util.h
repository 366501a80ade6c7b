// SPDX-License-Identifier: GPL-2.0-only
// Small host helpers shared by the real backends.
#pragma once

#include <string>
#include <unistd.h>
#include <utility>

#include "real/bench/backend.h"

namespace fl::bench {

// An owned file descriptor (-1: none).
class UniqueFd {
public:
	UniqueFd() = default;
	explicit UniqueFd(int fd) : fd_(fd) {}
	UniqueFd(UniqueFd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	UniqueFd &operator=(UniqueFd &&o) noexcept
	{
		std::swap(fd_, o.fd_);
		return *this;
	}
	~UniqueFd()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	int get() const { return fd_; }
	explicit operator bool() const { return fd_ >= 0; }

private:
	int fd_ = -1;
};

// "what: strerror(errno)".
std::string errno_text(const char *what);

// The first 8 bytes of data page i of every backing store the bench fills:
// a stamp that names the page, so a wrong page shows in a load.
uint64_t page_stamp(uint64_t page_index);

// A memfd of g.mmap_bytes() whose pages are all in the page cache, each
// starting with its page_stamp (the map's memory exists up front, as the
// BPF array's vmalloc area does). Invalid fd and *err on failure.
UniqueFd make_filled_memfd(const char *name, const Geometry &g, std::string *err);

std::unique_ptr<Backend> make_host_backend(const std::string &name, const Geometry &, std::string *skip);

}  // namespace fl::bench
