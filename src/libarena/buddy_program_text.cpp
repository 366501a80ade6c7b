// SPDX-License-Identifier: GPL-2.0-only
// The text form of allocator Programs (buddy_program.h): format and parse,
// round-tripping exactly.
#include <algorithm>
#include <sstream>

#include "libarena/buddy_program.h"

namespace fl::libarena {

namespace {

constexpr const char *kTargetNames[] = {"live", "stale", "interior", "unaligned", "null"};
constexpr const char *kOpNames[] = {"alloc", "bulk", "free", "free_bulk", "nmi_free", "nmi_alloc", "store", "reinit", "drain", "nmi"};

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

namespace {

// One op at `indent` (a block's calls two spaces in, without their CPU).
void format_op(std::string &s, const BuddyOp &op, const std::string &indent, bool in_block)
{
	s += indent + kOpNames[op.kind];
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
	case BuddyOp::nmi:
		break;
	}
	if (op.cpu && !in_block)
		s += " cpu=" + std::to_string(op.cpu);
	if (!op.at.empty())
		s += " at=" + op.at;
	if (op.kind == BuddyOp::nmi) {
		for (const BuddyOp &call : op.body) {
			s += "\n";
			format_op(s, call, indent + "  ", true);
		}
		s += "\n" + indent + "end";
	}
}

// How many handlers the op may arm (N0, N1, ... in a run): its blocks with
// at=, nested ones too, and a free's nmi=.
size_t armed_handlers(const BuddyOp &op)
{
	size_t n = (op.kind == BuddyOp::free && op.has_nmi) || (!op.at.empty());
	for (const BuddyOp &call : op.body)
		n += armed_handlers(call);
	return n;
}

}  // namespace

std::string format_buddy_op(const BuddyOp &op)
{
	std::string s;
	format_op(s, op, "", false);
	return s;
}

std::string format_buddy_program(const BuddyProgram &p)
{
	std::string s = std::string("level ") + to_string(p.level) + "\n";
	if (p.open_upstream)
		s += "open upstream\n";
	for (size_t i = 0; i < p.ops.size(); i++) {
		if (std::count(p.joins.begin(), p.joins.end(), i))
			s += "join\n";
		const BuddyOp &op = p.ops[i];
		format_op(s, op, "", false);
		s += "\n";
	}
	if (p.concurrent)
		s += "concurrent\n";
	if (p.access_points)
		s += "points access\n";
	for (const sched::Record &r : p.schedule)
		s += sched::format_record(r) + "\n";
	return s;
}

std::optional<BuddyProgram> parse_buddy_program(const std::string &text, std::string *error)
{
	BuddyProgram p;
	std::vector<BuddyOp> blocks;  // the nmi blocks open at this line, outermost first
	std::vector<std::pair<int, std::vector<std::string>>> records;  // line, words
	std::vector<int> join_lines;
	int points_line = 0;
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
		if (w[0] == "end" && w.size() == 1) {
			if (blocks.empty())
				return fail("'end' without an open 'nmi' block");
			BuddyOp done = std::move(blocks.back());
			blocks.pop_back();
			(blocks.empty() ? p.ops : blocks.back().body).push_back(std::move(done));
			continue;
		}
		if (!blocks.empty() && (w[0] == "concurrent" || w[0] == "at" || w[0] == "level" || w[0] == "reinit" ||
					w[0] == "drain" || w[0] == "join"))
			return fail("'" + w[0] + "' inside an 'nmi' block (close it with 'end')");
		if (w[0] == "join" && w.size() == 1) {
			if (p.ops.empty() || (!p.joins.empty() && p.joins.back() == p.ops.size()))
				return fail("'join' must stand between two ops");
			p.joins.push_back(p.ops.size());
			join_lines.push_back(no);
			continue;
		}
		if (w[0] == "concurrent" && w.size() == 1) {
			p.concurrent = true;
			continue;
		}
		if (w[0] == "open" && w.size() == 2 && w[1] == "upstream") {
			p.open_upstream = true;
			continue;
		}
		if (w[0] == "points" && w.size() == 2 && w[1] == "access") {
			p.access_points = true;
			points_line = no;
			continue;
		}
		if (w[0] == "at") {  // a schedule record (base/sched/record.h), parsed once the handlers are known
			records.emplace_back(no, std::move(w));
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
			if (opt[0] == 'c' && !blocks.empty())
				return fail("'cpu=' inside an 'nmi' block: its calls run on the block's CPU");
			if (opt[0] == 'c' && parse_u64(opt.substr(4), &cpu) && cpu < u64(BUDDY_NR_CPUS))
				op.cpu = u8(cpu);
			else if (opt[0] == 'a' && opt.size() > 3 &&
				 (op.kind == BuddyOp::nmi_free || op.kind == BuddyOp::nmi_alloc || op.kind == BuddyOp::nmi))
				op.at = opt.substr(3);
			else
				return fail("bad option '" + opt + "' to '" + w[0] + "'");
		}
		if (!blocks.empty())
			op.cpu = blocks.back().cpu;  // a block's calls run on its CPU
		if (op.kind == BuddyOp::nmi) {
			if (w.size() != 1)
				return fail("'nmi' takes only cpu= and at= (its calls follow, one a line, up to 'end')");
			if (blocks.size() >= kMaxNmiNesting)
				return fail("'nmi' blocks nest " + std::to_string(kMaxNmiNesting) + " deep at most");
			blocks.push_back(op);
			continue;
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
			if (ok && w.size() == 3 && !blocks.empty())
				return fail("'nmi=' inside an 'nmi' block: write a nested 'nmi at=buddy_lock:held' block");
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
		case BuddyOp::nmi:  // opened above
			break;
		}
		if (!ok)
			return fail("bad arguments to '" + w[0] + "'");
		(blocks.empty() ? p.ops : blocks.back().body).push_back(op);
	}
	if (!blocks.empty())
		return fail("'nmi' block without 'end'");
	size_t handlers = 0;
	for (const BuddyOp &op : p.ops)
		handlers += armed_handlers(op);
	for (const auto &[line, rw] : records) {
		sched::Record r;
		std::string err;
		no = line;
		if (!sched::parse_record(rw.data() + 1, rw.size() - 1, BUDDY_NR_CPUS, int(handlers), &r, &err))
			return fail(err);
		p.schedule.push_back(r);
		// a switch needs CPUs running at once; a lock failure or an NMI
		// happens in a sequential run as well
		p.concurrent |= r.action == sched::Action::switch_to;
	}
	if (!p.joins.empty() && p.joins.back() == p.ops.size()) {
		no = join_lines.back();
		return fail("'join' must stand between two ops");
	}
	if (p.access_points && !takes_access_points(p.level)) {
		no = points_line;
		return fail("'points access' is not for the nmi levels (their shadow predicts the deferred list at named points)");
	}
	return p;
}

}  // namespace fl::libarena
