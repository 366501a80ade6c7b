// SPDX-License-Identifier: GPL-2.0-only
// Execution: one Program running on one machine, op by op, with the
// invariants checked after every op.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "check/contents.h"
#include "check/trace.h"
#include "sim/machine.h"

namespace fl {

class Execution {
public:
	Execution(const Program &, const Config &);  // on a new machine
	// On a machine nothing has run on yet (a Workspace's, restored): it
	// creates the Program's map. The machine outlives the Execution.
	Execution(const Program &, Machine &);

	bool done() const { return next_ >= program_.ops.size(); }
	size_t next_op() const { return next_; }
	// Runs the next op; returns its event. Afterwards violation() tells
	// whether an invariant broke (first one wins).
	const Event &step();
	const Violation &violation() const { return violation_; }
	size_t violation_op() const { return violation_op_; }  // 0-based
	const Trace &trace() const { return trace_; }
	Machine &machine() { return *machine_; }
	// The address an Addr names now (narrowed to the width), if its label is bound.
	bool resolve(const Addr &, uint64_t *out) const;
	// A write through the kernel's view (the differential's resync after a
	// documented difference): the machine and the contents shadow both see it.
	void kernel_poke(uint64_t map_offset, const std::vector<uint8_t> &bytes);
	const ContentsShadow &contents() const { return contents_; }

	// For the interleaving explorer (src/check/interleave/): run the next
	// op's work without recording it (several run at once, on fibers), and
	// record an op's event and the violation seen for it, in op order (the
	// contents shadow forgets what a concurrent op wrote: ContentsShadow::concurrent).
	Event run_op(size_t index) { return run(program_.ops[index], index); }
	void record(Event, Violation);
	// The addresses an op ran with: its labels as they were when it began.
	// A concurrent op's address is fixed when it begins, before the ops
	// racing it return and rebind its labels; the linearizability
	// candidates run it with the addresses it used (pin_addresses).
	struct OpAddresses {
		uint64_t addr = 0, at = 0;
		bool set = false;
	};
	const std::vector<OpAddresses> &used_addresses() const { return used_; }
	void pin_addresses(std::vector<OpAddresses> pins) { pins_ = std::move(pins); }
	// The address op `index` (run_op) bound its label to, or -1; and a
	// label bound anew: a label two concurrent ops bind names what the one
	// that returned last bound, which the linearizability candidates, run
	// in another order, bind again after the group.
	int64_t bound_by(size_t index) const { return index < binds_.size() ? binds_[index] : -1; }
	void rebind(int label, int64_t address) { labels_.bind(label, address); }

private:
	Event run(const Op &, size_t index = SIZE_MAX);

	const Program &program_;
	std::unique_ptr<Machine> owned_;  // when the Execution made its machine
	Machine *machine_;
	Labels labels_;
	size_t next_ = 0;
	Trace trace_;
	ContentsShadow contents_;
	Violation violation_;
	size_t violation_op_ = 0;
	std::vector<OpAddresses> used_, pins_;  // by op index (run_op)
	std::vector<int64_t> binds_;            // by op index (run_op): bound_by
};

}  // namespace fl
