// SPDX-License-Identifier: GPL-2.0-only
#include "check/trace.h"

#include <cerrno>
#include <cstdio>

#include "base/fnv.h"
#include "check/program_text.h"

namespace fl {

std::string errno_name(int64_t err)
{
	switch (err) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EBADF: return "EBADF";
	case E2BIG: return "E2BIG";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EOVERFLOW: return "EOVERFLOW";
	case ERANGE: return "ERANGE";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case 524: return "ENOTSUPP";
	}
	return "E" + std::to_string(err);
}

static std::string hex_bytes(const std::vector<uint8_t> &b)
{
	std::string s;
	char buf[4];
	size_t shown = b.size() <= 32 ? b.size() : 16;
	for (size_t i = 0; i < shown; i++) {
		std::snprintf(buf, sizeof buf, "%02x", b[i]);
		s += buf;
	}
	if (shown < b.size()) {
		uint64_t h = fnv1a(b);  // of the whole value
		char tail[64];
		std::snprintf(tail, sizeof tail, "... (%zu bytes, fnv %016llx)", b.size(), (unsigned long long)h);
		s += tail;
	}
	return s;
}

std::string format_result(const Op &op, const Event &ev)
{
	if (!ev.info.empty() && op.kind != OpKind::smaps)
		return ev.info;
	if (ev.sig)
		return ev.sig == 7 ? "SIGBUS" : ev.sig == 11 ? "SIGSEGV" : "signal " + std::to_string(ev.sig);
	if (ev.ret < 0)
		return "-" + errno_name(-ev.ret);
	switch (op.kind) {
	case OpKind::load: {
		uint64_t v = 0;
		for (size_t i = 0; i < ev.data.size(); i++)
			v |= uint64_t(ev.data[i]) << (8 * i);
		char buf[32];
		std::snprintf(buf, sizeof buf, "= 0x%llx", (unsigned long long)v);
		return buf;
	}
	case OpKind::lookup:
		return "= " + hex_bytes(ev.data);
	case OpKind::fork:
		return "= pid " + std::to_string(ev.ret);
	case OpKind::smaps:
		return ev.info;
	default:
		return "ok";
	}
}

std::string format_event(const Program &p, const Op &op, const Event &ev)
{
	return format_op(p, op) + "  -> " + format_result(op, ev);
}

}  // namespace fl
