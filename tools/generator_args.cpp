// SPDX-License-Identifier: GPL-2.0-only
#include "generator_args.h"

#include <cstdio>
#include <fstream>

#include "options.h"

namespace fl::cli {

GeneratorArgs parse_generator_args(const std::string &cmd, const std::vector<std::string> &args)
{
	GeneratorArgs a;
	std::optional<Patch> level;
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &s = args[i];
		std::string name = s.substr(0, s.find('='));
		auto value = [&]() -> std::string {
			if (size_t eq = s.find('='); eq != std::string::npos && name != "-o")
				return s.substr(eq + 1);
			if (i + 1 >= args.size())
				throw UsageError(s + " needs a value");
			return args[++i];
		};
		if (name == "--arch") {
			a.arches.clear();
			std::string v = value();
			for (size_t at = 0; at <= v.size();) {
				size_t comma = std::min(v.find(',', at), v.size());
				auto arch = parse_arch(v.substr(at, comma - at));
				if (!arch)
					throw UsageError("bad value '" + v.substr(at, comma - at) + "' for --arch (32 or 64)");
				a.arches.push_back(*arch);
				at = comma + 1;
			}
		} else if (name == "--level") {
			std::string v = value();
			level = parse_patch(v);
			if (!level)
				throw UsageError("bad value '" + v + "' for --level (pre, v1, v2 or v3)");
		} else if (s == "-o") {
			a.out = value();
		} else if (s.size() > 1 && s[0] == '-') {
			throw UsageError("unknown option " + s);
		} else if (!a.file.empty()) {
			throw UsageError(cmd + " takes one Program file");
		} else {
			a.file = s;
		}
	}
	if (a.file.empty())
		throw UsageError(cmd + " needs a Program file");
	a.program = load_program(a.file);
	// The arena's kfuncs (alloc/free/reserve) need a BPF program; the
	// generated C drives array maps from user space only.
	bool arena = a.program.map.map_type == uapi::BPF_MAP_TYPE_ARENA;
	for (const Op &op : a.program.ops)
		arena = arena || op.kind == OpKind::arena_alloc || op.kind == OpKind::arena_free ||
			op.kind == OpKind::arena_reserve;
	if (arena)
		throw UsageError(a.file + ": " + cmd + " writes array-map Programs only (this one uses the arena)");
	if (a.arches.empty())
		a.arches = {Arch::A64, Arch::A32};
	a.level = level ? *level : a.program.header.patch.value_or(Patch::pre);
	return a;
}

void write_output(const GeneratorArgs &a, const std::string &text)
{
	if (a.out.empty()) {
		std::fputs(text.c_str(), stdout);
		return;
	}
	std::ofstream f(a.out, std::ios::binary);
	if (!(f << text) || !f.flush())
		throw UsageError("cannot write " + a.out);
}

std::string c_string(const std::string &s)
{
	std::string out = "\"";
	for (size_t i = 0; i < s.size(); i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			out += '\\';
			out += char(c);
		} else if (c == '\n') {
			out += i + 1 < s.size() ? "\\n\"\n\t\"" : "\\n";
		} else if (c < 0x20 || c >= 0x7f) {
			char buf[8];
			std::snprintf(buf, sizeof buf, "\\%03o", c);
			out += buf;
		} else {
			out += char(c);
		}
	}
	return out + "\"";
}

std::string comment_lines(const std::string &text)
{
	std::string s;
	for (size_t at = 0; at < text.size();) {
		size_t nl = std::min(text.find('\n', at), text.size());
		std::string line = text.substr(at, nl - at);
		for (size_t k; (k = line.find("*/")) != std::string::npos;)
			line.replace(k, 2, "* /");
		s += " *   " + line + "\n";
		at = nl + 1;
	}
	return s;
}

}  // namespace fl::cli
