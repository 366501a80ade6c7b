#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "smt/port/world.h"
using namespace fl;
using namespace fl::sym;
namespace fl::smt::port { const World &world64(); const World &world32(); }
int main(int argc, char **argv)
{
	smt::port::Kernel k;
	k.patch = argc > 1 ? *parse_patch(argv[1]) : Patch::v2;
	k.bits = argc > 2 ? atoi(argv[2]) : 64;
	k.door = argc > 3 ? (strcmp(argv[3], "direct") == 0 ? Door::direct : strcmp(argv[3], "regular") == 0 ? Door::regular : Door::anon) : Door::anon;
	Session s;
	Session::Scope scope(s);
	smt::port::Inputs in = smt::port::Inputs::make(s, k);
	const smt::port::World &w = k.bits == 64 ? smt::port::world64() : smt::port::world32();
	Explorer e("t");
	auto r = e.explore<smt::port::Mapped>([&]() { return w.mmap_fault(k, in); });
	std::printf("paths %zu forks %u solver %u accelerated %u runs %u\n", r.paths.size(), e.forks, e.solver_calls, e.accelerated, e.runs);
	for (size_t i = 0; i < r.paths.size(); i++) {
		const Path &p = r.paths[i];
		std::printf("path %zu status %d why %s events %zu accepted %d faulted %d\n", i, (int)p.status, p.why.c_str(), p.events.size(),
			    r.out[i] ? r.out[i]->accepted : -1, r.out[i] ? r.out[i]->faulted : -1);
		if (getenv("V"))
			std::printf("  %s\n", p.cond.to_string().c_str());
		if (p.status == Path::bug && getenv("M")) {
			z3::solver sv(s.c);
			sv.add(s.domain_formula());
			z3::expr pc = s.purify(p.cond);
			for (auto &d : s.defs) sv.add(d);
			sv.add(pc);
			if (sv.check() == z3::sat) {
				z3::model m = sv.get_model();
				for (const char *n : {"len", "vm_pgoff", "base", "size", "nbase", "nsize", "max_entries", "elem_size", "prod_0", "prod_1"})
					std::printf("   %s = %s\n", n, m.eval(s.c.int_const(n), true).to_string().c_str());
			}
		}
		for (auto &ev : p.events)
			std::printf("  event %d area %d ret %d a=%s b=%s\n", ev.kind, ev.area, ev.ret, ev.a.to_string().c_str(), ev.b.to_string().c_str());
	}
}
