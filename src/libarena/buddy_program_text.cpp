// SPDX-License-Identifier: GPL-2.0-only
// The text form of allocator Programs (buddy_program.h): format and parse,
// round-tripping exactly.
#include <sstream>

#include "libarena/buddy_program.h"

namespace fl::libarena {

namespace {

constexpr const char *kTargetNames[] = {"live", "stale", "interior", "unaligned", "null"};
constexpr const char *kOpNames[] = {"alloc", "bulk", "free", "free_bulk", "nmi_free", "nmi_alloc", "store", "reinit", "drain"};

std::string fmt_target(const Target &t)
{
	if (t.kind == Target::null)
		return "null";
	return std::string(kTargetNames[t.kind]) + ":" + std::to_string(t.n);
}

bool parse_u64(const std::string &s, u64 *out)
{
	if (s.empty())
		return false;
	size_t pos = 0;
	try {
		*out = std::stoull(s, &pos, 0);
	} catch (...) {
		return false;
	}
	return pos == s.size();
}

bool parse_target(const std::string &s, Target *t)
{
	if (s == "null") {
		*t = Target{};
		return true;
	}
	size_t colon = s.find(':');
	if (colon == std::string::npos)
		return false;
	const std::string kind = s.substr(0, colon);
	for (u8 k = 0; k < Target::null; k++)
		if (kind == kTargetNames[k]) {
			u64 n;
			if (!parse_u64(s.substr(colon + 1), &n) || n > 0xffffffffu)
				return false;
			*t = Target{Target::Kind(k), u32(n)};
			return true;
		}
	return false;
}

}  // namespace

std::string format_buddy_program(const BuddyProgram &p)
{
	std::string s = std::string("level ") + to_string(p.level) + "\n";
	for (const BuddyOp &op : p.ops) {
		s += kOpNames[op.kind];
		switch (op.kind) {
		case BuddyOp::alloc:
		case BuddyOp::nmi_alloc:
			s += " " + std::to_string(op.size);
			break;
		case BuddyOp::bulk:
			s += " " + std::to_string(op.size) + " norder=" + std::to_string(op.norder);
			break;
		case BuddyOp::free:
			s += " " + fmt_target(op.target);
			if (op.has_nmi)
				s += " nmi=" + fmt_target(op.nmi_target);
			break;
		case BuddyOp::nmi_free:
			s += " " + fmt_target(op.target);
			break;
		case BuddyOp::free_bulk:
			s += " ";
			for (size_t i = 0; i < op.targets.size(); i++)
				s += (i ? "," : "") + fmt_target(op.targets[i]);
			if (op.targets.empty())
				s += "none";
			break;
		case BuddyOp::store:
			s += " " + fmt_target(op.target) + " val=" + std::to_string(op.value);
			break;
		case BuddyOp::reinit:
		case BuddyOp::drain:
			break;
		}
		if (op.cpu)
			s += " cpu=" + std::to_string(op.cpu);
		if (!op.at.empty())
			s += " at=" + op.at;
		s += "\n";
	}
	if (p.concurrent)
		s += "concurrent\n";
	for (const sched::Record &r : p.schedule)
		s += sched::format_record(r) + "\n";
	return s;
}

std::optional<BuddyProgram> parse_buddy_program(const std::string &text, std::string *error)
{
	BuddyProgram p;
	std::istringstream in(text);
	std::string line;
	int no = 0;
	auto fail = [&](const std::string &msg) -> std::optional<BuddyProgram> {
		*error = "line " + std::to_string(no) + ": " + msg;
		return std::nullopt;
	};
	while (std::getline(in, line)) {
		no++;
		// a comment starts at a '#' after a blank (LABEL#N is a schedule record's)
		for (size_t hash = line.find('#'); hash != std::string::npos; hash = line.find('#', hash + 1))
			if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') {
				line.resize(hash);
				break;
			}
		std::istringstream words(line);
		std::vector<std::string> w;
		for (std::string x; words >> x;)
			w.push_back(x);
		if (w.empty())
			continue;
		if (w[0] == "concurrent" && w.size() == 1) {
			p.concurrent = true;
			continue;
		}
		if (w[0] == "at") {  // a schedule record (base/sched/record.h)
			sched::Record r;
			std::string err;
			if (!sched::parse_record(w.data() + 1, w.size() - 1, BUDDY_NR_CPUS, 0, &r, &err))
				return fail(err);
			p.schedule.push_back(r);
			// a switch or an NMI needs CPUs running at once; a lock failure
			// alone happens in a sequential run as well
			p.concurrent |= r.action != sched::Action::fail;
			continue;
		}
		if (w[0] == "level") {
			bool found = false;
			for (buddy_level l : kBuddyLevels)
				if (w.size() == 2 && w[1] == to_string(l)) {
					p.level = l;
					found = true;
				}
			if (!found)
				return fail("bad level");
			continue;
		}
		BuddyOp op;
		bool known = false;
		for (u8 k = 0; k < std::size(kOpNames); k++)
			if (w[0] == kOpNames[k]) {
				op.kind = BuddyOp::Kind(k);
				known = true;
			}
		if (!known)
			return fail("unknown op '" + w[0] + "'");
		// trailing cpu=N and (NMI ops) at=LABEL
		while (w.size() > 1 && (w.back().rfind("cpu=", 0) == 0 || w.back().rfind("at=", 0) == 0)) {
			const std::string opt = w.back();
			w.pop_back();
			u64 cpu;
			if (opt[0] == 'c' && parse_u64(opt.substr(4), &cpu) && cpu < u64(BUDDY_NR_CPUS))
				op.cpu = u8(cpu);
			else if (opt[0] == 'a' && opt.size() > 3 &&
				 (op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::nmi_alloc))
				op.at = opt.substr(3);
			else
				return fail("bad option '" + opt + "' to '" + w[0] + "'");
		}
		const size_t want = op.kind == BuddyOp::reinit || op.kind == BuddyOp::drain ? 1 : (op.kind == BuddyOp::alloc || op.kind == BuddyOp::nmi_alloc ||
								       op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::free_bulk)
										 ? 2
										 : op.kind == BuddyOp::free ? 0 : 3;
		if (want && w.size() != want)
			return fail("'" + w[0] + "' takes " + std::to_string(want - 1) + " argument(s)");
		bool ok = true;
		switch (op.kind) {
		case BuddyOp::alloc:
		case BuddyOp::nmi_alloc:
			ok = parse_u64(w[1], &op.size);
			break;
		case BuddyOp::bulk:
			ok = parse_u64(w[1], &op.size) && w[2].rfind("norder=", 0) == 0 && parse_u64(w[2].substr(7), &op.norder);
			break;
		case BuddyOp::free:
			ok = (w.size() == 2 || w.size() == 3) && parse_target(w[1], &op.target);
			if (ok && w.size() == 3) {
				op.has_nmi = true;
				ok = w[2].rfind("nmi=", 0) == 0 && parse_target(w[2].substr(4), &op.nmi_target);
			}
			break;
		case BuddyOp::nmi_free:
			ok = parse_target(w[1], &op.target);
			break;
		case BuddyOp::free_bulk:
			if (w[1] != "none") {
				std::istringstream items(w[1]);
				for (std::string item; ok && std::getline(items, item, ',');) {
					Target t;
					ok = parse_target(item, &t);
					op.targets.push_back(t);
				}
			}
			break;
		case BuddyOp::store:
			ok = parse_target(w[1], &op.target) && w[2].rfind("val=", 0) == 0 && parse_u64(w[2].substr(4), &op.value);
			break;
		case BuddyOp::reinit:
		case BuddyOp::drain:
			break;
		}
		if (!ok)
			return fail("bad arguments to '" + w[0] + "'");
		p.ops.push_back(op);
	}
	return p;
}

}  // namespace fl::libarena
