// SPDX-License-Identifier: GPL-2.0-only
#include "oracle/oracle.h"

#include <algorithm>
#include <unistd.h>

#include "check/execution.h"
#include "check/program_text.h"
#include "check/workspace.h"
#include "real/host_executor.h"

namespace fl::oracle {

std::optional<Config> host_config(std::string *reason)
{
	std::optional<bool> bypass = host_bypass_spec_v1(reason);
	if (!bypass)
		return std::nullopt;
	Config c;
	c.arch = sizeof(void *) == 8 ? Arch::A64 : Arch::A32;
	c.patch = Patch::pre;  // the host runs 6.18: eager remap_vmalloc_range()
	c.door = Door::anon;   // real mmap(2) on a bpf map fd: the typeless anon inode
	c.bypass_spec_v1 = *bypass;
	c.page_shift = 12;
	while ((1l << c.page_shift) < sysconf(_SC_PAGESIZE))
		c.page_shift++;
	return c;
}

Trace run_port(const Program &p, const Config &cfg, Scope *scope)
{
	// On the thread's machine for cfg, restored (check/workspace.h), not a
	// new one per Program: under ASan a new machine and the run's
	// allocations were most of the port side's time (fresh memory faulted
	// in for every block, ASan's quarantine never hands it back), and the
	// oracle's and `kernels compare`'s batches run thousands of Programs.
	// FL_MACHINE_REUSE=0: a new machine (same traces: ctest
	// oracle.port_machine_reuse).
	std::optional<Workspace::Session> session;
	std::optional<Execution> e;
	if (Workspace *w = Workspace::of(cfg, false))
		e.emplace(p, session.emplace(*w).test());
	else
		e.emplace(p, cfg);
	while (!e->done()) {
		if (scope) {
			const Op &op = p.ops[e->next_op()];
			uint64_t addr = 0;
			bool runs = e->resolve(op.addr, &addr) && e->machine().process_alive(op.proc);
			const std::optional<HostDifference> d = runs ? port_scope(e->machine(), op, addr, cfg.page_shift)
								     : std::nullopt;
			arena::Pause heap;  // the caller's scope outlives the session
			scope->push_back(d);
		}
		e->step();
	}
	arena::Pause heap;  // so does the trace: copied to the heap
	return e->trace();
}

Comparison compare(const Program &p, const Trace &port, const Trace &host, const Scope *scope)
{
	Comparison c;
	if (port.map_ret != host.map_ret) {
		c.agree = false;
		c.op = Comparison::kMapCreate;
		return c;
	}
	size_t n = std::max(port.events.size(), host.events.size());
	for (size_t i = 0; i < n; i++) {
		if (i >= port.events.size() || i >= host.events.size() || i >= p.ops.size()) {
			c.agree = false;
			c.op = i;
			return c;
		}
		if (port.events[i] == host.events[i])
			continue;
		if (scope && i < scope->size() && (*scope)[i]) {
			c.explained.push_back(*(*scope)[i]);
			c.stopped = true;
			c.op = i;
			return c;
		}
		c.agree = false;
		c.op = i;
		return c;
	}
	return c;
}

Outcome run_both(const Program &p, const Config &cfg, const HostRunner &host)
{
	Outcome o;
	std::optional<Trace> h = host(p, &o.reason);
	if (!h) {
		o.kind = o.reason.rfind("unsupported:", 0) == 0 ? Outcome::unsupported
			 : o.reason.rfind("skipped:", 0) == 0   ? Outcome::skipped
								: Outcome::error;
		return o;
	}
	o.host = std::move(*h);
	Scope scope;
	o.port = run_port(p, cfg, &scope);
	o.cmp = compare(p, o.port, o.host, &scope);
	o.kind = o.cmp.agree ? Outcome::agree : Outcome::disagree;
	return o;
}

Program minimise(const Program &p, const Config &cfg, const HostRunner &host)
{
	Program best = p;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = best.ops.size(); i-- > 0;) {
			Program candidate = best;
			candidate.ops.erase(candidate.ops.begin() + long(i));
			if (run_both(candidate, cfg, host).kind == Outcome::disagree) {
				best = std::move(candidate);
				changed = true;
			}
		}
	}
	return best;
}

std::string side_by_side(const Program &p, const Trace &port, const Trace &host)
{
	std::vector<std::string> ops{"map"}, left{port.map_ret ? "-" + errno_name(-port.map_ret) : "ok"},
		right{host.map_ret ? "-" + errno_name(-host.map_ret) : "ok"};
	for (size_t i = 0; i < p.ops.size(); i++) {
		ops.push_back(std::to_string(i + 1) + "  " + format_op(p, p.ops[i]));
		left.push_back(i < port.events.size() ? format_result(p.ops[i], port.events[i]) : "(none)");
		right.push_back(i < host.events.size() ? format_result(p.ops[i], host.events[i]) : "(none)");
	}
	size_t w0 = 4, w1 = 4;
	for (size_t i = 0; i < ops.size(); i++) {
		w0 = std::max(w0, ops[i].size());
		w1 = std::max(w1, left[i].size());
	}
	auto pad = [](std::string s, size_t w) { return s.append(w - std::min(w, s.size()), ' '); };
	std::string out = "   " + pad("op", w0) + " | " + pad("port", w1) + " | host\n";
	for (size_t i = 0; i < ops.size(); i++)
		out += (left[i] == right[i] ? "   " : "<< ") + pad(ops[i], w0) + " | " + pad(left[i], w1) + " | " +
		       right[i] + "\n";
	return out;
}

}  // namespace fl::oracle
