// SPDX-License-Identifier: GPL-2.0-only
// faultline selftest: a Program as straight-line C in the style of
// tools/testing/selftests/bpf/prog_tests (test__start_subtest, ASSERT_*,
// libbpf's bpf_map_create), asserting each op's result as the port's trace
// at one configuration says: the named level, page 4k, door anon (a real
// mmap(2) of the map fd), spec_v1 bypass (test_progs runs as root, and
// bpf_bypass_spec_v1() is perfmon_capable()). The kernel places mappings
// itself (no MAP_FIXED unless the Program asks). An op the port skips (its
// label is not mapped) is a comment. The first failed assertion ends the
// test: what follows depends on it. One process only: a Program with fork,
// exit or proc= is refused (faultline repro runs those).
#include "selftest.h"

#include <cctype>
#include <cstdio>

#include "check/execution.h"
#include "check/program_text.h"
#include "generator_args.h"
#include "options.h"

namespace fl::cli {

namespace {

constexpr unsigned kShift = 12;

std::string hex(uint64_t v, const char *suffix = "")
{
	char buf[40];
	std::snprintf(buf, sizeof buf, "0x%llx%s", (unsigned long long)v, suffix);
	return buf;
}

// "EINVAL", or the number for kernel-internal codes (ENOTSUPP is 524).
std::string errno_c(int64_t neg)
{
	std::string n = errno_name(-neg);
	return n.size() > 1 && std::isdigit((unsigned char)n[1]) ? std::to_string(-neg) : n;
}

std::string c_ident(const std::string &s)
{
	std::string out;
	for (char c : s)
		out += std::isalnum((unsigned char)c) ? char(std::tolower((unsigned char)c)) : '_';
	return out;
}

// The model's mm->mmap_base (src/sim/arch/machine_impl.cpp: TASK_SIZE - 128 MiB).
uint64_t model_mmap_base(Arch arch)
{
	return (arch == Arch::A32 ? 0xc0000000ull : 1ull << 47) - (128ull << 20);
}

bool uses(const std::string &code, const char *token)
{
	return code.find(token) != std::string::npos;
}

class Writer {
public:
	// placed[i]: where the model put op i's mapping when it chose the place (no MAP_FIXED)
	Writer(const Program &p, const Trace &t, const Config &cfg, std::vector<std::optional<uint64_t>> placed)
		: p_(p), t_(t), cfg_(cfg), placed_(std::move(placed))
	{
	}
	std::string body();

private:
	std::string label(int i) const
	{
		const std::string &n = p_.labels[size_t(i)];
		bool plain = !n.empty() && std::isupper((unsigned char)n[0]);
		for (char c : n)
			plain = plain && (std::isalnum((unsigned char)c) || c == '_');
		return plain ? n : "l" + std::to_string(i);
	}
	std::string addr(const Addr &a) const
	{
		named_[size_t(a.label)] = true;
		uint64_t off = a.offset.resolve(kShift);
		if (!off)
			return label(a.label);
		return "(void *)((unsigned long)" + label(a.label) + (a.negative ? " - " : " + ") + hex(off, "ul") + ")";
	}
	// Code that asserts a 0 / -1+errno result held in `var`.
	std::string check_errno(const std::string &var, int64_t ret, const std::string &name) const
	{
		if (ret >= 0)
			return "\tif (!ASSERT_OK(" + var + ", \"" + name + "\"))\n\t\tgoto out;\n";
		return "\tif (!ASSERT_ERR(" + var + ", \"" + name + "\") || !ASSERT_EQ(errno, " + errno_c(ret) + ", \"" +
		       name + " errno\"))\n\t\tgoto out;\n";
	}
	std::string check_ptr(int64_t ret, const std::string &name, int bind) const
	{
		if (ret >= 0)
		{
			if (bind >= 0)
				named_[size_t(bind)] = true;
			return "\tif (!ASSERT_OK_PTR(p, \"" + name + "\"))\n\t\tgoto out;\n" +
			       (bind >= 0 ? "\t" + label(bind) + " = p;\n" : std::string());
		}
		return "\tif (!ASSERT_ERR_PTR(p, \"" + name + "\") || !ASSERT_EQ(errno, " + errno_c(ret) + ", \"" + name +
		       " errno\"))\n\t\tgoto out;\n";
	}
	std::string mmap_call(const std::string &at, uint64_t len, const std::string &prot, const std::string &flags,
			      const std::string &fd, uint64_t pgoff) const
	{
		if (cfg_.arch == Arch::A32)  // mmap2: the offset in pages, no glibc check before the kernel's
			return "(void *)syscall(__NR_mmap2, " + at + ", " + hex(len, "ul") + ", " + prot + ", " + flags +
			       ", " + fd + ", " + hex(pgoff, "ul") + ")";
		return "mmap(" + at + ", " + hex(len, "ul") + ", " + prot + ", " + flags + ", " + fd + ", (off_t)" +
		       hex(pgoff << kShift, "ull") + ")";
	}
	std::string op(size_t i);

	const Program &p_;
	const Trace &t_;
	const Config &cfg_;
	std::vector<uint64_t> label_len_ = std::vector<uint64_t>(p_.labels.size(), 0);
	mutable std::vector<bool> named_ = std::vector<bool>(p_.labels.size(), false);  // in code, not only in text
	std::vector<std::optional<uint64_t>> placed_;
};

std::string prot_c(int prot)
{
	std::string s;
	for (auto [bit, name] : {std::pair{1, "PROT_READ"}, {2, "PROT_WRITE"}, {4, "PROT_EXEC"}})
		if (prot & bit)
			s += (s.empty() ? "" : " | ") + std::string(name);
	int rest = prot & ~7;
	if (rest)
		s += (s.empty() ? "" : " | ") + hex(unsigned(rest));
	return s.empty() ? "PROT_NONE" : s;
}

std::string flags_c(int flags)
{
	std::string s;
	for (auto [bit, name] : {std::pair{0x01, "MAP_SHARED"}, {0x02, "MAP_PRIVATE"}, {0x10, "MAP_FIXED"},
				 {0x20, "MAP_ANONYMOUS"}, {0x8000, "MAP_POPULATE"}, {0x100000, "MAP_FIXED_NOREPLACE"}})
		if (flags & bit) {
			s += (s.empty() ? "" : " | ") + std::string(name);
			flags &= ~bit;
		}
	if (flags)
		s += (s.empty() ? "" : " | ") + hex(unsigned(flags));
	return s.empty() ? "0" : s;
}

std::string Writer::op(size_t i)
{
	const Op &op = p_.ops[i];
	const Event &ev = t_.events[i];
	std::string text = format_op(p_, op);
	std::string name = std::to_string(i + 1) + ": " + text;
	for (char &c : name)
		if (c == '"' || c == '\\')
			c = '\'';
	std::string s = "\n\t/* " + std::to_string(i + 1) + ": " + text + "  -> " + format_result(op, ev) + " */\n";
	if (ev.info.rfind("skipped:", 0) == 0)
		return s;
	const uint64_t len = op.len.resolve(kShift), new_len = op.new_len.resolve(kShift);
	std::string at = op.has_at ? addr(op.at) : "NULL";
	if (placed_[i]) {  // where the model's top-down allocator put it, relative to its mmap_base
		uint64_t base = model_mmap_base(cfg_.arch);
		at = *placed_[i] <= base ? "top - " + hex(base - *placed_[i], "ul") : "top + " + hex(*placed_[i] - base, "ul");
	}
	switch (op.kind) {
	case OpKind::mmap:
		s += "\tp = " + mmap_call(at, len, prot_c(op.prot), flags_c(op.flags), "map_fd", op.pgoff) + ";\n";
		s += check_ptr(ev.ret, name, op.label);
		label_len_[size_t(op.label)] = std::max(label_len_[size_t(op.label)], len);
		break;
	case OpKind::reserve:
		s += "\tp = " + mmap_call(at, len, "PROT_NONE", std::string("MAP_PRIVATE | MAP_ANONYMOUS") +
				      (op.has_at ? " | MAP_FIXED" : ""), "-1", 0) + ";\n";
		s += check_ptr(ev.ret, name, op.label);
		label_len_[size_t(op.label)] = std::max(label_len_[size_t(op.label)], len);
		break;
	case OpKind::munmap:
		s += "\terr = munmap(" + addr(op.addr) + ", " + hex(len, "ul") + ");\n" + check_errno("err", ev.ret, name);
		break;
	case OpKind::mprotect:
		s += "\terr = mprotect(" + addr(op.addr) + ", " + hex(len, "ul") + ", " + prot_c(op.prot) + ");\n" +
		     check_errno("err", ev.ret, name);
		break;
	case OpKind::madvise: {
		const char *adv = op.advice == 4 ? "MADV_DONTNEED" : op.advice == 10 ? "MADV_DONTFORK"
				 : op.advice == 11 ? "MADV_DOFORK" : nullptr;
		s += "\terr = madvise(" + addr(op.addr) + ", " + hex(len, "ul") + ", " +
		     (adv ? std::string(adv) : std::to_string(op.advice)) + ");\n" + check_errno("err", ev.ret, name);
		break;
	}
	case OpKind::mremap: {
		std::string f;
		for (auto [bit, n] : {std::pair{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}})
			if (op.flags & bit)
				f += (f.empty() ? "" : " | ") + std::string(n);
		s += "\tp = mremap(" + addr(op.addr) + ", " + hex(len, "ul") + ", " + hex(new_len, "ul") + ", " +
		     (f.empty() ? "0" : f) + ", " + at + ");\n" + check_ptr(ev.ret, name, op.label);
		if (op.label >= 0)
			label_len_[size_t(op.label)] = std::max(label_len_[size_t(op.label)], new_len);
		break;
	}
	case OpKind::load:
	case OpKind::store: {
		bool store = op.kind == OpKind::store;
		if (store)
			s += "\tval = " + hex(op.value, "ull") + ";\n";
		s += "\terr = fl_access(" + addr(op.addr) + ", " + std::to_string(op.size) + ", " +
		     (store ? "true" : "false") + ", &val);\n";
		std::string sig = ev.sig == 7 ? "SIGBUS" : ev.sig == 11 ? "SIGSEGV" : std::to_string(ev.sig);
		if (ev.sig || store) {
			s += "\tif (!ASSERT_EQ(err, " + sig + ", \"" + name + "\"))\n\t\tgoto out;\n";
		} else {
			uint64_t v = 0;
			for (size_t k = 0; k < ev.data.size(); k++)
				v |= uint64_t(ev.data[k]) << (8 * k);
			s += "\tif (!ASSERT_OK(err, \"" + name + "\") || !ASSERT_EQ(val, " + hex(v, "ull") + ", \"" + name +
			     " value\"))\n\t\tgoto out;\n";
		}
		break;
	}
	case OpKind::update:
		s += "\tkey = " + std::to_string(op.index) + ";\n\tval = " + hex(op.value, "ull") +
		     ";\n\tmemset(value, 0, sizeof(value));\n\tmemcpy(value, &val, sizeof(value) < 8 ? sizeof(value) : 8);\n";
		s += "\terr = bpf_map_update_elem(map_fd, &key, value, " + std::to_string(op.flags) + ");\n";
		s += "\tif (!ASSERT_EQ(err, " + (ev.ret ? "-" + errno_c(ev.ret) : std::string("0")) + ", \"" + name +
		     "\"))\n\t\tgoto out;\n";
		break;
	case OpKind::lookup: {
		s += "\tkey = " + std::to_string(op.index) + ";\n\tmemset(value, 0xa5, sizeof(value));\n";
		s += "\terr = bpf_map_lookup_elem(map_fd, &key, value);\n";
		s += "\tif (!ASSERT_EQ(err, " + (ev.ret ? "-" + errno_c(ev.ret) : std::string("0")) + ", \"" + name +
		     "\"))\n\t\tgoto out;\n";
		if (ev.ret)
			break;
		size_t k = ev.data.size();
		while (k && !ev.data[k - 1])
			k--;
		if (k) {
			std::string lit;
			for (size_t j = 0; j < k; j++) {
				char b[8];
				std::snprintf(b, sizeof b, "\\x%02x", ev.data[j]);
				lit += b;
			}
			s += "\tif (!ASSERT_OK(memcmp(value, \"" + lit + "\", " + std::to_string(k) + "), \"" + name +
			     " value\"))\n\t\tgoto out;\n";
		}
		if (k < ev.data.size())
			s += "\tif (!ASSERT_EQ(fl_zero(value + " + std::to_string(k) + ", " + std::to_string(ev.data.size() - k) +
			     "), 1, \"" + name + " zero tail\"))\n\t\tgoto out;\n";
		break;
	}
	case OpKind::freeze:
		s += "\terr = bpf_map_freeze(map_fd);\n\tif (!ASSERT_EQ(err, " +
		     (ev.ret ? "-" + errno_c(ev.ret) : std::string("0")) + ", \"" + name + "\"))\n\t\tgoto out;\n";
		break;
	case OpKind::close:
		s += "\terr = close(map_fd);\n\tmap_fd = -1; /* later ops see EBADF, as on the closed fd */\n" +
		     check_errno("err", ev.ret, name);
		break;
	case OpKind::smaps: {
		std::string info;
		for (char c : ev.info)
			info += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
		s += "\tfl_smaps(" + addr(op.addr) + ", smaps, sizeof(smaps));\n\tif (!ASSERT_STREQ(smaps, \"" + info +
		     "\", \"" + name + "\"))\n\t\tgoto out;\n";
		break;
	}
	case OpKind::fork:
	case OpKind::exit:
	case OpKind::arena_alloc:
	case OpKind::arena_free:
	case OpKind::arena_reserve:
		break;  // refused before
	}
	return s;
}

std::string Writer::body()
{
	std::string ops;
	for (size_t i = 0; i < p_.ops.size(); i++)
		ops += op(i);
	const uint32_t vbytes = p_.map.value_size <= (1u << 24) ? p_.map.value_size : 8;
	std::string s = "\tLIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = " + hex(p_.map.map_flags) + ");\n";
	if (uses(ops, "value, "))
		s += "\tstatic unsigned char value[" + std::to_string(vbytes ? vbytes : 1) + "];\n";
	if (uses(ops, "fl_smaps("))
		s += "\tchar smaps[1024];\n";
	if (uses(ops, "\tkey = "))
		s += "\t__u32 key;\n";
	if (uses(ops, "&val"))
		s += "\t__u64 val;\n";
	std::string ptrs = uses(ops, "\tp = ") ? "p" : "";
	for (size_t i = 0; i < p_.labels.size(); i++)
		if (named_[i])  // a label whose mmap always fails is never named
			ptrs += (ptrs.empty() ? "" : ", *") + label(int(i)) + " = NULL";
	if (!ptrs.empty())
		s += "\tvoid *" + ptrs + ";\n";
	s += std::string("\tint map_fd") + (uses(ops, "\terr = ") ? ", err" : "") + ";\n";
	if (uses(ops, "top ")) {
		uint64_t lowest = model_mmap_base(cfg_.arch);
		for (const auto &a : placed_)
			if (a)
				lowest = std::min(lowest, *a);
		uint64_t window = 1ull << 30;
		while (window / 4 * 3 < 2 * (model_mmap_base(cfg_.arch) - lowest))
			window <<= 1;
		s += "\tchar *top;\n\n";
		s += "\t/* Mappings go where faultline's model puts them, top-down below its\n"
		     "\t * mmap_base, played by `top` in a free window: neighbouring VMAs and\n"
		     "\t * MAP_FIXED targets are the model's, and never this process's own.\n\t */\n";
		s += "\ttop = fl_window(" + hex(window, "ul") + ");\n\tif (!ASSERT_OK_PTR(top, \"address window\"))\n\t\treturn;\n";
	}
	s += "\n";
	s += "\tmap_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, \"faultline\", " + std::to_string(p_.map.key_size) + ", " +
	     std::to_string(p_.map.value_size) + ", " + hex(p_.map.max_entries) + ", &opts);\n";
	if (t_.map_ret == 0)
		s += "\tif (!ASSERT_GE(map_fd, 0, \"bpf_map_create\"))\n\t\treturn;\n";
	else
		s += "\tif (!ASSERT_EQ(map_fd, -" + errno_c(t_.map_ret) + ", \"bpf_map_create\"))\n\t\tgoto out;\n";
	s += ops;
	s += "\nout:\n";
	for (size_t i = 0; i < p_.labels.size(); i++)
		if (label_len_[i] && named_[i])
			s += "\tif (" + label(int(i)) + ")\n\t\tmunmap(" + label(int(i)) + ", " + hex(label_len_[i], "ul") +
			     ");\n";
	s += "\tif (map_fd >= 0)\n\t\tclose(map_fd);\n";
	return s;
}

const char kAccessHelper[] = R"(static sigjmp_buf fl_jmp;
static volatile sig_atomic_t fl_sig;

static void fl_on_fault(int sig)
{
	fl_sig = sig;
	siglongjmp(fl_jmp, 1);
}

/* One load or store of `size` bytes: 0, or the signal it raised (SIGBUS, SIGSEGV). */
static int fl_access(void *addr, int size, bool store, __u64 *val)
{
	struct sigaction sa = { .sa_handler = fl_on_fault }, old_segv, old_bus;
	volatile __u8 *p = addr;

	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	fl_sig = 0;
	if (sigsetjmp(fl_jmp, 1) == 0) {
		__u64 v = 0;

		switch (size) {
		case 1: if (store) *p = *val; else v = *p; break;
		case 2: if (store) *(volatile __u16 *)p = *val; else v = *(volatile __u16 *)p; break;
		case 4: if (store) *(volatile __u32 *)p = *val; else v = *(volatile __u32 *)p; break;
		default: if (store) *(volatile __u64 *)p = *val; else v = *(volatile __u64 *)p; break;
		}
		if (!store)
			*val = v;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return fl_sig;
}
)";

const char kSmapsHelper[] = R"(/* "VmFlags: ... | Rss: Np" of the VMA holding addr (or "no vma"), from /proc/self/smaps. */
static void fl_smaps(void *addr, char *out, size_t size)
{
	unsigned long a = (unsigned long)addr;
	unsigned long long rss_kb = 0;
	char line[512], flags[512] = "";
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(out, size, "no vma");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char c;

		if (sscanf(line, "%llx-%llx %c", &s, &e, &c) == 3) {
			if (in)
				break;
			in = s <= a && a < e;
		} else if (in) {
			sscanf(line, "Rss: %llu kB", &rss_kb);
			if (!strncmp(line, "VmFlags:", 8)) {
				char *q = line + 8;
				size_t n;

				while (*q == ' ')
					q++;
				n = strlen(q);
				while (n && (q[n - 1] == '\n' || q[n - 1] == ' '))
					q[--n] = '\0';
				memcpy(flags, q, n + 1);
			}
		}
	}
	fclose(f);
	if (in)
		snprintf(out, size, "VmFlags: %s | Rss: %llup", flags, rss_kb * 1024 / sysconf(_SC_PAGESIZE));
}
)";

const char kWindowHelper[] = R"(/* A free range of `size` bytes (left unmapped): the address 3/4 up it. */
static char *fl_window(size_t size)
{
	char *w = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (w == MAP_FAILED)
		return w;
	munmap(w, size);
	return w + size / 4 * 3;
}
)";

const char kZeroHelper[] = R"(static int fl_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}
)";

}  // namespace

int selftest_main(const std::vector<std::string> &args)
{
	GeneratorArgs a = parse_generator_args("selftest", args);
	const Program &p = a.program;
	if (a.arches.size() != 1)
		a.arches = {Arch::A64};  // one width per test: 64 unless --arch 32
	for (size_t i = 0; i < p.ops.size(); i++)
		if (p.ops[i].kind == OpKind::fork || p.ops[i].kind == OpKind::exit || p.ops[i].proc != 0)
			throw UsageError(a.file + ": op " + std::to_string(i + 1) + " (" + format_op(p, p.ops[i]) +
					 "): selftest writes one-process Programs only (faultline repro runs this one)");
	Config cfg{a.arches.front(), a.level, kShift, Door::anon, true};
	// The port's trace, and where it placed each mapping it placed itself.
	Execution e(p, cfg);
	std::vector<std::optional<uint64_t>> placed(p.ops.size());
	while (!e.done()) {
		size_t i = e.next_op();
		const Op &op = p.ops[i];
		const Event &ev = e.step();
		uint64_t at = 0;
		bool chose = (op.kind == OpKind::mmap && !op.has_at && !(op.flags & 0x100010)) ||
			     (op.kind == OpKind::reserve && !op.has_at);
		if (chose && ev.ret >= 0 && ev.info.empty() && e.resolve(Addr{op.label, {}, false}, &at))
			placed[i] = at;
	}
	const Trace &t = e.trace();
	std::string base = a.file.substr(a.file.rfind('/') + 1);
	std::string name = "faultline_" + c_ident(base.substr(0, base.rfind('.')));

	std::string s = "// SPDX-License-Identifier: GPL-2.0\n/*\n";
	s += " * Generated by `faultline selftest --level " + std::string(to_string(a.level)) + "` from " + base +
	     ":\n * the port's trace at " + cfg.name() + ", asserted op by op.\n *\n";
	s += comment_lines(format_program(p));
	s += " */\n#include <test_progs.h>\n#include <setjmp.h>\n#include <signal.h>\n#include <sys/mman.h>\n";
	if (cfg.arch == Arch::A32)
		s += "#include <sys/syscall.h>\n";
	std::string body = Writer(p, t, cfg, std::move(placed)).body();
	for (auto [token, helper] : {std::pair{"fl_access(", kAccessHelper}, {"fl_smaps(", kSmapsHelper},
				     {"fl_zero(", kZeroHelper}, {"fl_window(", kWindowHelper}})
		if (uses(body, token))
			s += "\n" + std::string(helper);
	s += "\nstatic void " + name + "(void)\n{\n" + body;
	s += "}\n\nvoid test_" + name + "(void)\n{\n\tif (test__start_subtest(\"" + cfg.name() + "\"))\n\t\t" + name +
	     "();\n}\n";
	write_output(a, s);
	return 0;
}

}  // namespace fl::cli
