// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/backend.h"

#include "real/bench/host_util.h"
#include "real/bench/uffd_backend.h"

namespace fl::bench {

std::string Pattern::name() const
{
	std::string touch = touch_pages == 0 ? "" : "+touch";
	return (populate ? "populate" : "mmap") + touch;
}

bool is_backend_name(const std::string &name)
{
	for (const char *n : kBackendNames)
		if (name == n)
			return true;
	return false;
}

std::unique_ptr<Backend> make_backend(const std::string &name, const Geometry &g, const PortLevel &lvl,
				      std::string *skip)
{
	if (name == "uffd")
		return UffdBackend::create(g, lvl, skip);
	return make_host_backend(name, g, skip);
}

}  // namespace fl::bench
