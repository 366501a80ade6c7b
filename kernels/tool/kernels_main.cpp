// SPDX-License-Identifier: GPL-2.0-only
// faultline-kernels: the host side of `faultline kernels run|record`.
//
//   stage --arch 32|64 --patch pre|v1|v2 --out DIR [--release 6.12|6.1] [--count N --seed S] [FILE...]
//       writes the Programs this kernel can answer for to DIR/p (b-* run as
//       root, m-* without CAP_PERFMON) and DIR/index.tsv; random Programs are
//       decode_program() of seeded bytes, the fuzzers' own vocabulary.
//   compare DIR CONSOLE [--release 6.12|6.1] [--record OUT --kernel TEXT]
//       compares each guest trace in CONSOLE with the port; prints every
//       disagreement as the Program cut after its first differing op, with
//       both traces; exit 1 on any. --record writes corpus Programs' guest
//       traces to OUT/<path under corpora>.trace. --release (default 6.12)
//       names the guest kernel: which documented differences it still has.
//   diff DIR STOCK_CONSOLE PATCHED_CONSOLE
//       compares each Program's stock and patched guest traces directly (no
//       port): only the documented eager/lazy differences are allowed, each
//       named when used (eager_lazy.h); exit 1 on any other difference, or a
//       Program the patched kernel did not get to. Stage with --patch any.
//   repro-compare DIR CONSOLE
//       for every staged Program with a reproducer (DIR/p/NAME.repro, built by
//       kernels/repro.sh), checks in the same guest run that the reproducer
//       printed the runner's trace (or its reason) and exited 0 where that
//       trace is the port's, 1 where it is not, 2 where neither could run it;
//       exit 1 on any that does not.
//   check-recorded CORPORA
//       replays CORPORA/kernel-traces/<release>/<kernel>/**.trace against the port (exit 1 on
//       a disagreement) and flags corpus Programs with no recorded trace
//       (exit 77, ctest's skip code, when that is the only finding).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/fnv.h"
#include "check/program_binary.h"
#include "check/program_text.h"
#include "check/trace_text.h"
#include "console.h"
#include "eager_lazy.h"
#include "guest_config.h"
#include "guest_differences.h"
#include "stock_look.h"
#include "oracle/oracle.h"

namespace fs = std::filesystem;
using namespace fl;
using namespace fl::kernels;

namespace {

struct Usage : std::runtime_error {
	using std::runtime_error::runtime_error;
};

std::string slurp(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		throw Usage("cannot read '" + path + "'");
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

void spit(const fs::path &path, const std::string &text)
{
	fs::create_directories(path.parent_path());
	std::ofstream(path, std::ios::binary) << text;
}

Program parse_or_throw(const std::string &text, const std::string &where)
{
	ParseResult r = parse_program(text);
	if (!r.program)
		throw Usage(where + ":" + r.error.str());
	return *r.program;
}

// "corpora/programs/01_exact_fit.fl" -> "programs/01_exact_fit" (the
// recorded trace's name); empty when the file is not under a corpora/ folder.
std::string corpus_name(const std::string &path)
{
	std::string abs = fs::weakly_canonical(path).string();
	size_t at = abs.rfind("/corpora/");
	if (at == std::string::npos)
		return "";
	return fs::path(abs.substr(at + 9)).replace_extension("").string();
}

// FNV-1a of the Program's canonical text: a recorded trace names the exact
// Program it came from, so an edited corpus Program shows up as unrecorded.
std::string program_hash(const Program &p)
{
	uint64_t h = fnv1a(format_program(p));
	char buf[17];
	std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
	return buf;
}

uint64_t splitmix64(uint64_t &x)
{
	uint64_t z = (x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

Program random_program(uint64_t seed, uint64_t i)
{
	uint64_t x = seed * 0x100000001b3ull + i;
	std::vector<uint8_t> bytes(16 + splitmix64(x) % 112);
	for (auto &b : bytes)
		b = uint8_t(splitmix64(x));
	return decode_program(bytes.data(), bytes.size());
}

struct Args {
	std::vector<std::string> pos;
	std::string get(const std::string &flag, const std::string &dflt = "") const
	{
		for (size_t i = 0; i + 1 < all.size(); i++)
			if (all[i] == flag)
				return all[i + 1];
		return dflt;
	}
	std::vector<std::string> all;
};

Args split_args(const std::vector<std::string> &a, const std::vector<std::string> &valued)
{
	Args r;
	r.all = a;
	for (size_t i = 0; i < a.size(); i++) {
		bool known = false;
		for (const auto &v : valued)
			known |= a[i] == v;
		if (known) {
			if (++i >= a.size())
				throw Usage(a[i - 1] + " needs a value");
		} else if (a[i].rfind("--", 0) == 0) {
			throw Usage("unknown option '" + a[i] + "'");
		} else {
			r.pos.push_back(a[i]);
		}
	}
	return r;
}

GuestKernel release_arg(const Args &args)
{
	auto k = parse_guest_kernel(args.get("--release", "6.12"));
	if (!k)
		throw Usage("bad --release '" + args.get("--release") + "' (6.12 or 6.1)");
	return *k;
}

uint64_t to_u64(const std::string &s, const std::string &what)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = std::strtoull(s.c_str(), &end, 0);
	if (s.empty() || *end || errno || s[0] == '-')
		throw Usage("bad " + what + " '" + s + "'");
	return v;
}

int stage_main(const std::vector<std::string> &a)
{
	Args args = split_args(a, {"--arch", "--patch", "--out", "--count", "--seed", "--release"});
	const GuestKernel release = release_arg(args);
	auto arch = parse_arch(args.get("--arch"));
	// "any": for `kernels diff`, which compares two kernels, not a level: a
	// Program's pinned level does not exclude it (its other pins do).
	const bool any_level = args.get("--patch") == "any";
	auto patch = any_level ? std::optional<Patch>(Patch::pre) : parse_patch(args.get("--patch"));
	std::string out = args.get("--out");
	if (!arch || !patch || out.empty())
		throw Usage("stage needs --arch 32|64, --patch pre|v1|v2|v3|any and --out DIR");
	uint64_t count = to_u64(args.get("--count", "0"), "--count");
	uint64_t seed = to_u64(args.get("--seed", "1"), "--seed");
	fs::remove_all(out);
	fs::create_directories(fs::path(out) / "p");
	std::ofstream index(fs::path(out) / "index.tsv");
	size_t staged = 0, excluded = 0;
	auto add = [&](const Program &p, const std::string &text, const std::string &source) {
		Program unpinned = p;
		if (any_level)
			unpinned.header.patch.reset();
		auto c = guest_config(unpinned, *arch, *patch, release);
		if (!c) {
			excluded++;
			return;
		}
		char name[32];
		std::snprintf(name, sizeof name, "%c-%05zu.fl", c->bypass_spec_v1 ? 'b' : 'm', staged++);
		spit(fs::path(out) / "p" / name, text);
		index << name << '\t' << c->name() << '\t' << source << '\n';
	};
	for (const std::string &f : args.pos) {
		std::string text = slurp(f);
		add(parse_or_throw(text, f), text, f);
	}
	for (uint64_t i = 0; i < count; i++) {
		Program p = random_program(seed, i);
		add(p, format_program(p), "random seed=" + std::to_string(seed) + " i=" + std::to_string(i));
	}
	std::printf("staged %zu Programs (%zu not for this kernel)\n", staged, excluded);
	return 0;
}

// One staged Program of DIR/index.tsv (stage's output): its file under
// DIR/p, its configuration's name, and where it came from.
struct Staged {
	std::string name, config, source;
};

std::vector<Staged> read_index(const fs::path &dir)
{
	std::vector<Staged> staged;
	std::istringstream index(slurp((dir / "index.tsv").string()));
	for (std::string line; std::getline(index, line);) {
		std::istringstream f(line);
		Staged s;
		std::getline(f, s.name, '\t'), std::getline(f, s.config, '\t'), std::getline(f, s.source);
		staged.push_back(s);
	}
	return staged;
}

enum class Outcome { agree, differs, disagree };

// Compares one guest trace with the port's through the oracle's comparison
// (src/oracle: host differences that are no port bug are normalised; a
// difference at an op outside the port's scope ends the comparison), then
// the guest kernel's documented differences (guest_differences.h). Prints one
// line for a documented difference, the full report for a disagreement.
Outcome judge(GuestKernel k, const std::string &source, const Program &p, const Trace &guest, const Config &c);

// One disagreement: the Program cut after its first differing op, both traces.
void report(const std::string &source, Program p, const Trace &guest, const Trace &port, const Config &c)
{
	size_t first = 0;
	while (first < guest.events.size() && first < port.events.size() && guest.events[first] == port.events[first])
		first++;
	if (guest.map_ret == port.map_ret && first < p.ops.size())
		p.ops.resize(first + 1);
	p.expects.clear();
	std::printf("== DISAGREE %s (%s)\n%s", source.c_str(), c.name().c_str(), format_program(p).c_str());
	std::printf("-- kernel: map %s\n", guest.map_ret ? errno_name(-guest.map_ret).c_str() : "ok");
	for (size_t i = 0; i < p.ops.size() && i < guest.events.size(); i++)
		std::printf("   %2zu  %s\n", i + 1, format_event(p, p.ops[i], guest.events[i]).c_str());
	std::printf("-- port:   map %s\n", port.map_ret ? errno_name(-port.map_ret).c_str() : "ok");
	for (size_t i = 0; i < p.ops.size() && i < port.events.size(); i++)
		std::printf("   %2zu  %s\n", i + 1, format_event(p, p.ops[i], port.events[i]).c_str());
}

Outcome judge(GuestKernel k, const std::string &source, const Program &p, const Trace &guest, const Config &c)
{
	oracle::Scope scope;
	Trace port = oracle::run_port(p, c, &scope);
	oracle::Comparison cmp = oracle::compare(p, port, guest, &scope);
	if (cmp.agree && !cmp.stopped)
		return Outcome::agree;
	if (cmp.stopped) {
		std::printf("-- differs by port scope %s at op %zu: %s\n", oracle::to_string(cmp.explained.back()),
			    cmp.op + 1, source.c_str());
		return Outcome::differs;
	}
	size_t i = cmp.op;
	if (i != oracle::Comparison::kMapCreate && i < p.ops.size() && i < guest.events.size() && i < port.events.size())
		if (const GuestDifference *d = classify_guest(k, p, c, p.ops[i], guest.events[i], port.events[i])) {
			std::printf("-- differs by %s difference %s at op %zu: %s\n", to_string(k).c_str(), d->name, i + 1,
				    source.c_str());
			return Outcome::differs;
		}
	size_t at = 0;
	if (const GuestDifference *d = earlier_guest(k, p, port, std::min(i, p.ops.size()), &at)) {
		std::printf("-- differs by %s difference %s at op %zu (seen at op %zu): %s\n", to_string(k).c_str(), d->name,
			    at + 1, i + 1, source.c_str());
		return Outcome::differs;
	}
	report(source, p, guest, port, c);
	return Outcome::disagree;
}

int compare_main(const std::vector<std::string> &a)
{
	Args args = split_args(a, {"--record", "--kernel", "--release"});
	const GuestKernel release = release_arg(args);
	if (args.pos.size() != 2)
		throw Usage("compare needs DIR (from stage) and the CONSOLE log");
	const fs::path dir = args.pos[0];
	Console con = parse_console(slurp(args.pos[1]));
	std::string record = args.get("--record"), kernel = args.get("--kernel");
	size_t agree = 0, disagree = 0, differs = 0, not_run = 0, missing = 0;
	StockLook stock_look;
	for (const auto &[name, cname, source] : read_index(dir)) {
		Program p = parse_or_throw(slurp((dir / "p" / name).string()), name);
		Config c = *parse_config_name(cname);
		auto it = con.results.find(name);
		if (it == con.results.end()) {
			std::printf("== NO RESULT %s (%s): the guest did not get to it\n", source.c_str(), name.c_str());
			missing++;
			continue;
		}
		const GuestResult &g = it->second;
		std::string corpus = corpus_name(source);
		if (!record.empty() && !corpus.empty()) {
			std::string head = "# kernel: " + kernel + "\n# config: " + c.name() + "\n# program: " + corpus + ".fl\n# program-hash: " + program_hash(p) + "\n";
			spit(fs::path(record) / (corpus + ".trace"),
			     head + (g.trace ? write_trace(*g.trace) : "# guest: " + g.note + "\n"));
		}
		if (!g.trace) {
			std::printf("-- not run %s: %s\n", source.c_str(), g.note.c_str());
			not_run++;
			continue;
		}
		stock_look.add(c, *g.trace);
		switch (judge(release, source, p, *g.trace, c)) {
		case Outcome::agree: agree++; break;
		case Outcome::differs: differs++; break;
		case Outcome::disagree: disagree++; break;
		}
	}
	if (stock_look.looks_stock())
		std::printf("kernels: every smaps this patched kernel printed (%zu) shows VM_MIXEDMAP ('mm'), as the eager "
			    "stock kernel's do: the kernel most likely does not contain the series (a stale build: `kernels "
			    "build` checks and rebuilds it)%s\n",
			    stock_look.smaps, disagree ? "; that, not the port, is the likely cause of the disagreements" : "");
	std::printf("kernels: %zu agree, %zu disagree, %zu differ by a documented difference, %zu not run by the "
		    "guest, %zu without a result%s\n",
		    agree, disagree, differs, not_run, missing, con.done ? "" : " (the runner did not finish)");
	return disagree || missing ? 1 : 0;
}

int repro_compare_main(const std::vector<std::string> &a)
{
	Args args = split_args(a, {});
	if (args.pos.size() != 2)
		throw Usage("repro-compare needs DIR (from stage, with NAME.repro files) and the CONSOLE log");
	const fs::path dir = args.pos[0];
	Console con = parse_console(slurp(args.pos[1]));
	size_t same = 0, differs = 0, both_refused = 0, failed = 0, without = 0;
	for (const auto &[name, cname, source] : read_index(dir)) {
		const std::string repro = name.substr(0, name.rfind('.')) + ".repro";
		if (!fs::exists(dir / "p" / repro)) {
			without++;  // faultline repro refused it (repro.sh printed why)
			continue;
		}
		auto runner = con.results.find(name), rep = con.results.find(repro);
		if (runner == con.results.end() || rep == con.results.end()) {
			std::printf("FAIL %s: the guest did not get to the %s\n", source.c_str(),
				    runner == con.results.end() ? "runner" : "reproducer");
			failed++;
			continue;
		}
		const GuestResult &g = runner->second, &r = rep->second;
		int want = 2;
		bool printed_alike = g.trace ? r.trace && *r.trace == *g.trace : !r.trace && r.note == g.note;
		if (g.trace) {
			Program p = parse_or_throw(slurp((dir / "p" / name).string()), name);
			Trace port = oracle::run_port(p, *parse_config_name(cname));
			want = *g.trace == port ? 0 : 1;
		}
		if (!printed_alike || r.exit != want) {
			std::printf("FAIL %s (%s): the reproducer exited %s (want %d) and printed %s the runner's\n-- runner:\n%s\n"
				    "-- reproducer:\n%s\n",
				    source.c_str(), cname.c_str(), r.exit ? std::to_string(*r.exit).c_str() : "?", want,
				    printed_alike ? "the same trace as" : "another trace than",
				    g.trace ? write_trace(*g.trace).c_str() : g.note.c_str(),
				    r.trace ? write_trace(*r.trace).c_str() : r.note.c_str());
			failed++;
		} else {
			(want == 0 ? same : want == 1 ? differs : both_refused)++;
		}
	}
	std::printf("kernels repro: %zu reproducers printed the runner's trace and exited 0 (the port's trace), %zu "
		    "printed it and exited 1 (not the port's: a documented difference), %zu stopped as the runner did, "
		    "%zu FAILED; %zu Programs without a reproducer\n",
		    same, differs, both_refused, failed, without);
	return failed ? 1 : 0;
}

// One side of a diff: the trace, or why the guest did not run it.
std::string side(const std::map<std::string, GuestResult> &results, const std::string &name, const Trace **trace)
{
	*trace = nullptr;
	auto it = results.find(name);
	if (it == results.end())
		return "no result (the guest did not get to it)";
	if (!it->second.trace)
		return it->second.note;
	*trace = &*it->second.trace;
	return "";
}

void print_two(const Program &p, const Trace &stock, const Trace &patched)
{
	for (const auto &[title, t] : {std::pair{"stock", &stock}, {"patched", &patched}}) {
		std::printf("-- %s: map %s\n", title, t->map_ret ? errno_name(-t->map_ret).c_str() : "ok");
		for (size_t i = 0; i < p.ops.size() && i < t->events.size(); i++)
			std::printf("   %2zu  %s\n", i + 1, format_event(p, p.ops[i], t->events[i]).c_str());
	}
}

int diff_main(const std::vector<std::string> &a)
{
	Args args = split_args(a, {});
	if (args.pos.size() != 3)
		throw Usage("diff needs DIR (from stage --patch any), the stock CONSOLE and the patched CONSOLE");
	const fs::path dir = args.pos[0];
	Console stock = parse_console(slurp(args.pos[1])), patched = parse_console(slurp(args.pos[2]));
	size_t same = 0, named = 0, stopped = 0, differ = 0, not_run = 0, one_sided = 0;
	std::map<std::string, size_t> used;
	for (const auto &[name, cname, source] : read_index(dir)) {
		Program p = parse_or_throw(slurp((dir / "p" / name).string()), name);
		const Trace *ts = nullptr, *tp = nullptr;
		std::string ns = side(stock.results, name, &ts), np = side(patched.results, name, &tp);
		if (!ts || !tp) {
			// The same executor on the same Program: only a kernel can make one side fail alone
			// (an "error:" or no result); "unsupported:"/"skipped:" on both sides is not a finding.
			bool alike = !ts && !tp && ns == np;
			bool broken = (!tp && (np.rfind("error:", 0) == 0 || np.rfind("no result", 0) == 0)) ||
				      (!ts && (ns.rfind("error:", 0) == 0 || ns.rfind("no result", 0) == 0));
			if (alike && !broken) {
				not_run++;
			} else if (broken || (ts != nullptr) != (tp != nullptr)) {
				std::printf("== DIFFER %s: stock: %s; patched: %s\n", source.c_str(), ts ? "ran" : ns.c_str(),
					    tp ? "ran" : np.c_str());
				(broken ? differ : one_sided)++;
			} else {
				not_run++;
			}
			continue;
		}
		KernelDiff d = diff_kernels(p, *ts, *tp);
		for (const auto &[op, what] : d.named)
			used[to_string(what)]++;
		if (!d.agree) {
			Program cut = p;
			cut.expects.clear();
			if (d.op != KernelDiff::kMapCreate && d.op < cut.ops.size())
				cut.ops.resize(d.op + 1);
			std::printf("== DIFFER %s at %s\n%s", source.c_str(),
				    d.op == KernelDiff::kMapCreate ? "BPF_MAP_CREATE" : ("op " + std::to_string(d.op + 1)).c_str(),
				    format_program(cut).c_str());
			print_two(cut, *ts, *tp);
			differ++;
			continue;
		}
		if (d.named.empty()) {
			same++;
			continue;
		}
		std::string names;
		for (const auto &[op, what] : d.named)
			names += (names.empty() ? "" : ", ") + std::string(to_string(what)) + " at op " + std::to_string(op + 1);
		std::printf("-- %s %s: %s\n", d.stopped ? "stopped by" : "differs by", source.c_str(), names.c_str());
		(d.stopped ? stopped : named)++;
	}
	for (const auto &[what, n] : used)
		std::printf("documented eager/lazy difference %s used %zu times\n", what.c_str(), n);
	std::printf("kernels diff: %zu identical, %zu differ only by documented eager/lazy differences (%zu of them "
		    "stopped at a store that refaulted), %zu DIFFER, %zu run on one side only (not a kernel failure), "
		    "%zu not run on either%s%s\n",
		    same, named + stopped, stopped, differ, one_sided, not_run, stock.done ? "" : " (the stock runner did not finish)",
		    patched.done ? "" : " (the patched runner did not finish)");
	return differ ? 1 : 0;
}

// The header lines of a recorded trace: "# key: value".
std::string header_value(const std::string &text, const std::string &key)
{
	size_t at = text.find("# " + key + ": ");
	if (at == std::string::npos)
		return "";
	at += key.size() + 4;
	return text.substr(at, text.find('\n', at) - at);
}

int check_recorded_main(const std::vector<std::string> &a)
{
	Args args = split_args(a, {});
	if (args.pos.size() != 1)
		throw Usage("check-recorded needs the corpora folder");
	const fs::path corpora = args.pos[0], traces = corpora / "kernel-traces";
	if (!fs::is_directory(traces))
		throw Usage("no folder '" + traces.string() + "'");
	// The corpus Programs the test suite replays (CMakeLists.txt's glob).
	std::vector<fs::path> programs;
	for (const auto &e : fs::recursive_directory_iterator(corpora)) {
		std::string rel = fs::relative(e.path(), corpora).string();
		if (e.path().extension() == ".fl" && rel.rfind("kernel-traces", 0) != 0 &&
		    (rel.rfind("programs/", 0) == 0 || rel.rfind("findings/", 0) == 0 ||
		     rel.find("/regression/") != std::string::npos))
			programs.push_back(e.path());
	}
	size_t agree = 0, disagree = 0, differs = 0, not_run = 0, unrecorded = 0;
	// One folder per recorded kernel, kernel-traces/<release>/<arch>-<kernel>/, named by its KERNEL file.
	std::vector<fs::path> kernels;
	for (const auto &e : fs::recursive_directory_iterator(traces))
		if (e.path().filename() == "KERNEL")
			kernels.push_back(e.path().parent_path());
	std::sort(kernels.begin(), kernels.end());
	for (const fs::path &k : kernels) {
		std::string base = slurp((k / "KERNEL").string());
		auto arch = parse_arch(header_value(base, "arch"));
		auto patch = parse_patch(header_value(base, "level"));
		auto release = parse_guest_kernel(header_value(base, "kernel"));
		if (!arch || !patch || !release)
			throw Usage((k / "KERNEL").string() +
				    ": needs '# kernel: linux-source-N.M ...', '# arch: 32|64' and '# level: PATCH'");
		const std::string kname = fs::relative(k, traces).string();
		for (const fs::path &prog : programs) {
			std::string rel = fs::relative(prog, corpora).replace_extension("").string();
			Program p = parse_or_throw(slurp(prog.string()), prog.string());
			auto c = guest_config(p, *arch, *patch, *release);
			if (!c)
				continue;
			fs::path tf = k / (rel + ".trace");
			if (!fs::exists(tf)) {
				std::printf("-- no recorded trace: %s on %s\n", rel.c_str(), kname.c_str());
				unrecorded++;
				continue;
			}
			std::string text = slurp(tf.string());
			if (header_value(text, "program-hash") != program_hash(p)) {
				std::printf("-- stale recorded trace (the Program changed): %s on %s\n", rel.c_str(),
					    kname.c_str());
				unrecorded++;
				continue;
			}
			if (text.find("\ntrace ") == std::string::npos) {
				not_run++;  // the guest could not run it; its reason is in the file
				continue;
			}
			std::string err;
			auto guest = read_trace(text, &err);
			if (!guest)
				throw Usage(tf.string() + ": " + err);
			switch (judge(*release, tf.string(), p, *guest, *c)) {
			case Outcome::agree: agree++; break;
			case Outcome::differs: differs++; break;
			case Outcome::disagree: disagree++; break;
			}
		}
	}
	std::printf("recorded kernel traces: %zu agree, %zu disagree, %zu differ by a documented difference, "
		    "%zu not runnable in a guest, %zu unrecorded\n",
		    agree, disagree, differs, not_run, unrecorded);
	if (disagree)
		return 1;
	return unrecorded ? 77 : 0;
}

}  // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> args(argv + 1, argv + argc);
	const char *usage = "usage: faultline-kernels stage|compare|diff|repro-compare|check-recorded ... (see kernels/README.md)\n";
	if (args.empty()) {
		std::fputs(usage, stderr);
		return 2;
	}
	std::string cmd = args[0];
	args.erase(args.begin());
	try {
		if (cmd == "stage")
			return stage_main(args);
		if (cmd == "compare")
			return compare_main(args);
		if (cmd == "diff")
			return diff_main(args);
		if (cmd == "repro-compare")
			return repro_compare_main(args);
		if (cmd == "check-recorded")
			return check_recorded_main(args);
		throw Usage("unknown command '" + cmd + "'");
	} catch (const Usage &e) {
		std::fprintf(stderr, "faultline-kernels: %s\n", e.what());
		return 2;
	} catch (const fs::filesystem_error &e) {
		std::fprintf(stderr, "faultline-kernels: %s\n", e.what());
		return 2;
	}
}
