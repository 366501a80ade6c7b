// SPDX-License-Identifier: GPL-2.0-only
// Text form of a Program (grammar in program_text.h). The parser and the
// formatter share one table of per-op arguments so that what is accepted and
// what is emitted cannot drift apart.
#include "check/program_text.h"

#include <cstdio>
#include <span>
#include <string_view>

namespace fl {

namespace {

using std::string_view;

// ---- numbers --------------------------------------------------------------

enum class NumStatus { ok, bad, overflow };

NumStatus parse_u64(string_view s, uint64_t *out)
{
	unsigned base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s.remove_prefix(2);
	}
	if (s.empty())
		return NumStatus::bad;
	uint64_t v = 0;
	for (char c : s) {
		unsigned d;
		if (c >= '0' && c <= '9')
			d = unsigned(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = unsigned(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = unsigned(c - 'A' + 10);
		else
			return NumStatus::bad;
		if (v > (UINT64_MAX - d) / base)
			return NumStatus::overflow;
		v = v * base + d;
	}
	*out = v;
	return NumStatus::ok;
}

// Small numbers read best in decimal, addresses and sizes in hex.
std::string fmt_u64(uint64_t v)
{
	char buf[24];
	if (v < 4096)
		std::snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	else
		std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return buf;
}

std::string fmt_num(const Num &n)
{
	return fmt_u64(n.value) + (n.pages ? "p" : "");
}

bool is_ident(string_view s)
{
	auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
	if (s.empty() || !alpha(s[0]))
		return false;
	for (char c : s)
		if (!alpha(c) && !(c >= '0' && c <= '9'))
			return false;
	return true;
}

bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

// Is `word` one of the space-separated words of `list`?
bool has_word(string_view list, string_view word)
{
	while (!list.empty()) {
		size_t sp = list.find(' ');
		if (list.substr(0, sp) == word)
			return true;
		if (sp == string_view::npos)
			break;
		list.remove_prefix(sp + 1);
	}
	return false;
}

// ---- symbolic values --------------------------------------------------------

struct Name {
	const char *name;
	uint32_t value;
};

constexpr Name kMmapFlags[] = {
	{"shared", uapi::MAP_SHARED},
	{"private", uapi::MAP_PRIVATE},
	{"populate", uapi::MAP_POPULATE},
	{"fixed", uapi::MAP_FIXED},
	{"fixed_noreplace", uapi::MAP_FIXED_NOREPLACE},
};
constexpr Name kMremapFlags[] = {
	{"maymove", uapi::MREMAP_MAYMOVE},
	{"fixed", uapi::MREMAP_FIXED},
	{"dontunmap", uapi::MREMAP_DONTUNMAP},
};
constexpr Name kMapFlags[] = {
	{"mmapable", uapi::BPF_F_MMAPABLE},
	{"rdonly", uapi::BPF_F_RDONLY},
	{"wronly", uapi::BPF_F_WRONLY},
	{"rdonly_prog", uapi::BPF_F_RDONLY_PROG},
	{"wronly_prog", uapi::BPF_F_WRONLY_PROG},
	{"segv_on_fault", uapi::BPF_F_SEGV_ON_FAULT},
	{"no_user_conv", uapi::BPF_F_NO_USER_CONV},
};
constexpr Name kMapTypes[] = {
	{"array", uapi::BPF_MAP_TYPE_ARRAY},
	{"arena", uapi::BPF_MAP_TYPE_ARENA},
};
constexpr Name kAdvice[] = {
	{"dontneed", uapi::MADV_DONTNEED},
	{"dontfork", uapi::MADV_DONTFORK},
	{"dofork", uapi::MADV_DOFORK},
};
constexpr Name kUpdateFlags[] = {
	{"any", uint32_t(uapi::BPF_ANY)},
	{"noexist", uint32_t(uapi::BPF_NOEXIST)},
	{"exist", uint32_t(uapi::BPF_EXIST)},
};
constexpr bool kSpecV1[] = {false, true};

// Bits without a name are kept as a number so that any value round-trips.
std::string fmt_bits(uint32_t v, std::span<const Name> names)
{
	if (v == 0)
		return "none";
	std::string s;
	for (const Name &n : names) {
		if ((v & n.value) == n.value) {
			s += s.empty() ? "" : ",";
			s += n.name;
			v &= ~n.value;
		}
	}
	if (v)
		s += (s.empty() ? "" : ",") + fmt_u64(v);
	return s;
}

std::string fmt_enum(uint32_t v, std::span<const Name> names)
{
	for (const Name &n : names)
		if (n.value == v)
			return n.name;
	return fmt_u64(v);
}

std::string fmt_prot(int prot)
{
	if (prot & ~7)
		return fmt_u64(uint32_t(prot));
	if (prot == 0)
		return "none";
	std::string s;
	if (prot & uapi::PROT_READ)
		s += 'r';
	if (prot & uapi::PROT_WRITE)
		s += 'w';
	if (prot & uapi::PROT_EXEC)
		s += 'x';
	return s;
}

const char *spec_name(bool bypass)
{
	return bypass ? "bypass" : "mask";
}

std::optional<bool> parse_spec(const std::string &s)
{
	if (s == "mask")
		return false;
	if (s == "bypass")
		return true;
	return std::nullopt;
}

// ---- per-op syntax ----------------------------------------------------------

enum class Pos : uint8_t { none, label, addr };

struct Syntax {
	Pos pos;               // the positional argument after the keyword
	const char *keys;      // accepted keys, in canonical output order
	const char *required;  // keys that must be present
};

constexpr Syntax kSyntax[kOpKinds] = {
	/* mmap */ {Pos::label, "len pgoff prot flags at proc", "len"},
	/* reserve */ {Pos::label, "len at proc", "len"},
	/* munmap */ {Pos::addr, "len proc", "len"},
	/* mprotect */ {Pos::addr, "len prot proc", "len prot"},
	/* mremap */ {Pos::addr, "len new_len flags to as proc", "len new_len"},
	/* madvise */ {Pos::addr, "len advice proc", "len advice"},
	/* fork */ {Pos::none, "proc", ""},
	/* exit */ {Pos::none, "proc", ""},
	/* load */ {Pos::addr, "size proc", ""},
	/* store */ {Pos::addr, "size val proc", "val"},
	/* update */ {Pos::none, "idx val flags proc", "idx val"},
	/* lookup */ {Pos::none, "idx proc", "idx"},
	/* freeze */ {Pos::none, "proc", ""},
	/* close */ {Pos::none, "proc", ""},
	/* smaps */ {Pos::addr, "proc", ""},
	/* arena_alloc */ {Pos::none, "len at as proc", "len"},
	/* arena_free */ {Pos::addr, "len proc", "len"},
	/* arena_reserve */ {Pos::addr, "len proc", "len"},
};

constexpr int kMaxProcs = 64;
constexpr int kMaxThreads = 8;
constexpr int kMaxNmis = 0;  // the .fl vocabulary declares no NMI handlers yet


std::span<const Name> flag_names(OpKind kind)
{
	switch (kind) {
	case OpKind::mmap: return kMmapFlags;
	case OpKind::mremap: return kMremapFlags;
	default: return kUpdateFlags;
	}
}

// The text of key `key` of `op`, or nullopt when it is the default and so is
// left out.
std::optional<std::string> fmt_arg(const Program &p, const Op &op, string_view key)
{
	const Op d = default_op(op.kind);
	const bool req = has_word(kSyntax[int(op.kind)].required, key);
	if (key == "len")
		return fmt_num(op.len);
	if (key == "new_len")
		return fmt_num(op.new_len);
	if (key == "pgoff" && (req || op.pgoff != d.pgoff))
		return fmt_u64(op.pgoff);
	if (key == "prot" && (req || op.prot != d.prot))
		return fmt_prot(op.prot);
	if (key == "flags" && (req || op.flags != d.flags)) {
		if (op.kind == OpKind::update)
			return fmt_enum(uint32_t(op.flags), kUpdateFlags);
		return fmt_bits(uint32_t(op.flags), flag_names(op.kind));
	}
	if ((key == "at" || key == "to") && op.has_at)
		return format_addr(p, op.at);
	if (key == "as" && op.label >= 0 && size_t(op.label) < p.labels.size())
		return p.labels[size_t(op.label)];
	if (key == "advice")
		return fmt_enum(uint32_t(op.advice), kAdvice);
	if (key == "size" && (req || op.size != d.size))
		return fmt_u64(op.size);
	if (key == "val")
		return fmt_u64(op.value);
	if (key == "idx")
		return fmt_u64(op.index);
	if (key == "proc" && op.proc != d.proc)
		return fmt_u64(uint32_t(op.proc));
	return std::nullopt;
}

// ---- tokens -----------------------------------------------------------------

struct Token {
	string_view text;
	int col;  // 1-based
};

std::vector<Token> tokenize(string_view line)
{
	std::vector<Token> out;
	size_t hash = line.find('#');
	// A schedule record's "LABEL#N" is no comment: on an "at" line, '#'
	// right after a label and before a digit belongs to the token.
	const size_t lead = line.find_first_not_of(" \t");
	const bool at_line = lead != string_view::npos && line.substr(lead, 3) == "at ";
	while (at_line && hash != string_view::npos && hash > 0 && line[hash - 1] != ' ' && line[hash - 1] != '\t' &&
	       hash + 1 < line.size() && line[hash + 1] >= '0' && line[hash + 1] <= '9')
		hash = line.find('#', hash + 1);
	if (hash != string_view::npos)
		line = line.substr(0, hash);
	auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
	size_t i = 0;
	while (i < line.size()) {
		if (space(line[i])) {
			i++;
			continue;
		}
		size_t start = i;
		while (i < line.size() && !space(line[i]))
			i++;
		out.push_back({line.substr(start, i - start), int(start) + 1});
	}
	return out;
}

struct Arg {
	string_view key, value;
	int col, vcol;
};

// ---- parser -----------------------------------------------------------------

class Parser {
public:
	ParseResult run(string_view text);

private:
	Program p_;
	ParseError err_;
	int line_ = 0;
	std::vector<std::pair<int, int>> join_at_;  // line, col of each "join"
	bool seen_op_ = false, seen_expect_ = false, seen_map_ = false;

	bool fail(int col, std::string msg)
	{
		err_ = {line_, col, std::move(msg)};
		return false;
	}
	static std::string quote(string_view s) { return "'" + std::string(s) + "'"; }

	bool statement(const std::vector<Token> &t);
	bool header(const std::vector<Token> &t);
	bool map_line(const std::vector<Token> &t);
	bool op_line(OpKind kind, const std::vector<Token> &t);
	bool op_arg(Op &op, const Arg &a, std::string *as);
	bool expect_line(const std::vector<Token> &t);
	bool schedule_line(const std::vector<Token> &t);
	bool points_line(const std::vector<Token> &t);
	bool join_line(const std::vector<Token> &t);
	bool historic_line(const std::vector<Token> &t);
	bool condition(const Arg &a, ConfigFilter *f);

	bool args(const std::vector<Token> &t, size_t from, string_view allowed, std::vector<Arg> *out);
	bool require(const std::vector<Arg> &a, string_view required, int col);

	bool u64(string_view s, int col, uint64_t *out);
	bool u32(string_view s, int col, uint32_t *out);
	bool num(string_view s, int col, Num *out);
	bool addr(string_view s, int col, Addr *out);
	bool bits(const Arg &a, std::span<const Name> names, uint32_t *out);
	bool enum_value(const Arg &a, std::span<const Name> names, uint32_t *out);
	bool prot(const Arg &a, int *out);
	template <typename T, typename F>
	bool axis(const Arg &a, std::span<const T> all, F parse, std::vector<T> *out);
	template <typename F>
	bool items(string_view v, int col, F f);
};

ParseResult Parser::run(string_view text)
{
	while (true) {
		line_++;
		size_t nl = text.find('\n');
		if (!statement(tokenize(text.substr(0, nl))))
			return {std::nullopt, err_};
		if (nl == string_view::npos)
			break;
		text.remove_prefix(nl + 1);
	}
	for (size_t k = 0; k < p_.joins.size(); k++) {
		const uint32_t j = p_.joins[k];
		if (j >= p_.ops.size() || p_.ops[j].thread < 0) {
			line_ = join_at_[k].first;
			fail(join_at_[k].second, "'join' must be followed by an op with thread=");
			return {std::nullopt, err_};
		}
	}
	return {std::move(p_), {}};
}

bool Parser::statement(const std::vector<Token> &t)
{
	if (t.empty())
		return true;
	const std::string kw(t[0].text);
	if (kw == "arch" || kw == "patch" || kw == "page" || kw == "door" || kw == "spec_v1" || kw == "arena")
		return header(t);
	if (kw == "map")
		return map_line(t);
	if (kw == "expect")
		return expect_line(t);
	if (kw == "at")
		return schedule_line(t);
	if (kw == "join")
		return join_line(t);
	if (kw == "points")
		return points_line(t);
	if (kw == "historic")
		return historic_line(t);
	if (auto kind = parse_op_kind(kw)) {
		seen_op_ = true;
		return op_line(*kind, t);
	}
	return fail(t[0].col, "unknown statement " + quote(kw));
}

bool Parser::header(const std::vector<Token> &t)
{
	const string_view kw = t[0].text;
	if (seen_op_ || seen_expect_)
		return fail(t[0].col, quote(kw) + " must come before ops and expectations");
	if (t.size() < 2)
		return fail(t[0].col, "missing value for " + quote(kw));
	if (t.size() > 2)
		return fail(t[2].col, "unexpected " + quote(t[2].text));
	const std::string v(t[1].text);
	Header &h = p_.header;
	bool dup = false, bad = false;
	if (kw == "arch") {
		dup = h.arch.has_value();
		h.arch = parse_arch(v);
		bad = !h.arch;
	} else if (kw == "patch") {
		dup = h.patch.has_value();
		h.patch = parse_patch(v);
		bad = !h.patch;
	} else if (kw == "page") {
		dup = h.page_shift.has_value();
		h.page_shift = parse_page_shift(v);
		bad = !h.page_shift;
	} else if (kw == "door") {
		dup = h.door.has_value();
		h.door = parse_door(v);
		bad = !h.door;
	} else if (kw == "arena") {
		dup = h.arena.has_value();
		h.arena = parse_arena_fix(v);
		bad = !h.arena;
	} else {
		dup = h.bypass_spec_v1.has_value();
		h.bypass_spec_v1 = parse_spec(v);
		bad = !h.bypass_spec_v1;
	}
	if (dup)
		return fail(t[0].col, "duplicate " + quote(kw));
	if (bad)
		return fail(t[1].col, "bad " + std::string(kw) + " " + quote(v));
	return true;
}

bool Parser::map_line(const std::vector<Token> &t)
{
	if (seen_map_)
		return fail(t[0].col, "duplicate 'map'");
	if (seen_op_)
		return fail(t[0].col, "'map' must come before ops");
	seen_map_ = true;
	std::vector<Arg> a;
	if (!args(t, 1, "value_size max_entries key_size flags type extra", &a))
		return false;
	MapSpec &m = p_.map;
	for (const Arg &x : a) {
		bool ok;
		if (x.key == "value_size")
			ok = u32(x.value, x.vcol, &m.value_size);
		else if (x.key == "max_entries")
			ok = u32(x.value, x.vcol, &m.max_entries);
		else if (x.key == "key_size")
			ok = u32(x.value, x.vcol, &m.key_size);
		else if (x.key == "type")
			ok = enum_value(x, kMapTypes, &m.map_type);
		else if (x.key == "extra")
			ok = u64(x.value, x.vcol, &m.map_extra);
		else
			ok = bits(x, kMapFlags, &m.map_flags);
		if (!ok)
			return false;
	}
	return true;
}

bool Parser::op_line(OpKind kind, const std::vector<Token> &t)
{
	const Syntax &s = kSyntax[int(kind)];
	Op op = default_op(kind);
	std::string define;
	size_t next = 1;
	if (s.pos != Pos::none) {
		const char *what = s.pos == Pos::label ? "label" : "address";
		if (t.size() < 2)
			return fail(t[0].col, std::string("missing ") + what);
		const Token &x = t[1];
		if (x.text.find('=') != string_view::npos)
			return fail(x.col, std::string("expected ") + what + " before " + quote(x.text));
		if (s.pos == Pos::label) {
			if (!is_ident(x.text))
				return fail(x.col, "bad label " + quote(x.text));
			define = x.text;
		} else if (!addr(x.text, x.col, &op.addr)) {
			return false;
		}
		next = 2;
	}
	std::vector<Arg> a;
	if (!args(t, next, std::string(s.keys) + " thread", &a))
		return false;
	std::string as;
	for (const Arg &x : a)
		if (!op_arg(op, x, &as))
			return false;
	if (!require(a, s.required, t[0].col))
		return false;
	// Define after the arguments are resolved: "at=" refers to labels as
	// they were before this line.
	if (!define.empty())
		op.label = p_.add_label(define);
	if (!as.empty())
		op.label = p_.add_label(as);
	p_.ops.push_back(op);
	return true;
}

bool Parser::op_arg(Op &op, const Arg &a, std::string *as)
{
	const string_view k = a.key;
	if (k == "len")
		return num(a.value, a.vcol, &op.len);
	if (k == "new_len")
		return num(a.value, a.vcol, &op.new_len);
	if (k == "pgoff")
		return u64(a.value, a.vcol, &op.pgoff);
	if (k == "prot")
		return prot(a, &op.prot);
	if (k == "flags") {
		uint32_t v = 0;
		bool ok = op.kind == OpKind::update ? enum_value(a, kUpdateFlags, &v)
						    : bits(a, flag_names(op.kind), &v);
		op.flags = int(v);
		return ok;
	}
	if (k == "at" || k == "to") {
		op.has_at = true;
		return addr(a.value, a.vcol, &op.at);
	}
	if (k == "as") {
		if (!is_ident(a.value))
			return fail(a.vcol, "bad label " + quote(a.value));
		*as = a.value;
		return true;
	}
	if (k == "advice") {
		uint32_t v = 0;
		bool ok = enum_value(a, kAdvice, &v);
		op.advice = int(v);
		return ok;
	}
	if (k == "size") {
		uint64_t v = 0;
		if (!u64(a.value, a.vcol, &v))
			return false;
		if (v != 1 && v != 2 && v != 4 && v != 8)
			return fail(a.vcol, "size must be 1, 2, 4 or 8");
		op.size = unsigned(v);
		return true;
	}
	if (k == "val")
		return u64(a.value, a.vcol, &op.value);
	if (k == "idx")
		return u32(a.value, a.vcol, &op.index);
	if (k == "thread") {
		uint64_t v = 0;
		if (!u64(a.value, a.vcol, &v))
			return false;
		if (v >= kMaxThreads)
			return fail(a.vcol, "thread must be below " + std::to_string(kMaxThreads));
		op.thread = int(v);
		return true;
	}
	// proc
	uint64_t v = 0;
	if (!u64(a.value, a.vcol, &v))
		return false;
	if (v >= kMaxProcs)
		return fail(a.vcol, "proc must be below " + std::to_string(kMaxProcs));
	op.proc = int(v);
	return true;
}

// "join": a barrier between two concurrent groups. The op before must have
// thread=; the op after is checked at the end (Parser::run).
bool Parser::join_line(const std::vector<Token> &t)
{
	if (t.size() > 1)
		return fail(t[1].col, "unexpected " + quote(t[1].text) + " after 'join'");
	if (p_.ops.empty() || p_.ops.back().thread < 0)
		return fail(t[0].col, "'join' must follow an op with thread=");
	if (!p_.joins.empty() && p_.joins.back() == p_.ops.size())
		return fail(t[0].col, "two 'join' lines in a row");
	p_.joins.push_back(uint32_t(p_.ops.size()));
	join_at_.emplace_back(line_, t[0].col);
	return true;
}

// "at T0 finish_fault:spin_lock#1 switch T1" (or "... fail", "... nmi N0"): a schedule record.
bool Parser::schedule_line(const std::vector<Token> &t)
{
	std::vector<std::string> words;
	for (size_t i = 1; i < t.size(); i++)
		words.emplace_back(t[i].text);
	ScheduleRecord r;
	std::string error;
	size_t bad = 0;
	if (!sched::parse_record(words.data(), words.size(), kMaxThreads, kMaxNmis, &r, &error, &bad))
		return fail(words.empty() ? t[0].col : t[1 + bad].col, error);
	p_.schedule.push_back(r);
	return true;
}

// "points access": the schedule's points include every declared shared access.
bool Parser::points_line(const std::vector<Token> &t)
{
	if (t.size() < 2 || t[1].text != "access")
		return fail(t.size() < 2 ? t[0].col : t[1].col, "'points' takes 'access'");
	if (t.size() > 2)
		return fail(t[2].col, "unexpected " + quote(t[2].text) + " after 'points access'");
	if (p_.access_points)
		return fail(t[0].col, "duplicate 'points access'");
	p_.access_points = true;
	return true;
}

bool Parser::historic_line(const std::vector<Token> &t)
{
	if (seen_op_ || seen_expect_)
		return fail(t[0].col, "'historic' must come before ops and expectations");
	if (t.size() != 2)
		return fail(t[0].col, "expected 'historic NAME'");
	if (p_.header.historic)
		return fail(t[0].col, "duplicate 'historic'");
	p_.header.historic = parse_historic(std::string(t[1].text));
	if (!p_.header.historic)
		return fail(t[1].col, "bad historic " + quote(t[1].text));
	return true;
}

bool Parser::expect_line(const std::vector<Token> &t)
{
	seen_expect_ = true;
	Expectation e;
	if (t.size() < 2)
		return fail(t[0].col, "missing outcome (ok, violation or difference)");
	size_t next = 2;
	if (t[1].text == "violation") {
		if (t.size() < 3)
			return fail(t[0].col, "missing invariant name");
		auto inv = parse_invariant(std::string(t[2].text));
		if (!inv || *inv == Invariant::none)
			return fail(t[2].col, "unknown invariant " + quote(t[2].text));
		e.violation = *inv;
		next = 3;
	} else if (t[1].text == "difference") {
		e.difference = true;
	} else if (t[1].text != "ok") {
		return fail(t[1].col, "unknown outcome " + quote(t[1].text));
	}
	if (next < t.size()) {
		if (t[next].text != "if")
			return fail(t[next].col, "expected 'if' before " + quote(t[next].text));
		if (next + 1 == t.size())
			return fail(t[next].col, "missing condition after 'if'");
		std::vector<Arg> a;
		if (!args(t, next + 1, "patch arch page door spec_v1", &a))
			return false;
		for (const Arg &x : a)
			if (!condition(x, &e.when))
				return false;
	}
	p_.expects.push_back(e);
	return true;
}

bool Parser::condition(const Arg &a, ConfigFilter *f)
{
	auto str = [](auto fn) { return [fn](string_view s) { return fn(std::string(s)); }; };
	if (a.key == "patch")
		return axis<Patch>(a, kPatches, str(parse_patch), &f->patches);
	if (a.key == "arch")
		return axis<Arch>(a, kArches, str(parse_arch), &f->arches);
	if (a.key == "page")
		return axis<unsigned>(a, kPageShifts, str(parse_page_shift), &f->page_shifts);
	if (a.key == "door")
		return axis<Door>(a, kDoors, str(parse_door), &f->doors);
	return axis<bool>(a, kSpecV1, str(parse_spec), &f->spec_v1);
}

// Values are kept in the axis' canonical order, without duplicates, so that
// the filter expands the same way however the condition was written.
template <typename T, typename F>
bool Parser::axis(const Arg &a, std::span<const T> all, F parse, std::vector<T> *out)
{
	std::vector<bool> want(all.size());
	bool ok = items(a.value, a.vcol, [&](string_view item, int col) {
		auto v = parse(item);
		for (size_t i = 0; v && i < all.size(); i++)
			if (all[i] == *v)
				want[i] = true;
		return v ? true : fail(col, "bad " + std::string(a.key) + " " + quote(item));
	});
	if (!ok)
		return false;
	out->clear();
	for (size_t i = 0; i < all.size(); i++)
		if (want[i])
			out->push_back(all[i]);
	return true;
}

// Calls f(item, column) for each item of a comma-separated list.
template <typename F>
bool Parser::items(string_view v, int col, F f)
{
	while (true) {
		size_t comma = v.find(',');
		string_view item = v.substr(0, comma);
		if (item.empty())
			return fail(col, "empty list item");
		if (!f(item, col))
			return false;
		if (comma == string_view::npos)
			return true;
		v.remove_prefix(comma + 1);
		col += int(comma) + 1;
	}
}

bool Parser::args(const std::vector<Token> &t, size_t from, string_view allowed, std::vector<Arg> *out)
{
	for (size_t i = from; i < t.size(); i++) {
		const Token &x = t[i];
		size_t eq = x.text.find('=');
		if (eq == string_view::npos || eq == 0)
			return fail(x.col, "expected key=value, got " + quote(x.text));
		Arg a{x.text.substr(0, eq), x.text.substr(eq + 1), x.col, x.col + int(eq) + 1};
		if (!has_word(allowed, a.key))
			return fail(x.col, "unknown key " + quote(a.key));
		for (const Arg &o : *out)
			if (o.key == a.key)
				return fail(x.col, "duplicate key " + quote(a.key));
		if (a.value.empty())
			return fail(a.vcol, "missing value for " + quote(a.key));
		out->push_back(a);
	}
	return true;
}

bool Parser::require(const std::vector<Arg> &a, string_view required, int col)
{
	while (!required.empty()) {
		size_t sp = required.find(' ');
		string_view key = required.substr(0, sp);
		bool found = false;
		for (const Arg &x : a)
			found |= x.key == key;
		if (!found)
			return fail(col, "missing " + std::string(key) + "=");
		if (sp == string_view::npos)
			break;
		required.remove_prefix(sp + 1);
	}
	return true;
}

bool Parser::u64(string_view s, int col, uint64_t *out)
{
	switch (parse_u64(s, out)) {
	case NumStatus::ok: return true;
	case NumStatus::overflow: return fail(col, "number out of range " + quote(s));
	case NumStatus::bad: break;
	}
	if (!s.empty() && s.back() == 'p' && parse_u64(s.substr(0, s.size() - 1), out) != NumStatus::bad)
		return fail(col, "pages not allowed here " + quote(s));
	return fail(col, "bad number " + quote(s));
}

bool Parser::u32(string_view s, int col, uint32_t *out)
{
	uint64_t v = 0;
	if (!u64(s, col, &v))
		return false;
	if (v > UINT32_MAX)
		return fail(col, "number out of range " + quote(s));
	*out = uint32_t(v);
	return true;
}

bool Parser::num(string_view s, int col, Num *out)
{
	string_view digits = s;
	out->pages = !s.empty() && s.back() == 'p';
	if (out->pages)
		digits.remove_suffix(1);
	switch (parse_u64(digits, &out->value)) {
	case NumStatus::ok: return true;
	case NumStatus::overflow: return fail(col, "number out of range " + quote(s));
	case NumStatus::bad: break;
	}
	return fail(col, "bad number " + quote(s));
}

bool Parser::addr(string_view s, int col, Addr *out)
{
	size_t end = 0;
	while (end < s.size() && s[end] != '+' && s[end] != '-')
		end++;
	const string_view name = s.substr(0, end);
	if (!is_ident(name))
		return fail(col, "bad address " + quote(s));
	out->label = p_.label_index(std::string(name));
	if (out->label < 0)
		return fail(col, "unknown label " + quote(name));
	out->negative = false;
	out->offset = Num{};
	if (end == s.size())
		return true;
	out->negative = s[end] == '-';
	return num(s.substr(end + 1), col + int(end) + 1, &out->offset);
}

bool Parser::bits(const Arg &a, std::span<const Name> names, uint32_t *out)
{
	*out = 0;
	if (a.value == "none")
		return true;
	return items(a.value, a.vcol, [&](string_view item, int col) {
		for (const Name &n : names) {
			if (item == n.name) {
				*out |= n.value;
				return true;
			}
		}
		uint32_t v = 0;
		if (is_digit(item[0])) {
			if (!u32(item, col, &v))
				return false;
			*out |= v;
			return true;
		}
		return fail(col, "unknown " + std::string(a.key) + " " + quote(item));
	});
}

bool Parser::enum_value(const Arg &a, std::span<const Name> names, uint32_t *out)
{
	for (const Name &n : names) {
		if (a.value == n.name) {
			*out = n.value;
			return true;
		}
	}
	if (is_digit(a.value[0]))
		return u32(a.value, a.vcol, out);
	return fail(a.vcol, "unknown " + std::string(a.key) + " " + quote(a.value));
}

bool Parser::prot(const Arg &a, int *out)
{
	*out = 0;
	if (a.value == "none")
		return true;
	if (is_digit(a.value[0])) {
		uint32_t v = 0;
		if (!u32(a.value, a.vcol, &v))
			return false;
		*out = int(v);
		return true;
	}
	for (size_t i = 0; i < a.value.size(); i++) {
		const char c = a.value[i];
		const int bit = c == 'r' ? uapi::PROT_READ : c == 'w' ? uapi::PROT_WRITE : c == 'x' ? uapi::PROT_EXEC : 0;
		if (!bit || (*out & bit))
			return fail(a.vcol + int(i), "bad prot " + quote(a.value));
		*out |= bit;
	}
	return true;
}

// ---- formatting -------------------------------------------------------------

template <typename T, typename N>
void fmt_axis(std::string *s, const char *key, const std::vector<T> &have, std::span<const T> all, N name)
{
	std::string vals;
	bool every = true;
	for (const T &v : all) {
		bool in = false;
		for (const T &h : have)
			in |= h == v;
		every &= in;
		if (in)
			vals += (vals.empty() ? "" : ",") + std::string(name(v));
	}
	// An empty axis (matches nothing) has no text form; it prints as an
	// empty value, which the parser rejects rather than misreads.
	if (!every)
		*s += std::string(" ") + key + "=" + vals;
}

std::string fmt_filter(const ConfigFilter &f)
{
	std::string s;
	auto name = [](auto v) { return to_string(v); };
	fmt_axis<Patch>(&s, "patch", f.patches, kPatches, name);
	fmt_axis<Arch>(&s, "arch", f.arches, kArches, name);
	fmt_axis<unsigned>(&s, "page", f.page_shifts, kPageShifts, page_size_name);
	fmt_axis<Door>(&s, "door", f.doors, kDoors, name);
	fmt_axis<bool>(&s, "spec_v1", f.spec_v1, kSpecV1, spec_name);
	return s.empty() ? s : " if" + s;
}

}  // namespace

// What an op is when its optional keys are left out.
Op default_op(OpKind kind)
{
	Op op;
	op.kind = kind;
	if (kind == OpKind::mmap) {
		op.prot = uapi::PROT_READ | uapi::PROT_WRITE;
		op.flags = uapi::MAP_SHARED;
	}
	return op;
}

std::string ParseError::str() const
{
	return std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

ParseResult parse_program(const std::string &text)
{
	return Parser().run(text);
}

std::string format_addr(const Program &p, const Addr &a)
{
	std::string s = a.label >= 0 && size_t(a.label) < p.labels.size() ? p.labels[size_t(a.label)] : "?";
	// "A+0p" and "A-0" differ from "A" field by field, so only the one
	// true zero offset is left out.
	if (a.negative || a.offset.value || a.offset.pages)
		s += (a.negative ? "-" : "+") + fmt_num(a.offset);
	return s;
}

std::string format_op(const Program &p, const Op &op)
{
	const int k = int(op.kind);
	if (k >= kOpKinds)
		return "?";
	const Syntax &s = kSyntax[k];
	std::string out = to_string(op.kind);
	if (s.pos == Pos::label)
		out += " " + (op.label >= 0 && size_t(op.label) < p.labels.size() ? p.labels[size_t(op.label)] : "?");
	else if (s.pos == Pos::addr)
		out += " " + format_addr(p, op.addr);
	string_view keys = s.keys;
	while (!keys.empty()) {
		size_t sp = keys.find(' ');
		string_view key = keys.substr(0, sp);
		if (auto v = fmt_arg(p, op, key))
			out += " " + std::string(key) + "=" + *v;
		if (sp == string_view::npos)
			break;
		keys.remove_prefix(sp + 1);
	}
	if (op.thread >= 0)
		out += " thread=" + fmt_u64(uint32_t(op.thread));
	return out;
}

std::string format_program(const Program &p)
{
	std::string s;
	const Header &h = p.header;
	if (h.arch)
		s += std::string("arch ") + to_string(*h.arch) + "\n";
	if (h.patch)
		s += std::string("patch ") + to_string(*h.patch) + "\n";
	if (h.page_shift)
		s += "page " + page_size_name(*h.page_shift) + "\n";
	if (h.door)
		s += std::string("door ") + to_string(*h.door) + "\n";
	if (h.bypass_spec_v1)
		s += std::string("spec_v1 ") + spec_name(*h.bypass_spec_v1) + "\n";
	if (h.historic)
		s += std::string("historic ") + to_string(*h.historic) + "\n";
	if (h.arena)
		s += std::string("arena ") + to_string(*h.arena) + "\n";
	s += "map value_size=" + fmt_u64(p.map.value_size) + " max_entries=" + fmt_u64(p.map.max_entries) +
	     " key_size=" + fmt_u64(p.map.key_size) + " flags=" + fmt_bits(p.map.map_flags, kMapFlags);
	if (p.map.map_type != uapi::BPF_MAP_TYPE_ARRAY)  // only non-defaults: older texts stay as they were
		s += " type=" + fmt_enum(p.map.map_type, kMapTypes);
	if (p.map.map_extra)
		s += " extra=" + fmt_u64(p.map.map_extra);
	s += "\n";
	size_t next_join = 0;
	for (size_t i = 0; i < p.ops.size(); i++) {
		if (next_join < p.joins.size() && p.joins[next_join] == i) {
			s += "join\n";
			next_join++;
		}
		s += format_op(p, p.ops[i]) + "\n";
	}
	if (p.access_points)
		s += "points access\n";
	for (const ScheduleRecord &r : p.schedule)
		s += sched::format_record(r) + "\n";
	for (const Expectation &e : p.expects) {
		// A violation and a difference at once has no text form; the
		// violation, being the stronger claim, wins.
		if (e.violation != Invariant::none)
			s += std::string("expect violation ") + to_string(e.violation);
		else if (e.difference)
			s += "expect difference";
		else
			s += "expect ok";
		s += fmt_filter(e.when) + "\n";
	}
	return s;
}

}  // namespace fl
