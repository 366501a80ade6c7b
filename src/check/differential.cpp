// SPDX-License-Identifier: GPL-2.0-only
#include "check/differential.h"

#include "check/workspace.h"

namespace fl {

std::string Verdict::str() const
{
	switch (kind) {
	case ok:
		return "ok";
	case violation:
		return std::string("violation ") + to_string(invariant) + " at op " + std::to_string(op + 1) +
		       " (" + config.name() + ")";
	case difference:
		return "difference at op " + std::to_string(op + 1) + " (" + config.name() + " vs pre)";
	}
	return "?";
}

namespace {

// Which documented difference explains lazy event `a` vs eager event `b`?
// Returns false when none does.
bool classify(const Op &op, const Event &a, const Event &b, Execution &eager, uint64_t addr,
	      std::vector<Difference> *out)
{
	// The eager side SIGBUSed on a zapped page of a live VMA; the lazy side
	// refaulted it and either completed or went on to fault elsewhere (an
	// access that crosses into the next page).
	if ((op.kind == OpKind::load || op.kind == OpKind::store) && b.sig == uapi::sigbus &&
	    a.sig != uapi::sigbus) {
		for (uint64_t at : {addr, addr + op.size - 1}) {
			if (eager.machine().user_page_id(op.proc, at) < 0 && eager.machine().vma_at(op.proc, at).found) {
				out->push_back(Difference::dontneed_refault);
				return true;
			}
		}
	}
	if (op.kind == OpKind::smaps && a.info != b.info) {
		auto split = [](const std::string &info, std::string *flags, std::string *rss) {
			size_t bar = info.find(" | ");
			*flags = info.substr(0, bar);
			*rss = bar == std::string::npos ? "" : info.substr(bar);
		};
		std::string fa, ra, fb, rb;
		split(a.info, &fa, &ra);
		split(b.info, &fb, &rb);
		std::string fb_no_mm = fb;
		if (size_t pos = fb_no_mm.find(" mm"); pos != std::string::npos)
			fb_no_mm.erase(pos, 3);
		if (fa != fb && fa != fb_no_mm)
			return false;
		if (fa != fb)
			out->push_back(Difference::vm_mixedmap);
		if (ra != rb)
			out->push_back(Difference::populate_timing);
		return true;
	}
	return false;
}

}  // namespace

RunReport run_differential(const Program &p, const Config &cfg)
{
	if (Workspace *ws = Workspace::of(cfg))
		return ws->run(p);  /* a copy, outside the arena */
	std::unique_ptr<Machine> test = make_machine(cfg), ref;
	if (cfg.patch != Patch::pre)
		ref = make_machine(reference_config(cfg));
	return run_differential(p, *test, ref.get());
}

Config reference_config(const Config &cfg)
{
	Config ref_cfg = cfg;
	ref_cfg.patch = Patch::pre;
	return ref_cfg;
}

RunReport run_differential(const Program &p, Machine &test_machine, Machine *ref_machine)
{
	RunReport r;
	const Config cfg = test_machine.config();
	r.config = cfg;
	Execution test(p, test_machine);
	std::optional<Execution> ref;
	const Config ref_cfg = reference_config(cfg);
	if (ref_machine)
		ref.emplace(p, *ref_machine);

	// An invariant violation outranks an unexpected difference (which is
	// often only its first symptom); otherwise the earliest one wins.
	Verdict first_difference;
	auto fail = [&](Verdict::Kind kind, Invariant inv, std::string detail, size_t op, const Config &c) {
		Verdict &slot = kind == Verdict::violation ? r.verdict : first_difference;
		if (slot.kind == Verdict::ok)
			slot = Verdict{kind, inv, std::move(detail), op, c};
	};
	if (ref && ref->trace().map_ret != test.trace().map_ret)
		fail(Verdict::difference, Invariant::none, "map creation differs", 0, cfg);

	while (!test.done()) {
		size_t i = test.next_op();
		const Op &op = p.ops[i];
		uint64_t addr = 0;
		bool has_addr = ref && ref->resolve(op.addr, &addr);
		const Event &a = test.step();
		if (test.violation() && test.violation_op() == i)
			fail(Verdict::violation, test.violation().what, test.violation().detail, i, cfg);
		if (!ref || r.reference_verdict.kind != Verdict::ok)
			continue;
		const Event &b = ref->step();
		if (ref->violation()) {
			r.reference_verdict = Verdict{Verdict::violation, ref->violation().what,
						      ref->violation().detail, i, ref_cfg};
			continue;
		}
		if (a == b)
			continue;
		std::vector<Difference> named;
		if ((has_addr || op.kind == OpKind::smaps) && classify(op, a, b, *ref, addr, &named)) {
			for (Difference d : named)
				r.expected_differences.push_back({i, d});
			/* keep the data identical: the lazy store landed, the
			 * eager one SIGBUSed; replay it through the kernel view */
			if (named.front() == Difference::dontneed_refault && op.kind == OpKind::store && a.sig == 0) {
				SmapsEntry s = test.machine().smaps(op.proc, addr);
				uint64_t off = (s.pgoff << cfg.page_shift) + (addr - s.start);
				std::vector<uint8_t> bytes(op.size);
				for (unsigned k = 0; k < op.size; k++)
					bytes[k] = uint8_t(op.value >> (8 * k));
				ref->kernel_poke(off, bytes);
			}
			continue;
		}
		fail(Verdict::difference, Invariant::none, "lazy: " + format_result(op, a) +
								   ", eager: " + format_result(op, b), i, cfg);
	}
	if (r.verdict.kind == Verdict::ok)
		r.verdict = first_difference;
	r.trace = test.trace();
	if (ref)
		r.reference = ref->trace();
	return r;
}

}  // namespace fl
