// SPDX-License-Identifier: GPL-2.0-only
// Invariant names: stable strings, since corpus files and reports keep them.
#include "base/invariants.h"

namespace fl {

namespace {

constexpr Invariant kInvariants[] = {
	Invariant::none,
	Invariant::write_active,
	Invariant::page_refcount,
	Invariant::page_identity,
	Invariant::foreign_page,
	Invariant::coherent,
	Invariant::pte_outside_vma,
	Invariant::freeze_iff,
	Invariant::frozen_stable,
	Invariant::lockdep,
	Invariant::data_race,
	Invariant::deadlock,
	Invariant::livelock,
	Invariant::use_after_free,
	Invariant::contents,
	Invariant::not_linearizable,
};

}  // namespace

const char *to_string(Invariant i)
{
	switch (i) {
	case Invariant::none: return "none";
	case Invariant::write_active: return "write_active";
	case Invariant::page_refcount: return "page_refcount";
	case Invariant::page_identity: return "page_identity";
	case Invariant::foreign_page: return "foreign_page";
	case Invariant::coherent: return "coherent";
	case Invariant::pte_outside_vma: return "pte_outside_vma";
	case Invariant::freeze_iff: return "freeze_iff";
	case Invariant::frozen_stable: return "frozen_stable";
	case Invariant::lockdep: return "lockdep";
	case Invariant::data_race: return "data_race";
	case Invariant::deadlock: return "deadlock";
	case Invariant::livelock: return "livelock";
	case Invariant::use_after_free: return "use_after_free";
	case Invariant::contents: return "contents";
	case Invariant::not_linearizable: return "not_linearizable";
	}
	return "?";
}

std::optional<Invariant> parse_invariant(const std::string &s)
{
	for (Invariant i : kInvariants)
		if (s == to_string(i))
			return i;
	return std::nullopt;
}

}  // namespace fl
