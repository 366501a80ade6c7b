// SPDX-License-Identifier: GPL-2.0-only
#include "options.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "check/program_text.h"

namespace fl::cli {

bool Options::has(const std::string &flag) const
{
	return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

namespace {

std::vector<std::string> split_commas(const std::string &s)
{
	std::vector<std::string> out;
	std::stringstream ss(s);
	for (std::string item; std::getline(ss, item, ',');)
		out.push_back(item);
	return out;
}

template <class T, class Parse>
std::vector<T> parse_list(const std::string &opt, const std::string &value, Parse parse)
{
	std::vector<T> out;
	for (const std::string &item : split_commas(value)) {
		auto v = parse(item);
		if (!v)
			throw UsageError("bad value '" + item + "' for " + opt);
		out.push_back(*v);
	}
	if (out.empty())
		throw UsageError(opt + " needs a value");
	return out;
}

}  // namespace

Options parse_options(const std::vector<std::string> &args, const std::vector<std::string> &known_flags)
{
	Options o;
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		auto value = [&]() -> std::string {
			if (size_t eq = a.find('='); eq != std::string::npos)
				return a.substr(eq + 1);
			if (i + 1 >= args.size())
				throw UsageError(a + " needs a value");
			return args[++i];
		};
		std::string name = a.substr(0, a.find('='));
		if (name == "--patch")
			o.filter.patches = parse_list<Patch>(name, value(), parse_patch);
		else if (name == "--arch")
			o.filter.arches = parse_list<Arch>(name, value(), parse_arch);
		else if (name == "--page")
			o.filter.page_shifts = parse_list<unsigned>(name, value(), parse_page_shift);
		else if (name == "--door")
			o.filter.doors = parse_list<Door>(name, value(), parse_door);
		else if (name == "--spec")
			o.filter.spec_v1 = parse_list<bool>(name, value(), [](const std::string &s) -> std::optional<bool> {
				if (s == "mask") return false;
				if (s == "bypass") return true;
				return std::nullopt;
			});
		else if (std::find(known_flags.begin(), known_flags.end(), a) != known_flags.end())
			o.flags.push_back(a);
		else if (a.size() > 1 && a[0] == '-')
			throw UsageError("unknown option " + a);
		else
			o.files.push_back(a);
	}
	return o;
}

Program load_program(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw UsageError("cannot read " + path + ": " + std::strerror(errno));
	std::stringstream ss;
	ss << in.rdbuf();
	ParseResult r = parse_program(ss.str());
	if (!r.program)
		throw UsageError(path + ":" + r.error.str());
	return std::move(*r.program);
}

}  // namespace fl::cli
