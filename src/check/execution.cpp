// SPDX-License-Identifier: GPL-2.0-only
#include "check/execution.h"

#include <cerrno>
#include <csignal>

namespace fl {

Execution::Execution(const Program &p, const Config &cfg) : Execution(p, *make_machine(cfg).release())
{
	owned_.reset(machine_);
}

Execution::Execution(const Program &p, Machine &m)
	: program_(p), machine_(&m), labels_(p.labels.size(), m.config().arch == Arch::A32 ? 32 : 64),
	  contents_(p.map, -1, m.config().page_shift)
{
	const Config &cfg = m.config();
	int64_t fd = machine_->map_create(p.map);
	trace_.map_ret = fd < 0 ? fd : 0;
	trace_.events.reserve(p.ops.size());
	contents_ = ContentsShadow(p.map, fd, cfg.page_shift);
}

void Execution::kernel_poke(uint64_t map_offset, const std::vector<uint8_t> &bytes)
{
	machine_->kernel_poke(map_offset, bytes);
	contents_.kernel_write(map_offset, bytes);
}

bool Execution::resolve(const Addr &a, uint64_t *out) const
{
	return labels_.resolve(a, machine_->config().page_shift, out);
}

Event Execution::run(const Op &op, size_t index)
{
	Machine &m = *machine_;
	unsigned shift = m.config().page_shift;
	Event ev;
	uint64_t addr = 0, at = 0;

	ev.info = labels_.prepare(program_, op, m.process_alive(op.proc), shift, &addr, &at);
	if (index < pins_.size() && pins_[index].set && (ev.info.empty() || ev.info.rfind("skipped: label ", 0) == 0)) {
		ev.info.clear();
		addr = pins_[index].addr;
		at = pins_[index].at;
	}
	if (!ev.info.empty())
		return ev;
	if (index != SIZE_MAX) {
		if (used_.size() <= index)
			used_.resize(program_.ops.size());
		used_[index] = {addr, at, true};
	}

	auto bind = [&](int label, int64_t ret) {
		labels_.bind(label, ret);
		ev.ret = ret < 0 ? ret : 0;
		if (index != SIZE_MAX && label >= 0) {
			binds_.resize(program_.ops.size(), -1);
			binds_[index] = ret;
		}
	};

	switch (op.kind) {
	case OpKind::mmap:
		bind(op.label, m.mmap(op.proc, at, op.len.resolve(shift), op.prot, op.flags, true, op.pgoff));
		break;
	case OpKind::reserve:
		bind(op.label, m.mmap(op.proc, at, op.len.resolve(shift), uapi::PROT_NONE,
				      uapi::MAP_PRIVATE | (op.has_at ? uapi::MAP_FIXED : 0), false, 0));
		break;
	case OpKind::munmap:
		ev.ret = m.munmap(op.proc, addr, op.len.resolve(shift));
		break;
	case OpKind::mprotect:
		ev.ret = m.mprotect(op.proc, addr, op.len.resolve(shift), op.prot);
		break;
	case OpKind::mremap:
		bind(op.label, m.mremap(op.proc, addr, op.len.resolve(shift), op.new_len.resolve(shift),
					op.flags, at));
		break;
	case OpKind::madvise:
		ev.ret = m.madvise(op.proc, addr, op.len.resolve(shift), op.advice);
		break;
	case OpKind::fork:
		ev.ret = m.fork(op.proc);
		break;
	case OpKind::exit:
		ev.ret = m.exit(op.proc);
		break;
	case OpKind::load: {
		Access a = m.load(op.proc, addr, op.size);
		ev.sig = a.sig;
		ev.data = std::move(a.bytes);
		break;
	}
	case OpKind::store:
		ev.sig = m.store(op.proc, addr, op.size, op.value).sig;
		break;
	case OpKind::update: {
		std::vector<uint8_t> v(8);
		for (int i = 0; i < 8; i++)
			v[i] = uint8_t(op.value >> (8 * i));
		ev.ret = m.map_update(op.index, v, (uint64_t)op.flags);
		break;
	}
	case OpKind::lookup:
		ev.ret = m.map_lookup(op.index, &ev.data);
		break;
	case OpKind::freeze:
		ev.ret = m.map_freeze();
		break;
	case OpKind::close:
		ev.ret = m.map_close();
		break;
	case OpKind::arena_alloc: {
		uint64_t got = m.arena_alloc_pages(at, uint32_t(op.len.resolve(shift) >> shift));
		bind(op.label, got ? int64_t(got) : -ENOMEM);
		break;
	}
	case OpKind::arena_free:
		m.arena_free_pages(addr, uint32_t(op.len.resolve(shift) >> shift));
		break;
	case OpKind::arena_reserve:
		ev.ret = m.arena_reserve_pages(addr, uint32_t(op.len.resolve(shift) >> shift));
		break;
	case OpKind::smaps: {
		SmapsEntry s = m.read_smaps(op.proc, addr);
		ev.info = s.found ? "VmFlags: " + s.vm_flags + " | Rss: " + std::to_string(s.rss_pages) + "p"
				  : "no vma";
		break;
	}
	}
	if (ev.sig == SIGKILL) {
		/* The task died on its way back from a fault: a sibling thread
		 * exited the group meanwhile (MachineImpl::user_access). Its
		 * access never ran (no bytes), as if it came after the exit. */
		ev.sig = 0;
		ev.info = skipped_no_process(op.proc);
	}
	return ev;
}

void Execution::record(Event ev, Violation v)
{
	contents_.concurrent(program_.ops[next_], ev);
	trace_.events.push_back(std::move(ev));
	if (!violation_ && v) {
		violation_ = std::move(v);
		violation_op_ = next_;
	}
	next_++;
}

const Event &Execution::step()
{
	const Op &op = program_.ops[next_];
	uint64_t addr = 0;
	resolve(op.addr, &addr);
	trace_.events.push_back(run(op));
	/* the shadow follows every op, also after the first violation */
	std::string contents = contents_.observe(*machine_, op, addr, trace_.events.back());
	if (!violation_) {
		Violation v = machine_->take_op_violation();
		if (!v)
			v = machine_->check_invariants();
		if (!v && !contents.empty())
			v = Violation{Invariant::contents, contents};
		if (v) {
			violation_ = std::move(v);
			violation_op_ = next_;
		}
	}
	next_++;
	return trace_.events.back();
}

}  // namespace fl
