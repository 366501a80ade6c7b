// SPDX-License-Identifier: GPL-2.0-only
#include "console.h"

#include <cstdlib>
#include <sstream>

#include "check/trace_text.h"

namespace fl::kernels {

Console parse_console(const std::string &text)
{
	Console out;
	std::istringstream in(text);
	std::string line, name, body;
	std::optional<int> exit;
	bool inside = false;
	while (std::getline(in, line)) {
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		// Escapes may precede the first frame on the same line: match anywhere.
		size_t at = line.find("@@ ");
		std::string frame = at == std::string::npos ? "" : line.substr(at + 3);
		if (frame.rfind("begin ", 0) == 0) {
			name = frame.substr(6), body.clear(), exit.reset(), inside = true;
		} else if (inside && frame.rfind("exit ", 0) == 0) {
			exit = std::atoi(frame.c_str() + 5);
		} else if (inside && frame == "end " + name) {
			GuestResult r;
			r.exit = exit;
			std::string err;
			if (body.find("trace ") != std::string::npos)
				r.trace = read_trace(body, &err);
			if (!r.trace) {
				r.note = err.empty() ? body : "error: unreadable trace, " + err;
				while (!r.note.empty() && r.note.back() == '\n')
					r.note.pop_back();
			}
			out.results[name] = r;
			inside = false;
		} else if (frame.rfind("done ", 0) == 0) {
			out.done = true;
		} else if (inside) {
			body += line + "\n";
		}
	}
	return out;
}

}  // namespace fl::kernels
