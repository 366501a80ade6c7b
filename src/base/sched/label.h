// SPDX-License-Identifier: GPL-2.0-only
// Scheduling-point labels: "function:site", stable across builds (schedules
// in text name them), interned once per call site so that a point costs an
// integer, not a string.
#pragma once

#include <cstdint>
#include <string>

namespace fl::sched {

struct Label {
	uint32_t id;       // dense, in order of first use in this process
	std::string name;  // "finish_fault:pte_offset_map_lock"
	// FNV-1a of name: what a trace hash mixes, so that the hash of a schedule
	// does not depend on which points earlier runs of the process used first.
	uint64_t name_hash;
};

// The label for (func, site); the same object for the same pair.
const Label &intern_label(const char *func, const char *site);
// By full name (parsing a schedule); interned if no point used it yet.
const Label &label_named(const std::string &name);
// The label with this id.
const Label &label_by_id(uint32_t id);

// A call-site label: evaluated once per site (GNU statement expression, so
// that __func__ is the enclosing kernel function's name). The expression
// yields the pointer and the dereference is outside it: a statement
// expression returns its value by copy, and a copied Label is a std::string
// copy (a malloc and a free for names over 15 characters) at every point.
#define FL_SCHED_LABEL(site) \
	(*({ static const ::fl::sched::Label *const fl_lbl_ = &::fl::sched::intern_label(__func__, site); fl_lbl_; }))

}  // namespace fl::sched
