// SPDX-License-Identifier: GPL-2.0-only
// "Real maps satisfy these facts": the table's queries bound the map's
// geometry only by geometry_facts (obligations.cpp). This proves them from
// the port: array_map_alloc_check + array_map_alloc (with
// bpf_map_area_mmapable_alloc and __vmalloc_node_range) run on symbolic
// value_size and max_entries, for each width, page size and
// bypass_spec_v1, and every map they create (no BUG_ON on the way) has
// product = (u64)map.max_entries * elem_size and its area's size satisfying
// the facts. Nonlinear (the products and the power-of-two rounding), so the
// default solver, not the table's tactic.
#include "smt/geometry.h"

#include <chrono>
#include <cstdio>

#include "smt/kmodel.h"
#include "smt/port/port.h"
#include "smt/uint.h"

namespace fl::smt {

int prove_geometry(unsigned timeout_ms)
{
	int bad = 0;
	double total = 0;
	for (unsigned bits : {32u, 64u})
		for (unsigned shift : {12u, 16u})
			for (bool bypass : {false, true}) {
				z3::context c;
				port::Kernel k;
				k.bits = bits;
				k.shift = shift;
				k.bypass_spec_v1 = bypass;
				z3::expr vs = c.int_const("value_size"), me = c.int_const("max_entries");
				port::Alloc a = port::map_alloc(c, k, vs, me);
				z3::solver s(c);
				z3::params p(c);
				p.set("timeout", timeout_ms);
				s.set(p);
				s.add(vs >= 0 && vs < two_to(c, 32) && me >= 0 && me < two_to(c, 32));
				z3::expr product = a.max_entries * a.elem_size;
				s.add(a.bug || (a.ok && !geometry_facts(c, bits, shift, product, a.array_size)));
				auto t0 = std::chrono::steady_clock::now();
				z3::check_result r = s.check();
				double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
				total += ms;
				const char *res = r == z3::unsat ? "proved" : r == z3::sat ? "cex" : "unknown";
				std::printf("geometry arch%u %s bypass_spec_v1=%d  %-8s %7.1fms\n", bits,
					    shift == 12 ? "4k " : "64k", bypass, res, ms);
				if (r == z3::sat) {
					z3::model m = s.get_model();
					std::printf("      value_size=%s max_entries=%s\n",
						    m.eval(vs, true).to_string().c_str(), m.eval(me, true).to_string().c_str());
				}
				if (r != z3::unsat)
					bad++;
			}
	std::printf("geometry: %d of 8 configurations not proved; solver %.2f s\n", bad, total / 1000);
	return bad ? 1 : 0;
}

}  // namespace fl::smt
