// SPDX-License-Identifier: GPL-2.0-only
#include "oracle/host_differences.h"


namespace fl::oracle {

const char *to_string(HostDifference d)
{
	switch (d) {
	case HostDifference::anon_vma_merge: return "anon_vma_merge";
	case HostDifference::anon_pages_unmodelled: return "anon_pages_unmodelled";
	case HostDifference::mremap_multi_vma: return "mremap_multi_vma";
	}
	return "?";
}

const char *describe(HostDifference d)
{
	switch (d) {
	case HostDifference::anon_vma_merge:
		return "The host merges adjacent compatible anonymous VMAs (vma_merge: two reservations "
		       "placed side by side become one VMA); the port does not port merging "
		       "(src/kernel/mm/vma.cpp). BPF map VMAs never merge (vm_ops->close), so the fault "
		       "path is unaffected, but an mremap/munmap/mprotect/madvise range that crosses the "
		       "boundary sees one VMA on the host and two in the port (e.g. mremap -EFAULT "
		       "'across vm area boundaries' in the port, success on the host). The oracle stops "
		       "comparing a Program at the first such op.";
	case HostDifference::anon_pages_unmodelled:
		return "The port has no anonymous pages (src/kernel/mm/memory.cpp handle_mm_fault: "
		       "do_anonymous_page is not ported; anonymous memory only serves as PROT_NONE "
		       "reservations for MAP_FIXED targets). After mprotect makes a reservation "
		       "accessible, the host reads zeros and keeps stores; the port raises SIGSEGV. "
		       "Not the BPF fault path. The oracle stops comparing a Program at the first such op.";
	case HostDifference::mremap_multi_vma:
		return "Since Linux 6.17 ('mm/mremap: permit mremap() move of multiple VMAs'; mremap(2): "
		       "old_size may span multiple mappings and the gaps between them for a move with "
		       "MREMAP_FIXED and old_size == new_size, or for a shrink) the host moves or shrinks "
		       "such ranges; the port's mremap is the earlier single-VMA one ('We can't remap "
		       "across vm area boundaries' -> -EFAULT). A VMA-layout rule, not the fault path. "
		       "The oracle stops comparing a Program at the first such op.";
	}
	return "";
}

namespace {

bool anonymous(const SmapsEntry &s)
{
	return s.found && (" " + s.vm_flags + " ").find(" de ") == std::string::npos;
}

}  // namespace

std::optional<HostDifference> port_scope(const Machine &m, const Op &op, uint64_t addr, unsigned page_shift)
{
	const uint64_t page = uint64_t(1) << page_shift;
	if (op.kind == OpKind::load || op.kind == OpKind::store) {
		if (anonymous(m.smaps(op.proc, addr)) || anonymous(m.smaps(op.proc, addr + op.size - 1)))
			return HostDifference::anon_pages_unmodelled;
		return std::nullopt;
	}
	if (op.kind == OpKind::mremap && !(addr & (page - 1))) {
		const uint64_t old_len = (op.len.resolve(page_shift) + page - 1) & ~(page - 1);
		const uint64_t new_len = (op.new_len.resolve(page_shift) + page - 1) & ~(page - 1);
		const bool fixed = op.flags & uapi::MREMAP_FIXED;
		SmapsEntry s = m.smaps(op.proc, addr);
		if (s.found && old_len > s.end - addr && ((fixed && old_len == new_len) || old_len > new_len))
			return HostDifference::mremap_multi_vma;
	}
	if (op.kind != OpKind::mremap && op.kind != OpKind::munmap && op.kind != OpKind::mprotect &&
	    op.kind != OpKind::madvise)
		return std::nullopt;
	uint64_t len = (op.len.resolve(page_shift) + page - 1) & ~(page - 1);
	if (len == 0)
		len = page;  // mremap's old_len 0 still looks up the VMA at addr
	const uint64_t end = addr + len;
	// Walk the VMAs of [addr, end], the end included: a merge there moves
	// vm_end, which mremap's grow-in-place test looks at.
	uint64_t a = addr;
	for (int steps = 0; steps < 4096 && a <= end && a >= addr; steps++) {
		SmapsEntry s = m.smaps(op.proc, a);
		if (!s.found) {
			a += page;
			continue;
		}
		SmapsEntry next = m.smaps(op.proc, s.end);
		if (anonymous(s) && anonymous(next) && next.start == s.end && next.vm_flags == s.vm_flags &&
		    s.end <= end && s.pgoff + ((s.end - s.start) >> page_shift) == next.pgoff)  // is_mergeable_anon
			return HostDifference::anon_vma_merge;
		a = s.end;
	}
	return std::nullopt;
}

}  // namespace fl::oracle
