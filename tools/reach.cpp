// SPDX-License-Identifier: GPL-2.0-only
#include "reach.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "check/execution.h"
#include "check/json.h"
#include "check/program_binary.h"
#include "options.h"

namespace fl::cli {
namespace {

constexpr uint64_t k4G = uint64_t(1) << 32;
constexpr uint64_t kPteTable = uint64_t(2) << 20;  // 512 4K PTEs (x86 PMD_SIZE)

struct Tally {
	uint64_t programs = 0, runs = 0, op_checks = 0, contents_bytes = 0;
	std::map<std::string, std::pair<uint64_t, uint64_t>> ops;  // kind -> (ran, succeeded)
	std::map<std::string, uint64_t> buckets, violations;
	void hit(const std::string &b) { buckets[b]++; }
};

bool pow2(uint64_t x) { return x && !(x & (x - 1)); }

std::string data_bucket(uint64_t bytes)
{
	if (bytes <= 16 * 4096)
		return "map data <= 64 KiB";
	if (bytes <= kPteTable)
		return "map data <= 2 MiB";
	if (bytes < (uint64_t(1) << 31))
		return "map data < 2 GiB";
	if (bytes <= k4G)
		return "map data 2..4 GiB";
	return "map data > 4 GiB";
}

std::string len_bucket(uint64_t len, uint64_t page)
{
	if (len <= page)
		return "mmap len <= 1 page";
	if (len <= 16 * page)
		return "mmap len <= 16 pages";
	if (len <= kPteTable)
		return "mmap len <= 2 MiB";
	if (len < k4G)
		return "mmap len < 4 GiB";
	return "mmap len >= 4 GiB";
}

std::string off_bucket(uint64_t pgoff, unsigned shift)
{
	if (pgoff == 0)
		return "mmap offset 0";
	if (pgoff >= (uint64_t(1) << (64 - shift)))
		return "mmap offset >= 2^64 bytes";
	if ((pgoff << shift) < k4G)
		return "mmap offset < 4 GiB";
	return "mmap offset >= 4 GiB";
}

// One ->map_pages call, as do_fault_around ran it (FaultAroundWindow): the
// window partly populated (PTEs of it already set: in a forked child,
// where a DONTNEED zapped some, in a VMA split off a bigger one, or else
// just by an earlier touch), and what clamped it: the VMA's start or end,
// or a PTE table (the window abuts a table's first or last entry while the
// VMA goes on across that edge; "clipped" when the table cut short a window
// the VMA's start had moved, do_fault_around's min3).
struct Zapped {  // a DONTNEED that zapped PTEs: its process and range
	int proc;
	uint64_t start, end;
};
using Extents = std::vector<std::pair<uint64_t, uint64_t>>;  // VMAs as mmap/mremap created them

void fault_around(const FaultAroundWindow &w, int proc, uint64_t addr, uint64_t page, const SmapsEntry &vma,
		  const Extents &created, const std::vector<Zapped> &zapped, Tally *t)
{
	t->hit("v3 fault-around");
	const uint64_t first = addr / page * page - (w.pte_off - w.from_pte) * page;  // the window's addresses
	const uint64_t past = first + (w.to_pte - w.from_pte + 1) * page;
	if (w.present) {
		bool forked = proc > 0, dontneed = false, split = false;
		for (const auto &z : zapped)
			dontneed |= z.proc == proc && z.start < past && first < z.end;
		for (const auto &[s, e] : created)
			split |= vma.found && s <= vma.start && vma.end <= e && (s != vma.start || e != vma.end);
		t->hit("v3 fault-around, window partly populated");
		if (forked)
			t->hit("v3 fault-around, partly populated, in a forked child");
		if (dontneed)
			t->hit("v3 fault-around, partly populated, after a DONTNEED");
		if (split)
			t->hit("v3 fault-around, partly populated, after a split");
		if (!forked && !dontneed && !split)
			t->hit("v3 fault-around, partly populated, after a partial touch");
	}
	const uint64_t aligned = w.pte_off / w.nr_pages * w.nr_pages;  // ALIGN_DOWN(pte_off, nr_pages)
	const bool vma_start = w.from_pte == w.vma_from && w.vma_from > aligned;
	const bool vma_end = w.to_pte + 1 == w.vma_to && w.vma_to < w.from_pte + w.nr_pages;
	if (vma_start || vma_end)
		t->hit("v3 fault-around at a VMA edge");
	if (vma_start)
		t->hit("v3 fault-around at a VMA edge: its start");
	if (vma_end)
		t->hit("v3 fault-around at a VMA edge: its end");
	const bool table_end = w.to_pte + 1 == w.ptrs_per_pte && w.vma_to > w.ptrs_per_pte;
	const bool table_start = w.from_pte == 0 && w.vma_off > w.pte_off;
	if (table_end || table_start)
		t->hit("v3 fault-around at a PTE-table edge");
	if (table_end && w.from_pte + w.nr_pages > w.ptrs_per_pte)
		t->hit("v3 fault-around clipped by a PTE table");
}

// One Program on one configuration, op by op.
void run_one(const Program &p, const Config &cfg, Tally *t)
{
	t->runs++;
	Execution e(p, cfg);
	const MapSpec &m = p.map;
	const uint64_t elem = (uint64_t(m.value_size) + 7) & ~uint64_t(7), data = elem * m.max_entries;
	const bool created = e.trace().map_ret == 0;
	const std::string made = created ? " (created)" : " (refused)";
	const uint64_t page = uint64_t(1) << cfg.page_shift;
	t->hit(data_bucket(data) + made);
	if (uint64_t(m.value_size) * m.max_entries >= k4G - 65536 && uint64_t(m.value_size) * m.max_entries <= k4G + 65536)
		t->hit("value_size x max_entries near 2^32" + made);
	if (data >= (uint64_t(1) << 31) - 65536 && data <= (uint64_t(1) << 31) + 65536)
		t->hit("map data near INT_MAX" + made);
	if (!cfg.bypass_spec_v1 && !pow2(m.max_entries) && data > k4G)
		t->hit("spec_v1 mask, non-power-of-two entries, data > 4 GiB" + made);
	// What the machine did that can leave a fault-around window partly
	// populated: the VMAs as mmap/mremap created them (a VMA strictly inside
	// one was split since), and the ranges a DONTNEED zapped PTEs of.
	Extents vmas_made;
	std::vector<Zapped> zapped;
	while (!e.done()) {
		const Op &op = p.ops[e.next_op()];
		uint64_t addr = 0;
		const bool has_addr = e.resolve(op.addr, &addr);
		SmapsEntry vma;
		if (has_addr && (op.kind == OpKind::load || op.kind == OpKind::store))
			vma = e.machine().smaps(op.proc, addr);
		const Stats before = e.machine().stats();
		const bool checking = !e.violation();
		const Event &ev = e.step();
		if (checking)
			t->op_checks++;
		if (!ev.info.empty() && op.kind != OpKind::smaps)
			continue;  // skipped
		const bool ok = ev.ret >= 0 && ev.sig == 0;
		auto &counts = t->ops[to_string(op.kind)];
		counts.first++;
		counts.second += ok;
		const std::string acc = ok ? " (accepted)" : " (refused)";
		switch (op.kind) {
		case OpKind::mmap:
			t->hit(len_bucket(op.len.resolve(cfg.page_shift), page) + acc);
			t->hit(off_bucket(op.pgoff, cfg.page_shift) + acc);
			if (ok)
				t->hit("page " + page_size_name(cfg.page_shift) + " (a mapping accepted)");
			[[fallthrough]];
		case OpKind::mremap:
			// the VMA as created (an in-place mremap keeps its start)
			if (Addr at{op.label >= 0 ? op.label : op.addr.label, {}, false}; ok && e.resolve(at, &addr))
				if (SmapsEntry v = e.machine().smaps(op.proc, addr); v.found)
					vmas_made.emplace_back(v.start, v.end);
			break;
		case OpKind::madvise:
			if (ok && op.advice == uapi::MADV_DONTNEED && e.machine().stats().ptes_zapped > before.ptes_zapped)
				zapped.push_back({op.proc, addr, addr + op.len.resolve(cfg.page_shift)});
			break;
		case OpKind::update:
		case OpKind::lookup:
			if (uint64_t(op.index) * elem >= k4G || (uint64_t(op.index) + 1) * elem > k4G)
				t->hit(std::string("element offset crosses 2^32: ") + to_string(op.kind) + acc);
			break;
		case OpKind::load:
		case OpKind::store:
			if (vma.found && vma.pgoff < (uint64_t(1) << (64 - cfg.page_shift)) &&
			    (vma.pgoff << cfg.page_shift) + (addr - vma.start) >= k4G)
				t->hit("user access at map offset >= 4 GiB" + acc);
			if (e.machine().stats().map_pages_calls > before.map_pages_calls)
				fault_around(e.machine().stats().last_fault_around, op.proc, addr, page, vma, vmas_made, zapped, t);
			break;
		default:
			break;
		}
	}
	t->contents_bytes += e.contents().bytes_checked();
	if (e.violation())
		t->violations[to_string(e.violation().what)]++;
}

std::vector<uint8_t> read_bytes(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		throw UsageError("cannot read " + path);
	return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void run_program(const Program &p, const ConfigFilter &filter, Tally *t)
{
	t->programs++;
	for (const Config &c : p.configs().expand())
		if (filter.matches(c))
			run_one(p, c, t);
}

void print_json(const Tally &t)
{
	std::printf("{\"programs\": %llu, \"runs\": %llu, \"op_checks\": %llu, \"contents_bytes\": %llu,\n",
		    (unsigned long long)t.programs, (unsigned long long)t.runs, (unsigned long long)t.op_checks,
		    (unsigned long long)t.contents_bytes);
	std::printf(" \"ops\": {");
	const char *sep = "";
	for (const auto &[k, v] : t.ops) {
		std::printf("%s%s: [%llu, %llu]", sep, json_string(k).c_str(), (unsigned long long)v.first,
			    (unsigned long long)v.second);
		sep = ", ";
	}
	for (const auto &[name, map] : {std::pair{"buckets", &t.buckets}, std::pair{"violations", &t.violations}}) {
		std::printf("},\n \"%s\": {", name);
		sep = "";
		for (const auto &[k, v] : *map) {
			std::printf("%s\n  %s: %llu", sep, json_string(k).c_str(), (unsigned long long)v);
			sep = ",";
		}
	}
	std::printf("}}\n");
}

}  // namespace

int reach_main(const std::vector<std::string> &args)
{
	// --random N --seed S: the oracle's random batch (same bytes, same decoder).
	std::vector<std::string> rest;
	uint64_t random = 0, seed = 0;
	for (size_t i = 0; i < args.size(); i++) {
		if ((args[i] == "--random" || args[i] == "--seed") && i + 1 < args.size()) {
			try {
				(args[i] == "--random" ? random : seed) = std::stoull(args[i + 1], nullptr, 0);
			} catch (const std::exception &) {
				throw UsageError("bad value '" + args[i + 1] + "' for " + args[i]);
			}
			i++;
		} else {
			rest.push_back(args[i]);
		}
	}
	Options o = parse_options(rest, {"--binary"});
	if (o.files.empty() && !random)
		throw UsageError("reach needs Program files, directories, or --random N");
	Tally t;
	for (const std::string &f : o.files) {
		std::vector<std::string> paths;
		if (std::filesystem::is_directory(f)) {
			for (const auto &de : std::filesystem::recursive_directory_iterator(f))
				if (de.is_regular_file())
					paths.push_back(de.path().string());
			std::sort(paths.begin(), paths.end());
		} else {
			paths.push_back(f);
		}
		for (const std::string &path : paths) {
			if (o.has("--binary")) {
				std::vector<uint8_t> b = read_bytes(path);
				run_program(decode_program(b.data(), b.size()), o.filter, &t);
			} else if (path.size() > 3 && path.substr(path.size() - 3) == ".fl") {
				run_program(load_program(path), o.filter, &t);
			}
		}
	}
	std::mt19937_64 rng(seed);
	for (uint64_t i = 0; i < random; i++) {
		std::vector<uint8_t> bytes = random_program_bytes(rng);
		run_program(decode_program(bytes.data(), bytes.size()), o.filter, &t);
	}
	print_json(t);
	return 0;
}

}  // namespace fl::cli
