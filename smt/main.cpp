// SPDX-License-Identifier: GPL-2.0-only
// faultline-prove: runs the obligation table over the port's own code
// (smt/port/: the port compiled over symbolic integers, one run per path),
// replays every counterexample through the concrete port, compares each
// row with smt/expected and optionally writes every query as a standalone
// .smt2 script (--emit DIR). Rows of one width, page size and door share
// their explorations and run on one thread; such settings run side by
// side on --jobs threads (default: every core).
// Exit 0 iff every row matches its expectation (and every counterexample
// replayed), 1 otherwise, 2 on bad options.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <thread>

#include "check/program_text.h"
#include "smt/port/cost.h"
#include "smt/replay.h"

using namespace fl;
using namespace fl::smt;

namespace {

constexpr unsigned kRlimit = 20'000'000;
// The emitted scripts' check, as faultline-prove makes it: a proof's
// disjunction split into one goal per path (split-clause), the purified
// definitions solved, then the older arithmetic core, then the newer one
// (the try-for only decides how soon, not what z3 FILE answers); the plain
// tactic for obligation 7, whose exact products the split leaves undecided
constexpr const char *kCheckSat =
	"(check-sat-using\n"
	" (or-else (then simplify split-clause solve-eqs\n"
	"                (or-else (try-for (using-params smt :arith.solver 2) 3000) (using-params smt :arith.solver 6)))\n"
	"          (then simplify solve-eqs\n"
	"                (or-else (try-for (using-params smt :arith.solver 2) 3000) (using-params smt :arith.solver 6)))))\n";

const char *kTitles[] = {"",
			 "soundness of the mmap bound",
			 "completeness of the mmap bound",
			 "eager == lazy (accepted set and kernel page)",
			 "fault offset stays inside the allocation",
			 "split/fork keep linear_page_index",
			 "v3 fault-around window",
			 "geometry facts of every map array_map_alloc creates"};

const char *kAssumeText[] = {
	"direct: do_mmap without its offset checks (the port's direct door)",
	"anon: do_mmap with its offset checks and file_mmap_ok(ULONG_MAX) + reachable vm_pgoff",
	"regular: do_mmap with its offset checks and file_mmap_ok(MAX_LFS_FILESIZE) + reachable vm_pgoff",
	"range: direct plus only the syscall's reachable vm_pgoff",
	"none"};

constexpr const char *kUsage =
	"faultline-prove [--patch pre|v1|v2|v3] [--arch 32|64] [--page 4k|64k] [--assume anon|regular|direct]\n"
	"                       [--obligation 1-7] [--emit DIR] [--expected FILE] [--timeout MS] [--jobs N] [--verbose]\n"
	"                       [--profile]  (where the solver time went, summed over the threads)";

int usage(const char *msg)
{
	std::fprintf(stderr, "faultline-prove: %s\nusage: %s\n", msg, kUsage);
	return 2;
}

std::map<std::string, std::string> load_expected(const std::string &path, bool *ok)
{
	std::map<std::string, std::string> out;
	std::ifstream in(path);
	*ok = bool(in);
	std::string line;
	while (std::getline(in, line)) {
		if (line.empty() || line[0] == '#')
			continue;
		size_t arrow = line.find("->");
		if (arrow == std::string::npos)
			continue;
		auto trim = [](std::string s) {
			s.erase(0, s.find_first_not_of(" \t"));
			s.erase(s.find_last_not_of(" \t") + 1);
			return s;
		};
		out[trim(line.substr(0, arrow))] = trim(line.substr(arrow + 2));
	}
	return out;
}

struct Outcome {
	z3::check_result res = z3::unsat;
	size_t part = 0;          // sat: the first sat disjunct (the replay re-solves it for a real map)
	std::vector<bool> unsat;  // each disjunct checked: unsat
};

// What Z3 decides for one disjunct (or their disjunction): the row's
// assumptions, the session's definitions, extra and the disjunct, every
// mod/div by a number purified (Session::purify, linear integer
// arithmetic), sliced to what the disjunct and extra touch (Session::slice)
std::vector<z3::expr> assertions(Query &q, const z3::expr &part, const std::vector<z3::expr> &extra = {})
{
	fl::sym::Session &session = *q.session;
	std::vector<z3::expr> all = {session.purify(q.assumptions())}, roots = {session.purify(part)};
	for (const z3::expr &e : extra)
		roots.push_back(session.purify(e));
	all.insert(all.end(), session.defs.begin(), session.defs.end());  /* after purify: its definitions */
	all.insert(all.end(), roots.begin(), roots.end());
	return session.slice(all, roots);
}

// s.check() of them: a solver per check, without push, so that Z3
// preprocesses the whole problem (solve-eqs on the purified definitions).
// A model of an earlier sat check in the session that satisfies them all
// answers sat without a solver call (the direct rows of one setting often
// share their counterexample, and a replay's real map is often the one
// the row's own check found).
z3::check_result check_part(Query &q, const z3::expr &part, const std::vector<z3::expr> &extra, unsigned timeout_ms,
			    std::optional<z3::model> *model, unsigned rlimit = kRlimit)
{
	std::vector<z3::expr> all = assertions(q, part, extra);
	for (auto m = q.session->models.rbegin(); m != q.session->models.rend(); ++m)
		if (std::all_of(all.begin(), all.end(), [&](const z3::expr &a) { return m->eval(a, true).is_true(); })) {
			if (model)
				*model = *m;
			return z3::sat;
		}
	z3::solver s(q.session->c);
	for (const z3::expr &a : all)
		s.add(a);
	z3::check_result r = fl::sym::check_portfolio(s, rlimit, timeout_ms);
	if (r == z3::sat) {
		q.session->models.push_back(s.get_model());
		if (model)
			*model = q.session->models.back();
	}
	return r;
}

// The row decided within Z3's deterministic rlimit, so a verdict does not
// depend on the machine's load (timeout is only a wall-clock guard): one
// check per path's disjunct of the negated property, in the order the
// paths were explored, each a small linear problem where their
// disjunction made Z3 give up; the first sat one is the counterexample,
// and the exploration stops there. prior: the same disjuncts' answers under
// fewer assumptions (a range query's direct row): its unsat ones stay unsat
Outcome solve(Query &q, unsigned timeout_ms, const Outcome *prior = nullptr)
{
	fl::sym::Session::Scope scope(*q.session);
	fl::sym::CostScope cost(fl::sym::Cost::disjunct);
	Outcome o;
	for (size_t i = 0; const z3::expr *part = q.part(i); i++) {
		o.unsat.push_back(true);
		if (part->simplify().is_false() || (prior && i < prior->unsat.size() && prior->unsat[i]))
			continue;
		z3::check_result r = check_part(q, *part, {}, timeout_ms, nullptr);
		o.unsat[i] = r == z3::unsat;
		if (r == z3::sat) {
			o.res = z3::sat;
			o.part = i;
			return o;
		}
		if (r == z3::unknown)
			o.res = z3::unknown;
	}
	if (o.res == z3::unsat && !q.complete())
		o.res = z3::unknown;  /* unfinished paths: not a proof */
	return o;
}

// The row's script: a proof's every disjunct, a counterexample's own
// (the path whose disjunct the model satisfies)
void emit(const std::string &dir, Query &q, const Outcome &o, const std::string &expected_answer)
{
	fl::sym::Session::Scope scope(*q.session);
	const Setup &st = q.setup;
	z3::expr_vector parts(q.session->c);
	for (size_t i = 0; i < q.parts.size(); i++)
		if (o.res != z3::sat || i == o.part)
			parts.push_back(q.parts[i]);
	z3::solver s(q.session->c);
	for (const z3::expr &a : assertions(q, z3::mk_or(parts)))
		s.add(a);
	std::ofstream out(dir + "/" + st.file());
	out << "; SPDX-License-Identifier: GPL-2.0-only\n"
	    << "; faultline obligation " << st.obligation << ": " << kTitles[st.obligation] << "\n"
	    << "; configuration: " << (st.level ? "level " + std::string(to_string(*st.level)) + ", " : std::string())
	    << "arch" << st.bits << " (unsigned long = " << st.bits << " bits), page "
	    << (st.shift == 12 ? "4k" : "64k") << " (PAGE_SHIFT " << st.shift << ")"
	    << (st.obligation == 7 ? std::string(", bypass_spec_v1 ") + (st.bypass ? "on" : "off") : std::string()) << "\n"
	    << "; assumption: " << kAssumeText[int(st.assume)] << "\n"
	    << "; computed by the port itself: " << q.paths << " paths of its code (smt/port/), their\n"
	    << "; conditions and what they did" << (o.res == z3::sat ? " (here the counterexample's path)" : "")
	    << "; every mod/div by a number is a quotient\n"
	    << "; and remainder variable (linear integer arithmetic)\n"
	    << "; the negated property is asserted: unsat = proved, sat = counterexample\n"
	    << "; expected: " << expected_answer << "\n"
	    << "; generated by faultline-prove --emit (smt/); run: z3 " << st.file() << "\n"
	    << "(set-option :smt.arith.solver 2)\n";
	std::string text = s.to_smt2();
	const std::string check = "(check-sat)\n";
	if (text.size() >= check.size() && text.compare(text.size() - check.size(), check.size(), check) == 0)
		text.replace(text.size() - check.size(), check.size(), kCheckSat);
	out << text;
}

// A model the machine can run: the map's geometry a real map has (value_size
// 8, bypass: the product is 8 * max_entries and the area exactly the header,
// the data and the guard page), small, the bad page on the header page if
// possible. None: the abstraction's counterexample is spurious.
std::optional<Replay> replay_row(Query &q, unsigned timeout_ms)
{
	const Setup &st = q.setup;
	if (!st.level || !q.in)
		return std::nullopt;
	fl::sym::Session::Scope scope(*q.session);
	fl::sym::CostScope cost(fl::sym::Cost::replay);
	z3::context &c = q.session->c;
	const port::Inputs &in = *q.in;
	uint64_t ps = (uint64_t)1 << st.shift;
	z3::expr me = in.max_entries.e, es = in.elem_size.e;
	auto factor = [](const port::Input &i) { return fl::sym::Factor{i.e, i.lo, i.hi, i.tz}; };
	z3::expr prod = q.session->product(factor(in.max_entries), factor(in.elem_size));  /* the rows' variable */
	z3::expr data = prod + c.int_val(ps - 1) - z3::mod(prod + c.int_val(ps - 1), c.int_val(ps));
	std::vector<z3::expr> real = {es == 8, prod == 8 * me, in.size.e == data + c.int_val(2 * ps)};
	std::vector<z3::expr> small = {me <= 4096, in.len.e <= c.int_val(16 * ps)};
	// small first, then a map of up to 8 MiB of data, then one of up to
	// 8 GiB with a VMA of up to 8 GiB (a slip past 4 GiB; the machine's
	// pages are lazy, pre's eager PTEs cost ~0.3 s per GiB at 4 KiB) on
	// the paths explored; then small on up to 32 more
	std::vector<z3::expr> medium = real, large = real, small_one = real;
	small_one.insert(small_one.end(), small.begin(), small.end());
	medium.push_back(me <= (1 << 20));
	large.push_back(me <= (1 << 30));
	large.push_back(in.len.e <= c.int_val(uint64_t(1) << 33));
	const size_t explored = q.parts.size();
	for (auto [extra, upto] :
	     {std::pair{&small_one, explored}, {&medium, explored}, {&large, explored}, {&small_one, explored + 32}}) {
		for (size_t i = 0; i < upto; i++) {
			const z3::expr *part = q.part(i);
			if (!part)
				break;
			std::optional<z3::model> m;
			if (part->simplify().is_false() || check_part(q, *part, *extra, timeout_ms, &m, kRlimit / 8) != z3::sat)
				continue;
			auto value = [&](const z3::expr &e) { return m->eval(e, true).get_numeral_uint64(); };
			static std::mutex machine;  /* one replay at a time: the rows run on several threads */
			std::lock_guard lock(machine);
			return replay(st, Values{(uint32_t)value(es), (uint32_t)value(me), value(in.vm_pgoff.e),
						 value(in.len.e), value(in.page.e)});
		}
	}
	return std::nullopt;
}

// One row of the table, as far as its own setting decides it (a direct
// row's rescue by anon needs the anon row: main, after every group).
struct Row {
	Setup st;
	std::string want;
	z3::check_result res = z3::unknown;
	std::string detail;
	std::string rescue;  // a direct row's counterexample: the assumption that rescues it
	double ms = 0;
	unsigned paths = 0;
	bool replay_ok = true;
	Outcome outcome;
	std::string result() const
	{
		std::string r = res == z3::unsat ? "proved" : res == z3::sat ? "cex" : "unknown";
		return rescue.empty() ? r : r + " rescue=" + rescue;
	}
	bool match() const { return result() == want && replay_ok; }
};

struct Options {
	std::string emit_dir;
	unsigned timeout_ms = 60000;
	bool verbose = false;
	bool profile = false;
};

// Work after a group's rows: --emit's scripts, whose purified disjunctions
// would otherwise add definitions to the session the next rows check in
// (so a verdict does not depend on --emit)
using Later = std::vector<std::function<void()>>;

void emit_later(Later &later, const Options &opt, std::shared_ptr<Query> q, const Outcome &o, const char *answer)
{
	if (!opt.emit_dir.empty())
		later.push_back([dir = opt.emit_dir, q, o, answer]() { emit(dir, *q, o, answer); });
}

void run_row(Row &row, std::shared_ptr<Scenario> scenario, const Options &opt, Later &later)
{
	auto t0 = std::chrono::steady_clock::now();
	auto qp = std::make_shared<Query>(build_query(row.st, std::move(scenario)));
	Query &q = *qp;
	Outcome &o = row.outcome = solve(q, opt.timeout_ms);
	row.res = o.res;
	row.paths = q.paths;
	const std::string &w = row.want;
	emit_later(later, opt, qp, o, w.rfind("cex", 0) == 0 ? "sat" : w == "proved" ? "unsat" : "unknown");
	if (!q.complete() && o.res != z3::sat)
		row.detail = "unfinished paths (" + std::to_string(q.cut) + "): " + q.cut_why;
	if (o.res == z3::sat && row.st.level) {
		std::optional<Replay> r = replay_row(q, opt.timeout_ms);
		row.replay_ok = r && r->reproduced;
		row.detail = !r ? "NOT REPRODUCED: no model with a real map's geometry"
				: std::string(r->reproduced ? "reproduced: " : "NOT REPRODUCED: ") + r->what + "\n      " +
					  r->values;
		if (r && opt.verbose)
			row.detail += "\n" + format_program(r->program);
		if (r && !opt.emit_dir.empty()) {
			const Setup &st = row.st;
			std::ofstream fl(opt.emit_dir + "/" + st.file().substr(0, st.file().size() - 5) + ".fl");
			fl << "# faultline-prove counterexample: obligation " << st.obligation << " ("
			   << kTitles[st.obligation] << "), " << st.key() << "\n"
			   << format_program(r->program);
		}
	}
	row.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A direct row's counterexample: does the syscall's reachable vm_pgoff
// rescue it (the `range` query, over the row's own paths)? Asked too for
// --emit where the expectation names a rescue.
bool wants_range(const Row &row, const Options &opt)
{
	return row.st.assume == Assume::direct && row.st.level &&
	       (row.res == z3::sat || (!opt.emit_dir.empty() && row.want.find("rescue=") != std::string::npos));
}

void run_range(Row &row, std::shared_ptr<Scenario> scenario, const Options &opt, Later &later)
{
	auto t0 = std::chrono::steady_clock::now();
	auto q = std::make_shared<Query>(build_range_query(row.st, std::move(scenario)));
	Outcome o = solve(*q, opt.timeout_ms, &row.outcome);
	row.rescue = o.res == z3::unsat ? "range" : "none";
	emit_later(later, opt, q, o, row.want.find("rescue=range") != std::string::npos ? "unsat" : "sat");
	row.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Tasks (group_task) over `jobs` threads
void run_tasks(std::vector<std::function<void()>> &tasks, unsigned jobs)
{
	std::atomic<size_t> next{0};
	auto worker = [&]() {
		for (size_t i; (i = next++) < tasks.size();)
			tasks[i]();
	};
	std::vector<std::thread> threads;
	for (unsigned j = 1; j < std::min<size_t>(jobs, tasks.size()); j++)
		threads.emplace_back(worker);
	worker();
	for (std::thread &t : threads)
		t.join();
}

// a row outside the selection (a direct row's anon counterpart)
bool proves(const Setup &st, Options opt)
{
	Row row{st, ""};
	opt.emit_dir.clear();
	Later none;
	run_row(row, nullptr, opt, none);
	return row.res == z3::unsat;
}

// The rows that share a Scenario's explorations (kmodel.h): one width, page
// size and door, and either v3 or pre with v1 and v2. Obligation 3 runs a
// lazy level against pre in one session; v1's and v2's faults are a few
// cheap paths, so they join pre's session rather than explore pre again
// each (2 s of CPU over the table). v3's window is the costly exploration:
// it keeps its own session and explores pre there for its obligation 3.
std::string scenario_key(const Setup &st)
{
	return std::to_string(st.bits) + (st.shift == 12 ? " 4k " : " 64k ") + to_string(st.assume) +
	       (*st.level == Patch::v3 ? " v3" : " pre+v1+v2");
}

// A task: rows that share a scenario (none: a level-independent row, in a
// session of its own), in table order on one thread (the scenario's Session
// is one Z3 context, so a verdict does not depend on the threads); the
// direct rows' range queries after the rows, so that they do not change
// the order the rows' explorations reach the session in; the scripts last
std::function<void()> group_task(std::vector<Row *> g, const Options &opt)
{
	return [g, &opt]() {
		const Setup &st = g[0]->st;
		fl::sym::CostLabel label(st.level ? scenario_key(st) : st.key());
		auto sc = st.level ? make_scenario(st) : nullptr;
		Later later;
		for (Row *row : g)
			run_row(*row, sc, opt, later);
		for (Row *row : g)
			if (wants_range(*row, opt))
				run_range(*row, sc, opt, later);
		for (auto &f : later)
			f();
	};
}

}  // namespace

int main(int argc, char **argv)
{
	std::optional<Patch> patch;
	std::optional<unsigned> bits, shift;
	int obligation = 0;
	std::string expected_path = FL_SMT_DIR "/expected";
	std::string only_assume;
	Options opt;
	unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
	// Z3 4.8's older arithmetic core: on these linear queries with mod
	// definitions it answers in milliseconds where the default core
	// wanders for minutes (docs/proofs.md); the emitted files say the same
	z3::set_param("smt.arith.solver", 2);

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto arg = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
		if (a == "--patch") {
			const char *v = arg();
			if (!v || !(patch = parse_patch(v)))
				return usage("--patch wants pre, v1, v2 or v3");
		} else if (a == "--arch") {
			const char *v = arg();
			if (!v || (std::strcmp(v, "32") && std::strcmp(v, "64")))
				return usage("--arch wants 32 or 64");
			bits = (unsigned)std::atoi(v);
		} else if (a == "--page") {
			const char *v = arg();
			if (!v || (std::strcmp(v, "4k") && std::strcmp(v, "64k")))
				return usage("--page wants 4k or 64k");
			shift = std::strcmp(v, "4k") ? 16u : 12u;
		} else if (a == "--assume") {
			const char *v = arg();
			if (!v || (std::strcmp(v, "anon") && std::strcmp(v, "regular") && std::strcmp(v, "direct")))
				return usage("--assume wants anon, regular or direct");
			only_assume = v;
		} else if (a == "--obligation") {
			const char *v = arg();
			obligation = v ? std::atoi(v) : 0;
			if (obligation < 1 || obligation > 7)
				return usage("--obligation wants 1 to 7");
		} else if (a == "--emit") {
			const char *v = arg();
			if (!v)
				return usage("--emit wants a directory");
			opt.emit_dir = v;
		} else if (a == "--expected") {
			const char *v = arg();
			if (!v)
				return usage("--expected wants a file");
			expected_path = v;
		} else if (a == "--timeout") {
			const char *v = arg();
			int ms = v ? std::atoi(v) : 0;
			if (ms < 1)
				return usage("--timeout wants milliseconds (at least 1)");
			opt.timeout_ms = (unsigned)ms;
		} else if (a == "--jobs" || a == "-j") {
			const char *v = arg();
			int n = v ? std::atoi(v) : 0;
			if (n < 1)
				return usage("--jobs wants a number of threads (at least 1)");
			jobs = (unsigned)n;
		} else if (a == "--verbose" || a == "-v") {
			opt.verbose = true;
		} else if (a == "--profile") {
			opt.profile = true;
		} else if (a == "-h" || a == "--help") {
			std::printf("faultline-prove: proves the array-map mmap obligations over the port's own code with Z3\n"
				    "usage: %s\n", kUsage);
			return 0;
		} else {
			return usage(("unknown option " + a).c_str());
		}
	}

	bool have_expected;
	auto expected = load_expected(expected_path, &have_expected);
	if (!have_expected)
		return usage(("cannot read " + expected_path).c_str());

	std::vector<Row> rows;
	for (const Setup &st : all_setups()) {
		if ((obligation && st.obligation != obligation) || (bits && st.bits != *bits) || (shift && st.shift != *shift) ||
		    (patch && st.level && *st.level != *patch) ||
		    (!only_assume.empty() && only_assume != to_string(st.assume)))
			continue;
		auto it = expected.find(st.key());
		rows.push_back({st, it == expected.end() ? "(no expectation)" : it->second});
	}

	// the rows of one setting and level in one task, sharing its
	// explorations; the level-independent rows each alone; the costly first
	auto wall0 = std::chrono::steady_clock::now();
	std::map<std::string, std::vector<Row *>> groups;
	std::vector<std::vector<Row *>> alone;
	for (Row &row : rows) {
		if (row.st.level)
			groups[scenario_key(row.st)].push_back(&row);
		else
			alone.push_back({&row});
	}
	auto weight = [](const Setup &st) {
		return (st.shift == 12 ? 8 : 1) * (st.bits == 64 ? 2 : 1) * (st.assume == Assume::direct ? 2 : 1) *
		       (*st.level == Patch::v3 ? 4 : 1);
	};
	std::vector<std::vector<Row *>> ordered;
	for (auto &[key, g] : groups)
		ordered.push_back(g);
	std::stable_sort(ordered.begin(), ordered.end(),
			 [&](const auto &a, const auto &b) { return weight(a[0]->st) > weight(b[0]->st); });
	ordered.insert(ordered.end(), alone.begin(), alone.end());
	std::vector<std::function<void()>> tasks;
	for (const std::vector<Row *> &g : ordered)
		tasks.push_back(group_task(g, opt));
	run_tasks(tasks, jobs);

	// a direct row's counterexample that range does not rescue: does anon's
	// row of the same configuration prove it?
	std::map<std::string, const Row *> by_key;
	for (const Row &row : rows)
		by_key[row.st.key()] = &row;
	for (Row &row : rows) {
		if (row.res != z3::sat || row.st.assume != Assume::direct || !row.st.level) {
			row.rescue.clear();
			continue;
		}
		if (row.rescue == "range")
			continue;
		Setup anon = row.st;
		anon.assume = Assume::anon;
		auto known = by_key.find(anon.key());
		row.rescue = (known != by_key.end() ? known->second->res == z3::unsat : proves(anon, opt)) ? "anon" : "none";
	}

	std::printf("%-2s %-5s %-4s %-4s %-8s %-22s %8s %6s  %s\n", "ob", "level", "arch", "page", "assume", "result",
		    "time", "paths", "replay / expected");
	int bad = 0;
	double total_ms = 0;
	for (const Row &row : rows) {
		const Setup &st = row.st;
		total_ms += row.ms;
		if (!row.match())
			bad++;
		std::string result = row.result();
		std::printf("%-2d %-5s %-4u %-4s %-8s %-22s %6.0fms %6u  %s%s\n", st.obligation,
			    st.level ? to_string(*st.level) : "any", st.bits, st.shift == 12 ? "4k" : "64k",
			    st.obligation == 7 ? (st.bypass ? "bypass" : "mask") : to_string(st.assume), result.c_str(), row.ms,
			    row.paths, result == row.want ? "" : ("MISMATCH, expected " + row.want + "  ").c_str(),
			    row.detail.c_str());
	}
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
	// an answer of the guarded core may depend on the machine's speed
	std::printf("%zu rows, %d mismatched; rows %.2f s, wall %.2f s on %u threads; %u wall-clock-guarded tries\n",
		    rows.size(), bad, total_ms / 1000, wall, jobs, fl::sym::guarded_tries());
	if (opt.profile)
		fl::sym::print_costs(stdout);
	return bad ? 1 : 0;
}
