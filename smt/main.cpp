// SPDX-License-Identifier: GPL-2.0-only
// faultline-prove: runs the obligation table over the port's own code
// (smt/port/: the port compiled over symbolic integers, one run per path),
// replays every counterexample through the concrete port, compares each
// row with smt/expected and optionally writes every query as a standalone
// .smt2 script.
//
//	faultline-prove [--patch P] [--arch 32|64] [--obligation N] [--emit DIR]
//	                [--expected FILE] [--timeout MS (per query, 60000)] [--emit-only]
//	                [--verbose]
// --emit-only writes the scripts (and no .fl models) without solving.
// Exit 0 iff every row matches its expectation (and every counterexample
// replayed), 1 otherwise, 2 on bad options.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "check/program_text.h"
#include "smt/replay.h"

using namespace fl;
using namespace fl::smt;

namespace {

constexpr unsigned kRlimit = 20'000'000;

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

int usage(const char *msg)
{
	std::fprintf(stderr, "faultline-prove: %s\nusage: faultline-prove [--patch pre|v1|v2|v3] "
			     "[--arch 32|64] [--page 4k|64k] [--obligation 1-7] [--emit DIR] [--expected FILE] [--timeout MS] [--emit-only] [--verbose]\n",
		     msg);
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
	z3::check_result res;
	double ms;
	std::optional<z3::model> model;
};

// the disjuncts of an or (the negated property is one per path)
void disjuncts(const z3::expr &e, std::vector<z3::expr> &out)
{
	if (e.is_app() && e.decl().decl_kind() == Z3_OP_OR) {
		for (unsigned i = 0; i < e.num_args(); i++)
			disjuncts(e.arg(i), out);
	} else if (!e.is_false()) {
		out.push_back(e);
	}
}

// the row's formula, decided (and a model kept) within Z3's deterministic
// rlimit, so a verdict does not depend on the machine's load; timeout is
// only a wall-clock guard. One check per path's disjunct of the negated
// property: each is a small linear problem where their disjunction made Z3
// give up; the first sat one is the counterexample
Outcome solve(Query &q, unsigned timeout_ms, const std::vector<z3::expr> &extra = {})
{
	fl::sym::Session::Scope scope(*q.session);
	z3::context &c = q.session->c;
	auto t0 = std::chrono::steady_clock::now();
	std::vector<z3::expr> common = {q.session->purify(*q.assumptions)}, parts;
	for (const z3::expr &e : extra)
		common.push_back(q.session->purify(e));
	disjuncts(q.session->purify(*q.negated), parts);
	Outcome o{z3::unsat, 0, std::nullopt};
	for (const z3::expr &part : parts) {
		/* a solver per check, without push: Z3 then preprocesses the
		   whole problem (solve-eqs on the purified definitions) */
		z3::solver s(c);
		for (const z3::expr &e : common)
			s.add(e);
		for (const z3::expr &d : q.session->defs)  /* after purify: its definitions */
			s.add(d);
		s.add(part);
		z3::check_result r = fl::sym::check_portfolio(s, kRlimit, timeout_ms);
		if (r == z3::sat) {
			o = {r, 0, s.get_model()};
			break;
		}
		if (r == z3::unknown)
			o.res = z3::unknown;
	}
	o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	if (o.res == z3::unsat && !q.complete())
		o.res = z3::unknown;  /* unfinished paths: not a proof */
	return o;
}

void emit(const std::string &dir, Query &q, const std::string &expected_answer)
{
	fl::sym::Session::Scope scope(*q.session);
	const Setup &st = q.setup;
	z3::solver s(q.session->c);
	s.add(q.formula());
	for (const z3::expr &d : q.session->defs)
		s.add(d);
	std::ofstream out(dir + "/" + st.file());
	out << "; SPDX-License-Identifier: GPL-2.0-only\n"
	    << "; faultline obligation " << st.obligation << ": " << kTitles[st.obligation] << "\n"
	    << "; configuration: " << (st.level ? "level " + std::string(to_string(*st.level)) + ", " : std::string())
	    << "arch" << st.bits << " (unsigned long = " << st.bits << " bits), page "
	    << (st.shift == 12 ? "4k" : "64k") << " (PAGE_SHIFT " << st.shift << ")"
	    << (st.obligation == 7 ? std::string(", bypass_spec_v1 ") + (st.bypass ? "on" : "off") : std::string()) << "\n"
	    << "; assumption: " << kAssumeText[int(st.assume)] << "\n"
	    << "; computed by the port itself: " << q.paths << " paths of its code (smt/port/), their\n"
	    << "; conditions and what they did; every mod/div by a number is a quotient and\n"
	    << "; remainder variable (linear integer arithmetic)\n"
	    << "; the negated property is asserted: unsat = proved, sat = counterexample\n"
	    << "; expected: " << expected_answer << "\n"
	    << "; generated by faultline-prove --emit (smt/); run: z3 " << st.file() << "\n"
	    << s.to_smt2();
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
	z3::context &c = q.session->c;
	const port::Inputs &in = *q.in;
	uint64_t ps = (uint64_t)1 << st.shift;
	z3::expr me = in.max_entries.e, es = in.elem_size.e;
	auto factor = [](const port::Input &i) { return fl::sym::Factor{i.e, i.lo, i.hi, i.tz}; };
	z3::expr prod = q.session->product(factor(in.max_entries), factor(in.elem_size));  /* the rows' variable */
	z3::expr data = prod + c.int_val(ps - 1) - z3::mod(prod + c.int_val(ps - 1), c.int_val(ps));
	std::vector<z3::expr> real = {es == 8, prod == 8 * me, in.size.e == data + c.int_val(2 * ps)};
	std::vector<z3::expr> small = {me <= 4096, in.len.e <= c.int_val(16 * ps)};
	for (int tier = 0; tier < 2; tier++) {
		std::vector<z3::expr> extra = real;
		if (tier == 0)
			extra.insert(extra.end(), small.begin(), small.end());
		Outcome o = solve(q, timeout_ms, extra);
		if (o.res != z3::sat)
			continue;
		auto value = [&](const z3::expr &e) { return o.model->eval(e, true).get_numeral_uint64(); };
		if (getenv("FL_PROVE_DEBUG"))
			for (auto &[name, e] : q.debug)
				std::printf("   %s = %s   [%s]\n", name.c_str(), o.model->eval(e, true).to_string().c_str(),
					    e.to_string().substr(0, 200).c_str());
		return replay(st, Values{(uint32_t)value(es), (uint32_t)value(me), value(in.vm_pgoff.e), value(in.len.e),
					 value(in.page.e)});
	}
	return std::nullopt;
}

}  // namespace

int main(int argc, char **argv)
{
	std::optional<Patch> patch;
	std::optional<unsigned> bits, shift;
	int obligation = 0;
	std::string emit_dir, expected_path = FL_SMT_DIR "/expected";
	bool verbose = false, emit_only = false;
	std::string only_assume;
	unsigned timeout_ms = 60000;
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
		} else if (a == "--assume") {  /* one front door's rows (debugging) */
			const char *v = arg();
			if (!v)
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
			emit_dir = v;
		} else if (a == "--expected") {
			const char *v = arg();
			if (!v)
				return usage("--expected wants a file");
			expected_path = v;
		} else if (a == "--emit-only") {  /* write the scripts, solve nothing */
			emit_only = true;
		} else if (a == "--timeout") {
			const char *v = arg();
			int ms = v ? std::atoi(v) : 0;
			if (ms < 1)
				return usage("--timeout wants milliseconds (at least 1)");
			timeout_ms = (unsigned)ms;
		} else if (a == "--verbose" || a == "-v") {
			verbose = true;
		} else if (a == "-h" || a == "--help") {
			usage("proves the array-map mmap obligations of issue 5 with Z3");
			return 0;
		} else {
			return usage(("unknown option " + a).c_str());
		}
	}

	if (emit_only && emit_dir.empty())
		return usage("--emit-only wants --emit DIR");

	bool have_expected;
	auto expected = load_expected(expected_path, &have_expected);
	if (!have_expected)
		return usage(("cannot read " + expected_path).c_str());

	int rows = 0, bad = 0;
	double total_ms = 0;
	// verdicts by key: a `direct` row's anon rescue is the anon row of the
	// same configuration, solved a moment before (rows go anon, regular,
	// direct); no need to solve it twice
	std::map<std::string, z3::check_result> verdicts;
	auto wall0 = std::chrono::steady_clock::now();
	std::printf("%-2s %-5s %-4s %-4s %-8s %-22s %8s %6s  %s\n", "ob", "level", "arch", "page", "assume", "result",
		    "time", "paths", "replay / expected");
	for (const Setup &st : all_setups()) {
		if ((obligation && st.obligation != obligation) || (bits && st.bits != *bits) || (shift && st.shift != *shift) ||
		    (patch && st.level && *st.level != *patch) ||
		    (!only_assume.empty() && only_assume != to_string(st.assume)))
			continue;
		rows++;
		auto row0 = std::chrono::steady_clock::now();
		Query q = build_query(st);
		auto it = expected.find(st.key());
		std::string want = it == expected.end() ? "(no expectation)" : it->second;
		if (!emit_dir.empty()) {
			emit(emit_dir, q, want.rfind("cex", 0) == 0 ? "sat" : want == "proved" ? "unsat" : "unknown");
			if (want.find("rescue=") != std::string::npos) {  /* the `range` query it asks */
				Setup rs = st;
				rs.assume = Assume::range;
				Query rq = build_query(rs);
				emit(emit_dir, rq, want.find("rescue=range") != std::string::npos ? "unsat" : "sat");
			}
		}
		if (emit_only)
			continue;

		double explore_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - row0).count();
		Outcome o = solve(q, timeout_ms);
		if (verbose)
			std::printf("   explore %.0f ms, solve %.0f ms\n", explore_ms, o.ms);
		verdicts[st.key()] = o.res;
		std::string result = o.res == z3::unsat ? "proved" : o.res == z3::sat ? "cex" : "unknown";
		std::string detail = q.complete() ? "" : "unfinished paths (" + std::to_string(q.cut) + "): " + q.cut_why;
		bool replay_ok = true;
		if (o.res == z3::sat && getenv("FL_PROVE_DEBUG") && !st.level)
			for (auto &[name, e] : q.debug)
				std::printf("   %s = %s\n", name.c_str(), o.model->eval(e, true).to_string().c_str());
		if (o.res == z3::sat) {
			if (st.assume == Assume::direct) {
				/* assumption-dependent: which assumption rescues it? */
				const char *rescue = "none";
				for (Assume a : {Assume::range, Assume::anon}) {
					Setup rs = st;
					rs.assume = a;
					auto known = verdicts.find(rs.key());
					z3::check_result rres;
					if (known != verdicts.end()) {
						rres = known->second;
					} else {
						Query rq = build_query(rs);
						rres = solve(rq, timeout_ms).res;
					}
					if (rres == z3::unsat) {
						rescue = to_string(a);
						break;
					}
				}
				result += std::string(" rescue=") + rescue;
			}
			std::optional<Replay> r = replay_row(q, timeout_ms);
			replay_ok = !st.level || (r && r->reproduced);
			if (st.level)
				detail = !r ? "NOT REPRODUCED: no model with a real map's geometry"
					    : std::string(r->reproduced ? "reproduced: " : "NOT REPRODUCED: ") + r->what +
						      "\n      " + r->values;
			if (r && verbose)
				detail += "\n" + format_program(r->program);
			if (r && !emit_dir.empty()) {
				std::ofstream fl(emit_dir + "/" + st.file().substr(0, st.file().size() - 5) + ".fl");
				fl << "# faultline-prove counterexample: obligation " << st.obligation << " ("
				   << kTitles[st.obligation] << "), " << st.key() << "\n"
				   << format_program(r->program);
			}
		}
		double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - row0).count();
		total_ms += ms;
		bool match = result == want && replay_ok;
		if (!match)
			bad++;
		std::printf("%-2d %-5s %-4u %-4s %-8s %-22s %6.0fms %6u  %s%s\n", st.obligation,
			    st.level ? to_string(*st.level) : "any", st.bits, st.shift == 12 ? "4k" : "64k",
			    st.obligation == 7 ? (st.bypass ? "bypass" : "mask") : to_string(st.assume), result.c_str(), ms,
			    q.paths, result == want ? "" : ("MISMATCH, expected " + want + "  ").c_str(), detail.c_str());
		std::fflush(stdout);
	}
	if (emit_only) {
		std::printf("%d rows: scripts written to %s\n", rows, emit_dir.c_str());
		return 0;
	}
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
	std::printf("%d rows, %d mismatched; rows %.2f s, wall %.2f s\n", rows, bad, total_ms / 1000, wall);
	return bad ? 1 : 0;
}
