// SPDX-License-Identifier: GPL-2.0-only
// Does a patched kernel behave like the stock one? `kernels run` asks, so that a
// stale build (a "patched" kernel without the series) is named as the cause
// of its disagreements instead of the port.
#pragma once
#include <string>

#include "check/trace.h"
#include "base/config.h"

namespace fl::kernels {

// A patched (lazy) kernel inserts pages one fault at a time (VM_MIXEDMAP is
// never set); the stock kernel's remap_vmalloc_range() sets it on every
// mapping. A patched kernel whose every smaps shows it is the stock kernel.
struct StockLook {
	size_t smaps = 0, mixed = 0;
	bool lazy = false;
	void add(const Config &c, const Trace &guest)
	{
		lazy = lazy || c.patch != Patch::pre;
		for (const Event &e : guest.events) {
			if (e.info.rfind("VmFlags:", 0) != 0)
				continue;
			smaps++;
			std::string flags = " " + e.info.substr(8, e.info.find('|') - 8);
			mixed += flags.find(" mm ") != std::string::npos;
		}
	}
	// Only meaningful for a patched kernel whose Programs mapped something.
	bool looks_stock() const { return lazy && smaps > 0 && mixed == smaps; }
};

}  // namespace fl::kernels
