// SPDX-License-Identifier: GPL-2.0-only
// faultline repro: the Program as a standalone C file. The ops become a
// table (each entry commented with its Program line), run by a C rendering
// of the host-kernel executor (tools/repro/executor.c), which prints the
// trace in faultline's trace text and compares it with the port's trace at
// the configuration it finds itself in: the width it was built for and the
// kernel's spec_v1 behaviour (both probed at run time), page 4k, door anon
// (a real mmap(2) of a map fd), the level given by --level.
#include "repro.h"

#include <cstdio>

#include "check/program_text.h"
#include "check/trace_text.h"
#include "generator_args.h"
#include "oracle/oracle.h"

namespace fl::cli {

namespace {

constexpr unsigned kShift = 12;  // the reproducer resolves "Np" as 4 KiB pages

std::string hex(uint64_t v)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
	return buf;
}

std::string c_addr(const Addr &a)
{
	return "{" + std::to_string(a.label) + ", " + hex(a.offset.resolve(kShift)) + ", " + (a.negative ? "1" : "0") +
	       "}";
}

const char *const kKindNames[kOpKinds] = {"OP_MMAP", "OP_RESERVE", "OP_MUNMAP", "OP_MPROTECT", "OP_MREMAP",
					  "OP_MADVISE", "OP_FORK", "OP_EXIT", "OP_LOAD", "OP_STORE",
					  "OP_UPDATE", "OP_LOOKUP", "OP_FREEZE", "OP_CLOSE", "OP_SMAPS"};

std::string c_op(const Program &p, const Op &op)
{
	std::string s = "\t{" + c_string(format_op(p, op)) + ", " +
			kKindNames[int(op.kind)] + ", .proc = " + std::to_string(op.proc) +
			", .label = " + std::to_string(op.label) + ", .addr = " + c_addr(op.addr);
	s += ",\n\t\t.len = " + hex(op.len.resolve(kShift)) + ", .new_len = " + hex(op.new_len.resolve(kShift)) +
	     ", .pgoff = " + hex(op.pgoff) + ", .prot = " + hex(unsigned(op.prot)) + ", .flags = " +
	     hex(unsigned(op.flags)) + ", .advice = " + std::to_string(op.advice);
	s += ",\n\t\t.has_at = " + std::string(op.has_at ? "1" : "0") + ", .at = " + c_addr(op.at) +
	     ", .size = " + std::to_string(op.size) + ", .value = " + hex(op.value) + "ull, .index = " +
	     std::to_string(op.index) + "u },\n";
	return s;
}

// The readable form of a trace, as comment lines: one op a line with what the port says.
std::string readable(const Program &p, const Trace &t)
{
	std::string s = "map: " + std::string(t.map_ret ? "-" + errno_name(-t.map_ret) : "ok") + "\n";
	for (size_t i = 0; i < p.ops.size() && i < t.events.size(); i++)
		s += std::to_string(i + 1) + "  " + format_event(p, p.ops[i], t.events[i]) + "\n";
	return comment_lines(s);
}

struct Variant {
	Config cfg;
	Trace trace;
	oracle::Scope scope;
};

}  // namespace

int repro_main(const std::vector<std::string> &args)
{
	GeneratorArgs a = parse_generator_args("repro", args);
	const Program &p = a.program;
	std::vector<Variant> variants;
	for (Arch arch : a.arches)
		for (bool bypass : {false, true}) {
			Variant v;
			v.cfg = Config{arch, a.level, kShift, Door::anon, bypass};
			v.trace = oracle::run_port(p, v.cfg, &v.scope);
			variants.push_back(std::move(v));
		}

	std::string s = "// SPDX-License-Identifier: GPL-2.0-only\n/*\n";
	s += " * faultline reproducer of " + a.file + "\n *\n";
	s += " *   gcc -O2 -static -o repro repro.c        (x86_64)\n";
	s += " *   gcc -O2 -m32 -static -o repro32 repro.c (i386)\n";
	s += " *   ./repro   (as root, or with CAP_BPF: bpf(2) and mmap of a BPF array map)\n *\n";
	s += " * Runs the Program's ops on this kernel through raw syscalls and prints the\n"
	     " * trace in faultline's trace text; then compares it with the port's trace at\n"
	     " * level " + std::string(to_string(a.level)) +
	     ", page 4k, door anon (a real mmap(2) of the map fd), the width it\n"
	     " * was built for and the kernel's spec_v1 behaviour (probed).\n"
	     " * Exit: 0 same trace, 1 the kernel's trace differs, 2 cannot run here,\n"
	     " * 77 bpf(2) not permitted.\n";
	const Header &h = p.header;
	if ((h.door && *h.door != Door::anon) || (h.page_shift && *h.page_shift != kShift))
		s += " *\n * The Program pins a configuration a real x86 kernel does not have (" +
		     std::string(h.door ? to_string(*h.door) : "") + (h.page_shift ? " " + page_size_name(*h.page_shift) : "") +
		     "):\n * the ops run at the real one.\n";
	s += " *\n * The Program:\n" + comment_lines(format_program(p));
	s += " *\n * The port's expected trace (" + variants.front().cfg.name() + "):\n" +
	     readable(p, variants.front().trace);
	for (size_t i = 1; i < variants.size(); i++)
		if (!(variants[i].trace == variants.front().trace))
			s += " *\n * ... and at " + variants[i].cfg.name() + ":\n" + readable(p, variants[i].trace);
	s += " */\n";
	s += kReproPrelude;

	s += "\n/* ---- the Program ---- */\n\n";
	s += "#define NLABELS " + std::to_string(p.labels.size()) + "\n";
	s += "#define NOPS " + std::to_string(p.ops.size()) + "\n";
	s += "#define NEXPECTED " + std::to_string(variants.size()) + "\n\n";
	s += "static const char *const labels[NLABELS + 1] = {";
	for (const std::string &l : p.labels)
		s += c_string(l) + ", ";
	s += "NULL};\n\n";
	s += "static const struct map_spec map = {" + std::to_string(p.map.key_size) + ", " +
	     std::to_string(p.map.value_size) + ", " + hex(p.map.max_entries) + ", " + hex(p.map.map_flags) + "};\n\n";
	s += "static const struct op ops[NOPS + 1] = {\n";
	for (const Op &op : p.ops)
		s += c_op(p, op);
	s += "\t{NULL, OP_LOAD, 0, -1, {-1, 0, 0}, 0, 0, 0, 0, 0, 0, 0, {-1, 0, 0}, 0, 0, 0},\n};\n\n";
	for (size_t i = 0; i < variants.size(); i++) {
		s += "static const struct scope_end scope_" + std::to_string(i) + "[] = {";
		for (size_t k = 0; k < variants[i].scope.size(); k++)
			if (variants[i].scope[k])
				s += "{" + std::to_string(k) + ", " + c_string(oracle::to_string(*variants[i].scope[k])) +
				     "}, ";
		s += "{-1, NULL}};\n";
	}
	s += "\nstatic const struct expected expected[NEXPECTED] = {\n";
	for (size_t i = 0; i < variants.size(); i++) {
		const Config &c = variants[i].cfg;
		s += "\t{" + std::string(c.arch == Arch::A32 ? "32" : "64") + ", " + (c.bypass_spec_v1 ? "1" : "0") +
		     ", " + c_string(c.name()) + ",\n\t" + c_string(write_trace(variants[i].trace)) + ",\n\tscope_" +
		     std::to_string(i) + "},\n";
	}
	s += "};\n";
	s += kReproExecutor;
	write_output(a, s);
	return 0;
}

}  // namespace fl::cli
