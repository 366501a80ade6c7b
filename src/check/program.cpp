// SPDX-License-Identifier: GPL-2.0-only
// Program helpers that every front end (text, binary, generators) shares.
#include "check/program.h"

namespace fl {

ConfigFilter Program::configs() const
{
	ConfigFilter f;
	if (header.arch)
		f.arches = {*header.arch};
	if (header.patch)
		f.patches = {*header.patch};
	if (header.page_shift)
		f.page_shifts = {*header.page_shift};
	if (header.door)
		f.doors = {*header.door};
	if (header.bypass_spec_v1)
		f.spec_v1 = {*header.bypass_spec_v1};
	if (header.historic)
		f.historics = {*header.historic};
	if (header.arena)
		f.arena = {*header.arena};
	return f;
}

int Program::label_index(const std::string &name) const
{
	for (size_t i = 0; i < labels.size(); i++)
		if (labels[i] == name)
			return int(i);
	return -1;
}

int Program::add_label(const std::string &name)
{
	// Re-defining a label re-binds the name: the index stays, so earlier
	// ops keep referring to the same slot and the runner just overwrites
	// the address it holds.
	int i = label_index(name);
	if (i >= 0)
		return i;
	labels.push_back(name);
	return int(labels.size()) - 1;
}

bool Labels::resolve(const Addr &a, unsigned page_shift, uint64_t *out) const
{
	if (a.label < 0 || a.label >= (int)bound_.size() || !bound_[a.label])
		return false;
	uint64_t off = a.offset.resolve(page_shift);
	uint64_t addr = a.negative ? addr_[a.label] - off : addr_[a.label] + off;
	/* a user address is unsigned long wide: it wraps as the kernel's does */
	*out = bits_ == 32 ? uint32_t(addr) : addr;
	return true;
}

void Labels::bind(int label, int64_t ret)
{
	if (label < 0 || label >= (int)bound_.size() || ret < 0)
		return;
	bound_[label] = true;
	addr_[label] = uint64_t(ret);
}

std::string Labels::prepare(const Program &p, const Op &op, bool proc_alive, unsigned page_shift, uint64_t *addr,
			    uint64_t *at) const
{
	*addr = *at = 0;
	auto bound = [&](const Addr &a) { return a.label >= 0 && a.label < (int)bound_.size() && bound_[a.label]; };
	bool needs_addr = op.kind == OpKind::munmap || op.kind == OpKind::mprotect || op.kind == OpKind::mremap ||
			  op.kind == OpKind::madvise || op.kind == OpKind::load || op.kind == OpKind::store ||
			  op.kind == OpKind::smaps || op.kind == OpKind::arena_free || op.kind == OpKind::arena_reserve;
	if (needs_addr && !bound(op.addr))
		return "skipped: label " + p.labels[op.addr.label] + " is not mapped";
	if (op.has_at && !bound(op.at))
		return "skipped: label " + p.labels[op.at.label] + " is not mapped";
	bool bpf_op = op.kind == OpKind::update || op.kind == OpKind::lookup || op.kind == OpKind::freeze ||
		      op.kind == OpKind::close || op.kind == OpKind::arena_alloc || op.kind == OpKind::arena_free ||
		      op.kind == OpKind::arena_reserve;  /* the arena kfuncs run in a BPF program, not a process */
	if (!proc_alive && !bpf_op)
		return skipped_no_process(op.proc);
	resolve(op.addr, page_shift, addr);
	if (op.has_at)
		resolve(op.at, page_shift, at);
	return "";
}

namespace {

constexpr const char *kOpNames[kOpKinds] = {
	"mmap", "reserve", "munmap", "mprotect", "mremap", "madvise", "fork", "exit",
	"load", "store", "update", "lookup", "freeze", "close", "smaps",
	"arena_alloc", "arena_free", "arena_reserve",
};

}  // namespace

const char *to_string(OpKind k)
{
	int i = int(k);
	return i < kOpKinds ? kOpNames[i] : "?";
}

std::optional<OpKind> parse_op_kind(const std::string &s)
{
	for (int i = 0; i < kOpKinds; i++)
		if (s == kOpNames[i])
			return OpKind(i);
	return std::nullopt;
}

}  // namespace fl
