// SPDX-License-Identifier: GPL-2.0-only
#include "eager_lazy.h"

#include <cerrno>

namespace fl::kernels {

namespace {

// "VmFlags: rd wr sh mm | Rss: 2p" -> flags, rss
void split_smaps(const std::string &info, std::string *flags, std::string *rss)
{
	size_t bar = info.find(" | ");
	*flags = info.substr(0, bar);
	*rss = bar == std::string::npos ? "" : info.substr(bar);
}

// A DONTNEED that zapped something: 0, or -ENOMEM (mm/madvise.c
// madvise_walk_vmas: a hole in the range is reported after every VMA in it
// was advised), the same on both kernels.
bool dontneed_before(const Program &p, const Trace &stock, const Trace &patched, size_t upto)
{
	for (size_t k = 0; k < upto; k++)
		if (p.ops[k].kind == OpKind::madvise && p.ops[k].advice == uapi::MADV_DONTNEED &&
		    (stock.events[k].ret == 0 || stock.events[k].ret == -ENOMEM) &&
		    patched.events[k].ret == stock.events[k].ret && stock.events[k].info.empty())
			return true;
	return false;
}

}  // namespace

KernelDiff diff_kernels(const Program &p, const Trace &stock, const Trace &patched)
{
	KernelDiff d;
	if (stock.map_ret != patched.map_ret) {
		d.agree = false;
		d.op = KernelDiff::kMapCreate;
		return d;
	}
	size_t n = std::max(stock.events.size(), patched.events.size());
	for (size_t i = 0; i < n; i++) {
		if (i >= stock.events.size() || i >= patched.events.size() || i >= p.ops.size()) {
			d.agree = false;
			d.op = i;
			return d;
		}
		const Event &s = stock.events[i], &l = patched.events[i];
		if (s == l)
			continue;
		const Op &op = p.ops[i];
		if (op.kind == OpKind::smaps && s.ret == l.ret && !s.info.empty() && !l.info.empty()) {
			std::string fs, rs, fl_, rl;
			split_smaps(s.info, &fs, &rs);
			split_smaps(l.info, &fl_, &rl);
			std::string fs_no_mm = fs;
			if (size_t pos = fs_no_mm.find(" mm"); pos != std::string::npos)
				fs_no_mm.erase(pos, 3);
			if (fl_ == fs || fl_ == fs_no_mm) {
				if (fl_ != fs)
					d.named.emplace_back(i, Difference::vm_mixedmap);
				if (rs != rl)
					d.named.emplace_back(i, Difference::populate_timing);
				continue;
			}
		}
		if ((op.kind == OpKind::load || op.kind == OpKind::store) && s.sig == uapi::sigbus && l.sig != uapi::sigbus &&
		    s.ret == l.ret && s.info == l.info && dontneed_before(p, stock, patched, i)) {
			d.named.emplace_back(i, Difference::dontneed_refault);
			if (op.kind == OpKind::store && l.sig == 0) {
				d.stopped = true;
				d.op = i;
				return d;
			}
			continue;
		}
		d.agree = false;
		d.op = i;
		return d;
	}
	return d;
}

}  // namespace fl::kernels
