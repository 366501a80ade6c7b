// SPDX-License-Identifier: GPL-2.0-only
#include "libarena/buddy_runner.h"

#include <algorithm>

#include "libarena/buddy_invariants.h"

namespace fl::libarena {

namespace {

class Runner {
public:
	explicit Runner(const BuddyProgram &p) : p_(p)
	{
		b_.level = p.level;
		b_.buddy = arena_.base() + (u64(ARENA_PAGES) - 1) * __PAGE_SIZE;  // among the arena globals
		arena_.machine().store(0, b_.buddy, 8, 0);  // libbpf writes the globals: the page exists
		arena_.reserve_pages(arena_.base(), 8);     // arena_alloc_reserve
	}
	BuddyVerdict run();
	bool start();
	bool next(const BuddyOp &op)
	{
		const size_t i = v_.trace.size() - 1;
		return step(i, op) && check(i);
	}
	const BuddyVerdict &verdict() const { return v_; }
	size_t live_objects() const { return live_order_.size(); }

private:
	bool nmi_levels() const { return p_.level != buddy_level::before; }
	bool resolve(const Target &t, u64 *addr) const;
	bool live(u64 a) const { return shadow_.live.count(a) != 0; }
	void add_live(u64 a, u64 order);
	void remove_live(u64 a);
	int shadow_free(u64 a) { return live(a) ? (remove_live(a), 0) : -EINVAL; }
	int shadow_drain();
	bool fail(size_t i, std::string what);
	bool check(size_t i);
	bool check_deferred(size_t i, const char *where);
	bool step(size_t i, const BuddyOp &op);
	bool expect(size_t i, const char *what, s64 got, s64 want);
	bool alloc(size_t i, u64 size, bool in_nmi);

	static void nmi_at_lock_held(void *self);

	const BuddyProgram &p_;
	Arena arena_;
	buddy_faults faults_;
	buddy_ctx b_{&arena_, 0, &faults_};
	Shadow shadow_;
	std::vector<u64> live_order_, stale_, deferred_;  // deferred_: the list's head is back()
	u64 pending_nmi_ = 0;      // the address an NMI at lock_held will free
	int nmi_ret_ = 0;
	bool nmi_ran_ = false;
	BuddyVerdict v_;
};

bool Runner::resolve(const Target &t, u64 *addr) const
{
	*addr = 0;
	switch (t.kind) {
	case Target::null:
		return true;
	case Target::stale:
		if (stale_.empty())
			return false;
		*addr = stale_[t.n % stale_.size()];
		return true;
	default:
		if (live_order_.empty())
			return false;
		*addr = live_order_[t.n % live_order_.size()];
		*addr += t.kind == Target::interior ? 16 : t.kind == Target::unaligned ? 1 : 0;
		return true;
	}
}

void Runner::add_live(u64 a, u64 order)
{
	shadow_.live[a] = order;
	live_order_.push_back(a);
}

void Runner::remove_live(u64 a)
{
	shadow_.live.erase(a);
	live_order_.erase(std::find(live_order_.begin(), live_order_.end(), a));
	stale_.push_back(a);
}

// deferred_free_complete, predicted: head first; each object freed if still
// live (whoever holds it now), else the first error.
int Runner::shadow_drain()
{
	int err = 0;
	while (!deferred_.empty()) {
		u64 a = deferred_.back();
		deferred_.pop_back();
		int e = shadow_free(a);
		err = err ? err : e;
	}
	return err;
}

bool Runner::fail(size_t i, std::string what)
{
	v_.ok = false;
	v_.op = i;
	v_.what = std::move(what);
	return false;
}

bool Runner::expect(size_t i, const char *what, s64 got, s64 want)
{
	v_.trace.back() += std::string("  -> ") + std::to_string(got);
	if (got == want)
		return true;
	return fail(i, std::string("I12: ") + what + " returned " + std::to_string(got) + ", expected " +
			       std::to_string(want));
}

// The deferred list in arena memory is the shadow's, in order (I9: nothing lost, nothing added).
bool Runner::check_deferred(size_t i, const char *where)
{
	if (!nmi_levels())
		return true;
	std::vector<u64> got;
	u64 obj = arena_.load64(b_.buddy + BUDDY_DEFERRED_FREE);
	for (size_t n = 0; obj && n <= deferred_.size(); n++, obj = arena_.load64(obj))
		got.push_back(obj);
	std::vector<u64> want(deferred_.rbegin(), deferred_.rend());
	if (got != want || obj)
		return fail(i, std::string("I9: the deferred list differs from the objects freed in NMI ") + where);
	return true;
}

bool Runner::check(size_t i)
{
	std::string bad = check_buddy(&b_, &shadow_);
	if (!bad.empty())
		return fail(i, bad);
	return check_deferred(i, "after the op");
}

void Runner::nmi_at_lock_held(void *self)
{
	Runner *r = static_cast<Runner *>(self);
	r->b_.in_nmi = true;
	r->nmi_ret_ = buddy_free(&r->b_, r->pending_nmi_);
	r->b_.in_nmi = false;
	r->nmi_ran_ = true;
}

bool Runner::alloc(size_t i, u64 size, bool in_nmi)
{
	const u64 order = size_to_order(size);
	b_.in_nmi = in_nmi;
	const u64 a = buddy_alloc(&b_, size);
	b_.in_nmi = false;
	v_.trace.back() += a ? "  -> object" : "  -> NULL";
	const bool want_null = order >= BUDDY_CHUNK_NUM_ORDERS || (in_nmi && nmi_levels());
	if (!a != want_null)
		return fail(i, std::string("I12: alloc returned ") + (a ? "an object" : "NULL") + " for size " +
				       std::to_string(size) + (in_nmi ? " in NMI" : ""));
	if (a && live(a))
		return fail(i, "I1: alloc handed out a live object again");
	if (a)
		add_live(a, order);
	return true;
}

bool Runner::step(size_t i, const BuddyOp &op)
{
	BuddyProgram one;
	one.ops = {op};
	std::string text = format_buddy_program(one);
	text = text.substr(text.find('\n') + 1);
	text.pop_back();
	v_.trace.push_back(text);
	u64 addr = 0;

	switch (op.kind) {
	case BuddyOp::alloc:
		return alloc(i, op.size, false);
	case BuddyOp::nmi_alloc:
		return alloc(i, op.size, true);
	case BuddyOp::bulk: {
		const u64 order = size_to_order(op.size);
		u64 out[32];
		const int want = op.norder >= BUDDY_CHUNK_NUM_ORDERS ? -EINVAL
				 : order >= BUDDY_CHUNK_NUM_ORDERS || op.norder >= BUDDY_CHUNK_NUM_ORDERS - order ? -ENOMEM
																    : 0;
		if (op.norder > 5)
			return true;  /* out[] holds 32 */
		const int ret = buddy_alloc_bulk(&b_, op.size, op.norder, out);
		if (!expect(i, "bulk", ret, want))
			return false;
		for (u64 k = 0; ret == 0 && k < (1u << op.norder); k++) {
			if (live(out[k]))
				return fail(i, "I1: bulk handed out a live object again");
			add_live(out[k], order);
		}
		return true;
	}
	case BuddyOp::free:
	case BuddyOp::nmi_free: {
		if (!resolve(op.target, &addr)) {
			v_.trace.back() += "  -> skipped";
			return true;
		}
		const bool in_nmi = op.kind == BuddyOp::nmi_free;
		auto deferred = [&](u64 a) { return std::find(deferred_.begin(), deferred_.end(), a) != deferred_.end(); };
		// Freeing an object twice in NMI links it into the deferred list
		// twice: a cycle only the may_goto budget ends.
		// A known misuse, left out rather than found again and again.
		if (in_nmi && nmi_levels() && deferred(addr)) {
			v_.trace.back() += "  -> skipped (already freed in NMI)";
			return true;
		}
		u64 nmi_addr = 0;
		const bool nmi = op.has_nmi && addr && resolve(op.nmi_target, &nmi_addr) && !deferred(nmi_addr);
		if (nmi) {
			pending_nmi_ = nmi_addr;
			nmi_ran_ = false;
			faults_.nmi_at_lock_held = nmi_at_lock_held;
			faults_.nmi_arg = this;
		}
		b_.in_nmi = in_nmi;
		const int ret = buddy_free(&b_, addr);
		b_.in_nmi = false;
		faults_.nmi_at_lock_held = nullptr;
		int want;
		if (in_nmi && nmi_levels()) {
			want = addr % BUDDY_MIN_ALLOC_BYTES ? -EINVAL : 0;
			if (addr && !want)
				deferred_.push_back(addr);
		} else if (!addr) {
			want = 0;
		} else {
			// The NMI came first, at lock_held: deferred (nmi levels), or
			// refused by the held lock (before).
			if (nmi && nmi_levels() && nmi_addr && nmi_addr % BUDDY_MIN_ALLOC_BYTES == 0)
				deferred_.push_back(nmi_addr);
			const int own = shadow_free(addr);
			const int drain = nmi_levels() ? shadow_drain() : 0;
			want = own ? own : drain;  // the contract, whatever the level does
		}
		if (nmi) {
			if (!nmi_ran_)
				return fail(i, "I10: the NMI at lock_held never ran");
			const int nmi_want = !nmi_addr ? 0
					     : !nmi_levels() ? -ETIMEDOUT
					     : nmi_addr % BUDDY_MIN_ALLOC_BYTES ? -EINVAL
										: 0;
			if (nmi_ret_ != nmi_want)
				return fail(i, "I10: the NMI's free at lock_held returned " + std::to_string(nmi_ret_) +
						       ", expected " + std::to_string(nmi_want));
		}
		return expect(i, "free", ret, want);
	}
	case BuddyOp::free_bulk: {
		std::vector<u64> addrs;
		for (const Target &t : op.targets) {
			u64 a = 0;
			resolve(t, &a);
			addrs.push_back(a);
		}
		const int ret = buddy_free_bulk(&b_, addrs.data(), addrs.size());
		int want = 0;
		if (!addrs.empty()) {
			for (u64 a : addrs)
				if (a) {
					int e = shadow_free(a);
					want = want ? want : e;
				}
			if (nmi_levels()) {
				int e = shadow_drain();
				want = want ? want : e;
			}
		}
		return expect(i, "free_bulk", ret, want);
	}
	case BuddyOp::store: {
		if (!resolve(op.target, &addr) ||
		    std::find(deferred_.begin(), deferred_.end(), addr) != deferred_.end()) {
			v_.trace.back() += "  -> skipped";  // an object freed in NMI is not the user's any more
			return true;
		}
		const u64 size = 16ull << shadow_.live[addr];
		const u64 off = 8 * ((op.value >> 3) % (size / 8));
		const int sig = arena_.machine().store(0, addr + off, 8, op.value).sig;
		return expect(i, "a user store into the object", sig, 0);
	}
	case BuddyOp::reinit:
		buddy_destroy(&b_);
		shadow_ = Shadow{};
		live_order_.clear();
		stale_.clear();
		deferred_.clear();
		return expect(i, "buddy_init", buddy_init(&b_), 0);
	}
	return true;
}

bool Runner::start()
{
	v_.trace.push_back(std::string("level ") + to_string(p_.level));
	if (!arena_.ok() || buddy_init(&b_) != 0)
		return fail(0, "the arena or buddy_init failed");
	return true;
}

BuddyVerdict Runner::run()
{
	if (!start())
		return v_;
	for (size_t i = 0; i < p_.ops.size(); i++)
		if (!step(i, p_.ops[i]) || !check(i))
			break;
	return v_;
}

}  // namespace

BuddyVerdict run_buddy_program(const BuddyProgram &p)
{
	return Runner(p).run();
}

struct BuddySession::Impl {
	explicit Impl(const BuddyProgram &p) : runner(p) { ok = runner.start(); }
	Runner runner;
	bool ok;
};

BuddySession::BuddySession(buddy_level level)
{
	program_.level = level;
	impl_ = new Impl(program_);
}

BuddySession::~BuddySession() { delete impl_; }

bool BuddySession::step(const BuddyOp &op)
{
	program_.ops.push_back(op);
	return impl_->ok && (impl_->ok = impl_->runner.next(op));
}

const BuddyVerdict &BuddySession::verdict() const { return impl_->runner.verdict(); }
size_t BuddySession::live_objects() const { return impl_->runner.live_objects(); }

}  // namespace fl::libarena
