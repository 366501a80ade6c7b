// SPDX-License-Identifier: GPL-2.0-only
#include "oracle/host_differences.h"

#include <sstream>

namespace fl::oracle {

const char *to_string(HostDifference d)
{
	switch (d) {
	case HostDifference::smaps_unmodelled_flags: return "smaps_unmodelled_flags";
	}
	return "?";
}

const char *describe(HostDifference d)
{
	switch (d) {
	case HostDifference::smaps_unmodelled_flags:
		return "smaps VmFlags on the host carry mnemonics for vm_flags bits the port does not model "
		       "(e.g. 'sd', VM_SOFTDIRTY, set on every new VMA when CONFIG_MEM_SOFT_DIRTY=y). They "
		       "play no part in the fault path; the oracle drops them from the host's line before "
		       "comparing, and still compares every flag the port does model.";
	}
	return "";
}

namespace {

// The bits the port models (src/sim/arch/machine_access.cpp kVmFlagNames).
bool port_models(const std::string &mnemonic)
{
	static const char *const kModelled[] = {"rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "gd", "pf",
						"lo", "io", "sr", "rr", "dc", "de", "ac", "nr", "ht", "sf",
						"wf", "dd", "mm", "hg", "nh", "mg"};
	for (const char *m : kModelled)
		if (mnemonic == m)
			return true;
	return false;
}

}  // namespace

bool normalise(const Op &op, Event *e, HostDifference *which)
{
	const std::string prefix = "VmFlags: ";
	if (op.kind != OpKind::smaps || e->info.rfind(prefix, 0) != 0)
		return false;
	size_t bar = e->info.find(" | ");
	std::istringstream flags(e->info.substr(prefix.size(), bar - prefix.size()));
	std::string kept, m;
	bool dropped = false;
	while (flags >> m) {
		if (!port_models(m)) {
			dropped = true;
			continue;
		}
		kept += (kept.empty() ? "" : " ") + m;
	}
	if (!dropped)
		return false;
	e->info = prefix + kept + (bar == std::string::npos ? "" : e->info.substr(bar));
	*which = HostDifference::smaps_unmodelled_flags;
	return true;
}

}  // namespace fl::oracle
