// SPDX-License-Identifier: GPL-2.0-only
// faultline-prove: runs the obligation table, replays every counterexample
// through the port, compares each row with smt/expected and optionally
// writes every query as a standalone .smt2 script.
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
			 "split/mremap/fork keep linear_page_index",
			 "v3 fault-around window"};

const char *kAssumeText[] = {
	"direct: any vm_pgoff and len reach f_op->mmap",
	"anon: do_mmap pgoff-wrap check + file_mmap_ok(ULONG_MAX) + reachable vm_pgoff",
	"regular: do_mmap pgoff-wrap check + file_mmap_ok(MAX_LFS_FILESIZE) + reachable vm_pgoff",
	"range: direct plus only the syscall's reachable vm_pgoff",
	"none"};

int usage(const char *msg)
{
	std::fprintf(stderr, "faultline-prove: %s\nusage: faultline-prove [--patch pre|v1|v2|v3] "
			     "[--arch 32|64] [--obligation 1-6] [--emit DIR] [--expected FILE] [--timeout MS] [--emit-only] [--verbose]\n",
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
};

Outcome check(z3::solver &s)
{
	auto t0 = std::chrono::steady_clock::now();
	z3::check_result r = s.check();
	auto t1 = std::chrono::steady_clock::now();
	return {r, std::chrono::duration<double, std::milli>(t1 - t0).count()};
}

// A row's verdict. Obligation 6 is two queries: its own (the fault-around
// window stays inside one PTE table and inside the VMA, whose window slot
// j maps VMA page i + j - pte_off: no geometry, no bound) and obligation 1
// for v3 in the same configuration (every VMA page's kernel offset is in the
// visible data). Together they are obligation 6; alone, the combined query
// took seconds per row.
Outcome check_row(z3::context &ctx, const Setup &st, const z3::params &p, Query &q)
{
	Outcome o = check(q.solver);
	if (st.obligation == 6 && o.res == z3::unsat) {
		Setup s1 = st;
		s1.obligation = 1;
		Query q1 = build_query(ctx, s1);
		q1.solver.set(p);
		Outcome o1 = check(q1.solver);
		o = {o1.res, o.ms + o1.ms};
	}
	return o;
}

// the solver's script, with its (check-sat) replaced by the tactic the
// program uses: the file then decides like the table under `z3 FILE`
std::string with_tactic(std::string smt2)
{
	size_t at = smt2.rfind("(check-sat)");
	if (at != std::string::npos)
		smt2.replace(at, std::string("(check-sat)").size(), tactic_smt2());
	return smt2;
}

void emit(const std::string &dir, Query &q, std::string expected_answer)
{
	if (q.setup.obligation == 6)  /* the window part holds everywhere (do_fault_around clamps) */
		expected_answer = "unsat";
	const Setup &st = q.setup;
	std::ofstream out(dir + "/" + st.file());
	out << "; SPDX-License-Identifier: GPL-2.0-only\n"
	    << "; faultline obligation " << st.obligation << ": " << kTitles[st.obligation] << "\n"
	    << "; configuration: level " << (st.level ? to_string(*st.level) : "any") << ", arch"
	    << st.bits << " (unsigned long = " << st.bits << " bits), page "
	    << (st.shift == 12 ? "4k" : "64k") << " (PAGE_SHIFT " << st.shift << "), hdr_pgoff 1\n"
	    << "; assumption: " << kAssumeText[int(st.assume)] << "\n"
	    << "; geometry: visible and array_size symbolic, bound by the facts every map has\n"
	    << ";   (any value_size, max_entries, bypass_spec_v1; smt/obligations.cpp)\n"
	    << "; the negated property is asserted: unsat = proved, sat = counterexample\n"
	    << (st.obligation == 6 ? "; this is the window part (one PTE table, inside the VMA), the same for every\n"
				     "; assumption; the visible-data part is o1-v3 of the same configuration\n"
				   : "")
	    << "; expected: " << expected_answer << "\n"
	    << "; generated by faultline-prove --emit (smt/); run: z3 " << st.file() << "\n"
	    << with_tactic(q.solver.to_smt2());
}

// A model the machine can run, solved with the exact product: small map
// and VMA, value_size 8 and the bad page on the header page if possible.
// None: the abstraction's counterexample is spurious.
std::optional<std::pair<z3::model, Vars>> replay_model(z3::context &ctx, const Setup &st,
							unsigned timeout_ms)
{
	Query q = build_query(ctx, st, true);
	z3::params p(ctx);
	p.set("rlimit", kRlimit);
	p.set("timeout", timeout_ms);
	q.solver.set(p);
	for (int tier = 0; tier < 4; tier++) {
		q.solver.push();
		if (tier < 3)
			for (auto &e : q.small)
				q.solver.add(e);
		if (tier < 2)
			for (auto &e : q.small8)
				q.solver.add(e);
		if (tier < 1)
			for (auto &e : q.prefer)
				q.solver.add(e);
		if (q.solver.check() == z3::sat) {
			z3::model m = q.solver.get_model();
			return std::make_pair(m, q.v);
		}
		q.solver.pop();
	}
	return std::nullopt;
}

}  // namespace

int main(int argc, char **argv)
{
	std::optional<Patch> patch;
	std::optional<unsigned> bits;
	int obligation = 0;
	std::string emit_dir, expected_path = FL_SMT_DIR "/expected";
	bool verbose = false, emit_only = false;
	unsigned timeout_ms = 60000;

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
		} else if (a == "--obligation") {
			const char *v = arg();
			obligation = v ? std::atoi(v) : 0;
			if (obligation < 1 || obligation > 6)
				return usage("--obligation wants 1 to 6");
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
	std::printf("%-2s %-5s %-4s %-4s %-8s %-22s %8s  %s\n", "ob", "level", "arch", "page", "assume",
		    "result", "time", "replay / expected");
	for (const Setup &st : all_setups()) {
		if ((obligation && st.obligation != obligation) || (bits && st.bits != *bits) ||
		    (patch && st.level && *st.level != *patch))
			continue;
		rows++;
		// a context per row: the solver's heuristics depend on term ids,
		// so a shared context made a row's verdict depend on the rows
		// before it
		z3::context ctx;
		Query q = build_query(ctx, st);
		z3::params p(ctx);
		/* rlimit: Z3's deterministic work budget, so a verdict does not
		 * depend on the machine's load (the largest row needs ~1/20 of
		 * it); --timeout is only a wall-clock guard */
		p.set("rlimit", kRlimit);
		p.set("timeout", timeout_ms);
		/* the verdict needs no model (replay_model re-solves), and
		 * building one through the tactics' model converters cost up to
		 * seconds on some sat rows */
		p.set("model", false);
		q.solver.set(p);
		auto it = expected.find(st.key());
		std::string want = it == expected.end() ? "(no expectation)" : it->second;
		if (!emit_dir.empty()) {
			emit(emit_dir, q, want.rfind("cex", 0) == 0 ? "sat" : want == "proved" ? "unsat" : "unknown");
			if (want.find("rescue=") != std::string::npos) {  /* the `range` query it asks */
				Setup rs = st;
				rs.assume = Assume::range;
				Query rq = build_query(ctx, rs);
				emit(emit_dir, rq, want.find("rescue=range") != std::string::npos ? "unsat" : "sat");
			}
		}
		if (emit_only)
			continue;

		Outcome o = check_row(ctx, st, p, q);
		total_ms += o.ms;
		verdicts[st.key()] = o.res;
		std::string result = o.res == z3::unsat ? "proved" : o.res == z3::sat ? "cex" : "unknown";
		std::string detail;
		bool replay_ok = true;
		if (o.res == z3::sat) {
			auto mv = replay_model(ctx, st, timeout_ms);
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
						Query rq = build_query(ctx, rs);
						rq.solver.set(p);
						Outcome ro = check_row(ctx, rs, p, rq);
						total_ms += ro.ms;
						rres = ro.res;
					}
					if (rres == z3::unsat) {
						rescue = to_string(a);
						break;
					}
				}
				result += std::string(" rescue=") + rescue;
			}
			Replay r;
			if (mv)
				r = replay(st, mv->first, mv->second);
			else
				r.what = "spurious: no model with the exact (u64)max_entries * elem_size";
			replay_ok = r.reproduced || !st.level;
			detail = std::string(st.level ? (r.reproduced ? "reproduced: " : "NOT REPRODUCED: ") : "") +
				 r.what + "\n      " + r.values;
			if (verbose && st.level)
				detail += "\n" + format_program(r.program);
			if (!emit_dir.empty() && st.level) {
				std::ofstream fl(emit_dir + "/" + st.file().substr(0, st.file().size() - 5) + ".fl");
				fl << "# faultline-prove counterexample: obligation " << st.obligation << " ("
				   << kTitles[st.obligation] << "), " << st.key() << "\n"
				   << format_program(r.program);
			}
		}
		bool match = result == want && replay_ok;
		if (!match)
			bad++;
		std::printf("%-2d %-5s %-4u %-4s %-8s %-22s %6.1fms  %s%s\n", st.obligation,
			    st.level ? to_string(*st.level) : "any", st.bits, st.shift == 12 ? "4k" : "64k",
			    to_string(st.assume), result.c_str(), o.ms,
			    result == want ? "" : ("MISMATCH, expected " + want + "  ").c_str(), detail.c_str());
	}
	if (emit_only) {
		std::printf("%d rows: scripts written to %s\n", rows, emit_dir.c_str());
		return 0;
	}
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
	std::printf("%d rows, %d mismatched; solver %.2f s, wall %.2f s\n", rows, bad, total_ms / 1000, wall);
	return bad ? 1 : 0;
}
