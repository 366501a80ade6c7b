/*
 * The executor of a faultline reproducer: a C rendering of faultline's
 * host-kernel executor (src/real/), so that the trace printed here is the
 * one faultline's oracle sees on the same kernel. The main process is the
 * supervisor: it creates the map, walks ops[] and runs the bpf(2) ops
 * itself; every memory op goes to the worker process that plays the op's
 * proc= over a pipe. Workers share the descriptor table (CLONE_FILES, as the
 * Program has one map fd for all processes); their address spaces are their
 * own. Every address lives in one free window (the arena) found first, where
 * mappings without MAP_FIXED are placed the way faultline's model kernel
 * places them (top-down below arena end - 128 MiB), so that neighbouring
 * VMAs, merges and gaps are the same as in the port.
 *
 * Output: the trace in faultline's trace text (src/check/trace_text.h) on
 * stdout, then a verdict on stderr. Exit: 0 the kernel's trace equals the
 * port's; 1 it differs; 2 it cannot run here (page size, width, an op
 * outside the window, a broken process tree); 77 bpf(2) is not permitted.
 */

#define REPRO_MAP_FD_FLOOR 512
#define REPRO_REPLY_TIMEOUT_MS 10000
#define REPRO_RUN_TIMEOUT_S 60
#define REPRO_MAX_MAP_BYTES (1ull << 30) /* src/real/host_probe.h kMaxHostMapBytes */
/* src/sim/machine.h kMachineRam64/32: the port's RAM for this width */
#define REPRO_MACHINE_RAM (sizeof(long) == 8 ? 64ull << 30 : 1ull << 30)
#define REPRO_PAGE 4096ull
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define REPRO_MAP_SHARED 0x01
#define REPRO_MAP_PRIVATE 0x02
#define REPRO_MAP_FIXED 0x10
#define REPRO_MAP_ANONYMOUS 0x20
#define REPRO_MAP_NORESERVE 0x4000
#define REPRO_MREMAP_MAYMOVE 1
#define REPRO_MREMAP_FIXED 2

/* ---- raw system calls: >= 0 or -errno ---- */

static int64_t sys_ret(long r)
{
	return r == -1 ? -(int64_t)errno : (int64_t)r;
}

/* An address comes back as unsigned long; on i386 a high one is a negative long. */
static int64_t sys_ret_addr(long r)
{
	return r == -1 ? -(int64_t)errno : (int64_t)(uint64_t)(unsigned long)r;
}

/* The subset of union bpf_attr used here (include/uapi/linux/bpf.h). */
struct bpf_map_create_attr {
	uint32_t map_type, key_size, value_size, max_entries, map_flags;
	uint32_t inner_map_fd, numa_node;
	char map_name[16];
	uint32_t map_ifindex, btf_fd, btf_key_type_id, btf_value_type_id, btf_vmlinux_value_type_id;
	uint64_t map_extra;
};
struct bpf_elem_attr {
	uint32_t map_fd, pad;
	uint64_t key, value, flags;
};

/* bpf(2) with a zero-filled 128-byte attr: the kernel wants unused bytes 0. */
static int64_t bpf(int cmd, const void *attr, size_t size)
{
	union {
		unsigned char bytes[128];
		uint64_t align;
	} buf;
	memset(&buf, 0, sizeof buf);
	memcpy(buf.bytes, attr, size);
	return sys_ret(syscall(SYS_bpf, cmd, buf.bytes, sizeof buf.bytes));
}

static int64_t bpf_map_create(const struct map_spec *m)
{
	struct bpf_map_create_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = 2; /* BPF_MAP_TYPE_ARRAY */
	a.key_size = m->key_size;
	a.value_size = m->value_size;
	a.max_entries = m->max_entries;
	a.map_flags = m->map_flags;
	return bpf(0 /* BPF_MAP_CREATE */, &a, sizeof a);
}

static int64_t bpf_map_elem(int cmd, int fd, uint32_t *key, void *value, uint64_t flags)
{
	struct bpf_elem_attr a = {(uint32_t)fd, 0, (uint64_t)(uintptr_t)key, (uint64_t)(uintptr_t)value, flags};
	return bpf(cmd, &a, sizeof a);
}

static int64_t bpf_map_freeze(int fd)
{
	uint32_t a = (uint32_t)fd;
	return bpf(22 /* BPF_MAP_FREEZE */, &a, sizeof a);
}

/* pgoff in pages; i386's mmap2 takes 4096-byte units, x86_64's mmap bytes (mod 2^64). */
static int64_t sys_mmap(uint64_t addr, uint64_t len, int prot, int flags, int fd, uint64_t pgoff)
{
#ifdef SYS_mmap2
	return sys_ret_addr(syscall(SYS_mmap2, (unsigned long)addr, (unsigned long)len, prot, flags, fd,
				    (unsigned long)pgoff));
#else
	return sys_ret_addr(syscall(SYS_mmap, (unsigned long)addr, (unsigned long)len, prot, flags, fd,
				    (unsigned long)(pgoff << 12)));
#endif
}

static int64_t sys_munmap(uint64_t addr, uint64_t len)
{
	return sys_ret(syscall(SYS_munmap, (unsigned long)addr, (unsigned long)len));
}

/* ---- the arena: the executor's address-space window (src/real/arena.cpp) ---- */

#if UINTPTR_MAX > 0xffffffffu
#define ARENA_LO 0x300000000000ull
#define ARENA_SIZE (1ull << 40)
#define USER_SPACE (1ull << 47)
#else
#define ARENA_LO 0x18000000ull
#define ARENA_SIZE 0x38000000ull
#define USER_SPACE (1ull << 32)
#endif

static uint64_t arena_lo, arena_hi;

static int arena_probe(uint64_t lo, uint64_t size, int extra, uint64_t *got)
{
	int64_t r = sys_mmap(lo, size, 0, REPRO_MAP_PRIVATE | REPRO_MAP_ANONYMOUS | REPRO_MAP_NORESERVE | extra,
			     -1, 0);
	if (r < 0)
		return 0;
	*got = (uint64_t)r;
	sys_munmap(*got, size);
	return 1;
}

static int find_arena(void)
{
	uint64_t got = 0, size;
	if (arena_probe(ARENA_LO, ARENA_SIZE, MAP_FIXED_NOREPLACE, &got) && got == ARENA_LO) {
		arena_lo = got, arena_hi = got + ARENA_SIZE;
		return 1;
	}
	for (size = ARENA_SIZE; size >= (256ull << 20); size /= 2)
		if (arena_probe(0, size, 0, &got)) {
			arena_lo = got, arena_hi = got + size;
			return 1;
		}
	return 0;
}

static int arena_contains(uint64_t start, uint64_t len)
{
	return start >= arena_lo && start <= arena_hi && len <= arena_hi - start;
}

static uint64_t page_align(uint64_t len)
{
	return (len + REPRO_PAGE - 1) & ~(REPRO_PAGE - 1);
}

/* The process's VMAs inside the arena, sorted, as [start, end) pairs; returns the count. */
static int arena_vmas(long pid, uint64_t (*out)[2], int max)
{
	char path[64], line[512];
	int n = 0, c;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long s = 0, e = 0;
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && e > arena_lo && s < arena_hi && n < max) {
			out[n][0] = s;
			out[n][1] = e;
			n++;
		}
		if (!strchr(line, '\n'))
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
	}
	fclose(f);
	return n;
}

/* Where the model's mm_get_unmapped_area puts len bytes (hint optional); 0: no room. */
static uint64_t arena_place(long pid, uint64_t hint, uint64_t len)
{
	static uint64_t vmas[4096][2];
	const uint64_t task_size = arena_hi - REPRO_PAGE, mmap_min = arena_lo;
	uint64_t gap_end = arena_hi - (128ull << 20);
	int n, i;
	if (len == 0 || len > task_size - mmap_min)
		return 0;
	len = page_align(len);
	n = arena_vmas(pid, vmas, 4096);
	if (hint) {
		uint64_t addr = page_align(hint);
		int free = 1;
		for (i = 0; i < n; i++)
			free = free && (vmas[i][1] <= addr || vmas[i][0] >= addr + len);
		if (addr >= hint && task_size - len >= addr && addr >= mmap_min && free)
			return addr;
	}
	for (i = n - 1; i >= 0; i--) {
		if (vmas[i][0] >= gap_end)
			continue;
		if (vmas[i][1] <= gap_end && gap_end - vmas[i][1] >= len)
			return gap_end - len;
		if (vmas[i][0] < gap_end)
			gap_end = vmas[i][0];
	}
	if (gap_end >= mmap_min && gap_end - mmap_min >= len)
		return gap_end - len;
	return 0;
}

/* ---- workers (src/real/worker.cpp) ---- */

struct command {
	enum op_kind kind;
	int prot, flags, advice, map_fd;
	unsigned size;
	uint64_t addr, len, new_len, at, pgoff, value;
};

struct reply {
	int64_t ret; /* syscall result, or the new worker's pid for fork */
	int sig;
	unsigned size;
	uint8_t data[8];
	int child_cmd_fd;
};

static sigjmp_buf access_jmp;
static volatile sig_atomic_t access_sig;

static void on_fault(int sig)
{
	access_sig = sig;
	siglongjmp(access_jmp, 1);
}

/* One access of the op's width; unaligned ones are what the Program asks for. */
static __attribute__((noinline)) void access_once(uint64_t addr, unsigned size, int store, uint64_t value,
						  uint8_t *out)
{
	volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)addr;
	uint64_t v = 0;
	unsigned i;
	switch (size) {
	case 1: if (store) *p = (uint8_t)value; else v = *p; break;
	case 2: if (store) *(volatile uint16_t *)p = (uint16_t)value; else v = *(volatile uint16_t *)p; break;
	case 4: if (store) *(volatile uint32_t *)p = (uint32_t)value; else v = *(volatile uint32_t *)p; break;
	default: if (store) *(volatile uint64_t *)p = value; else v = *(volatile uint64_t *)p; break;
	}
	for (i = 0; i < size; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static long clone_files(void)
{
	/* fork(), sharing the descriptor table; raw clone runs no atfork handlers */
	return syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
}

static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		p += k;
		n -= (size_t)k;
	}
	return 1;
}

static void worker_loop(int cmd_fd, int reply_fd) __attribute__((noreturn));

static struct reply execute(const struct command *c, int reply_fd)
{
	struct reply r;
	memset(&r, 0, sizeof r);
	r.child_cmd_fd = -1;
	switch (c->kind) {
	case OP_MMAP: r.ret = sys_mmap(c->at, c->len, c->prot, c->flags, c->map_fd, c->pgoff); break;
	case OP_RESERVE: r.ret = sys_mmap(c->at, c->len, c->prot, c->flags, -1, 0); break;
	case OP_MUNMAP: r.ret = sys_munmap(c->addr, c->len); break;
	case OP_MPROTECT:
		r.ret = sys_ret(syscall(SYS_mprotect, (unsigned long)c->addr, (unsigned long)c->len, c->prot));
		break;
	case OP_MREMAP:
		r.ret = sys_ret_addr(syscall(SYS_mremap, (unsigned long)c->addr, (unsigned long)c->len,
					     (unsigned long)c->new_len, c->flags, (unsigned long)c->at));
		break;
	case OP_MADVISE:
		r.ret = sys_ret(syscall(SYS_madvise, (unsigned long)c->addr, (unsigned long)c->len, c->advice));
		break;
	case OP_LOAD:
	case OP_STORE:
		access_sig = 0;
		if (sigsetjmp(access_jmp, 1) == 0) {
			access_once(c->addr, c->size, c->kind == OP_STORE, c->value, r.data);
			r.size = c->kind == OP_LOAD ? c->size : 0;
		} else {
			r.sig = access_sig;
			r.size = 0;
		}
		break;
	case OP_FORK: {
		int p[2];
		if (pipe(p)) {
			r.ret = -errno;
			break;
		}
		r.ret = clone_files();
		if (r.ret < 0)
			r.ret = -errno;
		if (r.ret == 0)
			worker_loop(p[0], reply_fd);
		r.child_cmd_fd = p[1];
		break;
	}
	default: r.ret = -ENOSYS; break;
	}
	return r;
}

static void worker_loop(int cmd_fd, int reply_fd)
{
	for (;;) {
		struct command c;
		struct reply r;
		if (!read_full(cmd_fd, &c, sizeof c))
			_exit(0);
		memset(&r, 0, sizeof r);
		r.child_cmd_fd = -1;
		if (c.kind != OP_EXIT)
			r = execute(&c, reply_fd);
		if (write(reply_fd, &r, sizeof r) != sizeof r || c.kind == OP_EXIT)
			_exit(0);
	}
}

static long spawn_worker(int cmd_fd, int reply_fd)
{
	struct sigaction sa;
	long pid = clone_files();
	if (pid != 0)
		return pid < 0 ? -errno : pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	worker_loop(cmd_fd, reply_fd);
}

/* ---- the supervisor (src/real/host_executor.cpp) ---- */

struct proc {
	long pid;
	int cmd_fd, alive;
};

struct event {
	int64_t ret;
	int sig;
	uint8_t *data;
	size_t data_len;
	char info[1024];
};

static struct proc *procs;
static int nprocs;
static int map_fd = -1, reply_fd = -1;
static int bound[NLABELS + 1];
static uint64_t label_addr[NLABELS + 1];
static struct event events[NOPS + 1];

static void kill_all(void)
{
	int i;
	for (i = 0; i < nprocs; i++)
		kill((pid_t)procs[i].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

/* The run cannot go on here: say why (one line, as faultline's executor) and exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2))) stop(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	kill_all();
	exit(2);
}

static void on_alarm(int sig)
{
	(void)sig;
	stop("error: the run timed out");
}

static int resolve(const struct addr *a, uint64_t *out)
{
	uint64_t v;
	if (a->label < 0 || !bound[a->label])
		return 0;
	v = a->negative ? label_addr[a->label] - a->off : label_addr[a->label] + a->off;
	*out = sizeof(void *) == 4 ? (uint32_t)v : v; /* unsigned long wraps */
	return 1;
}

static void bind_label(int label, int64_t ret)
{
	if (label < 0 || ret < 0)
		return;
	bound[label] = 1;
	label_addr[label] = (uint64_t)ret;
}

static struct reply call(int proc, struct command c)
{
	struct pollfd pfd = {reply_fd, POLLIN, 0};
	struct reply r;
	c.map_fd = map_fd;
	if (write(procs[proc].cmd_fd, &c, sizeof c) != sizeof c)
		stop("error: cannot reach process %d", proc);
	if (poll(&pfd, 1, REPRO_REPLY_TIMEOUT_MS) != 1 || read(reply_fd, &r, sizeof r) != sizeof r)
		stop("error: process %d did not answer", proc);
	return r;
}

static void need_inside(uint64_t addr, uint64_t len, const char *what)
{
	if (!arena_contains(addr, len))
		stop("unsupported: %s reaches outside the executor's address window", what);
}

/* The kernel refuses these ranges before it looks at a VMA: safe wherever they point. */
static int rejected_early(uint64_t addr, uint64_t len)
{
	return (addr & (REPRO_PAGE - 1)) || len == 0 || page_align(len) < len || page_align(len) == 0 ||
	       addr + page_align(len) < addr;
}

/* Where the model would put a mapping without MAP_FIXED, or 0 (the kernel chooses). */
static int64_t place_or_zero(int proc, uint64_t hint, uint64_t len)
{
	uint64_t at;
	if (hint && len && !arena_contains(hint, page_align(len)))
		stop("unsupported: an mmap hint outside the executor's address window");
	at = arena_place(procs[proc].pid, hint, len);
	if (!at && len && page_align(len) >= len && page_align(len) > USER_SPACE / 8 && page_align(len) < USER_SPACE)
		stop("unsupported: a mapping of %llu bytes does not fit the executor's window", (unsigned long long)len);
	return (int64_t)at;
}

/* exit_mm() runs before the task turns zombie: then its mappings are gone. */
static void wait_dead(long pid)
{
	char path[64], buf[256];
	int i;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	for (i = 0; i < 100000; i++) {
		FILE *f = fopen(path, "r");
		size_t n;
		const char *paren;
		if (!f)
			return;
		memset(buf, 0, sizeof buf);
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		paren = n ? strrchr(buf, ')') : NULL;
		if (!paren || paren[1] == '\0' || paren[2] == 'Z' || paren[2] == 'X')
			return;
		usleep(50);
	}
	stop("error: an exiting process did not die");
}

/* "VmFlags: rd wr sh ... | Rss: Np" of the VMA holding addr, or "no vma". */
static void smaps(int proc, uint64_t addr, char *out, size_t size)
{
	char path[64], line[512], flags[512] = "";
	unsigned long long rss_kb = 0;
	int in = 0;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%ld/smaps", procs[proc].pid);
	f = fopen(path, "r");
	if (!f)
		stop("error: cannot read %s", path);
	while (fgets(line, sizeof line, f)) {
		unsigned long long s, e;
		char c;
		if (sscanf(line, "%llx-%llx %c", &s, &e, &c) == 3) {
			if (in)
				break;
			in = s <= addr && addr < e;
		} else if (in) {
			sscanf(line, "Rss: %llu kB", &rss_kb);
			if (!strncmp(line, "VmFlags:", 8)) {
				char *p = line + 8;
				size_t n;
				while (*p == ' ')
					p++;
				n = strlen(p);
				while (n && (p[n - 1] == '\n' || p[n - 1] == ' '))
					p[--n] = '\0';
				memcpy(flags, p, n + 1); /* n < sizeof line - 8 */
			}
		}
	}
	fclose(f);
	if (!in)
		snprintf(out, size, "no vma");
	else
		snprintf(out, size, "VmFlags: %s | Rss: %llup", flags, rss_kb * 1024 / REPRO_PAGE);
}

static size_t value_bytes(void)
{
	return map.value_size <= (1u << 24) ? map.value_size : 8;
}

static void run_op(const struct op *op, struct event *ev)
{
	uint64_t addr = 0, at = 0;
	int alive = op->proc >= 0 && op->proc < nprocs && procs[op->proc].alive;
	int needs_addr = op->kind == OP_MUNMAP || op->kind == OP_MPROTECT || op->kind == OP_MREMAP ||
			 op->kind == OP_MADVISE || op->kind == OP_LOAD || op->kind == OP_STORE || op->kind == OP_SMAPS;
	int bpf_op = op->kind == OP_UPDATE || op->kind == OP_LOOKUP || op->kind == OP_FREEZE || op->kind == OP_CLOSE;
	struct command c;
	struct reply r;

	/* faultline's Labels::prepare: an op on an unmapped label or a dead process is skipped */
	if (needs_addr && !resolve(&op->addr, &addr)) {
		snprintf(ev->info, sizeof ev->info, "skipped: label %s is not mapped", labels[op->addr.label]);
		return;
	}
	if (op->has_at && !resolve(&op->at, &at)) {
		snprintf(ev->info, sizeof ev->info, "skipped: label %s is not mapped", labels[op->at.label]);
		return;
	}
	if (!alive && !bpf_op) {
		snprintf(ev->info, sizeof ev->info, "skipped: no process %d", op->proc);
		return;
	}
	memset(&c, 0, sizeof c);
	c.kind = op->kind;
	c.addr = addr;
	c.len = op->len;
	c.new_len = op->new_len;
	c.prot = op->prot;
	c.flags = op->flags;
	c.advice = op->advice;
	c.size = op->size;
	c.value = op->value;
	c.pgoff = op->pgoff;
	c.at = at;
	switch (op->kind) {
	case OP_MMAP:
	case OP_RESERVE: {
		int64_t placed;
		if (op->kind == OP_RESERVE) {
			c.prot = 0;
			c.flags = REPRO_MAP_PRIVATE | REPRO_MAP_ANONYMOUS | (op->has_at ? REPRO_MAP_FIXED : 0);
		}
		if (c.flags & (REPRO_MAP_FIXED | MAP_FIXED_NOREPLACE)) {
			if (!rejected_early(at, c.len))
				need_inside(at, page_align(c.len), "a MAP_FIXED target");
		} else if ((placed = place_or_zero(op->proc, op->has_at ? at : 0, c.len)) != 0) {
			c.at = (uint64_t)placed;
			c.flags |= MAP_FIXED_NOREPLACE;
		}
		r = call(op->proc, c);
		bind_label(op->label, r.ret);
		ev->ret = r.ret < 0 ? r.ret : 0;
		break;
	}
	case OP_MUNMAP:
	case OP_MPROTECT:
	case OP_MADVISE:
		if (!rejected_early(addr, c.len))
			need_inside(addr, page_align(c.len),
				    op->kind == OP_MUNMAP ? "munmap" : op->kind == OP_MPROTECT ? "mprotect" : "madvise");
		ev->ret = call(op->proc, c).ret;
		break;
	case OP_MREMAP: {
		int64_t target, ret;
		if (!(addr & (REPRO_PAGE - 1)))
			need_inside(addr, page_align(c.len) > REPRO_PAGE ? page_align(c.len) : REPRO_PAGE,
				    "an mremap source");
		if (c.flags & REPRO_MREMAP_FIXED) {
			if (!rejected_early(at, c.new_len))
				need_inside(at, page_align(c.new_len), "an mremap target");
			ret = call(op->proc, c).ret;
		} else if (!(c.flags & REPRO_MREMAP_MAYMOVE)) {
			if (!rejected_early(addr, c.new_len))
				need_inside(addr, page_align(c.new_len), "an mremap growth");
			ret = call(op->proc, c).ret;
		} else {
			/* let the kernel move it (its checks in its order), then carry
			 * the result to where the model would have put it */
			target = place_or_zero(op->proc, 0, c.new_len);
			ret = call(op->proc, c).ret;
			if (ret >= 0 && (uint64_t)ret != addr && target && ret != target) {
				struct command carry = c;
				carry.addr = (uint64_t)ret;
				carry.len = carry.new_len = page_align(c.new_len);
				carry.flags = REPRO_MREMAP_MAYMOVE | REPRO_MREMAP_FIXED;
				carry.at = (uint64_t)target;
				ret = call(op->proc, carry).ret;
				if (ret != target)
					stop("error: could not carry an mremap'd mapping into the executor's window");
			}
		}
		bind_label(op->label, ret);
		ev->ret = ret < 0 ? ret : 0;
		break;
	}
	case OP_LOAD:
	case OP_STORE:
		need_inside(addr, op->size, op->kind == OP_LOAD ? "load" : "store");
		r = call(op->proc, c);
		ev->sig = r.sig;
		ev->data_len = r.size < 8 ? r.size : 8;
		ev->data = malloc(8);
		memcpy(ev->data, r.data, ev->data_len);
		break;
	case OP_FORK:
		r = call(op->proc, c);
		if (r.ret < 0) {
			ev->ret = r.ret;
			break;
		}
		procs = realloc(procs, sizeof *procs * (size_t)(nprocs + 1));
		procs[nprocs].pid = (long)r.ret;
		procs[nprocs].cmd_fd = r.child_cmd_fd;
		procs[nprocs].alive = 1;
		ev->ret = nprocs++;
		break;
	case OP_EXIT:
		call(op->proc, c);
		wait_dead(procs[op->proc].pid);
		procs[op->proc].alive = 0;
		ev->ret = 0;
		break;
	case OP_UPDATE: {
		size_t n = value_bytes(), i;
		uint8_t *v = calloc(n, 1);
		uint32_t key = op->index;
		for (i = 0; i < 8 && i < n; i++)
			v[i] = (uint8_t)(op->value >> (8 * i));
		ev->ret = bpf_map_elem(2 /* BPF_MAP_UPDATE_ELEM */, map_fd, &key, v, (uint64_t)op->flags);
		free(v);
		break;
	}
	case OP_LOOKUP: {
		uint32_t key = op->index;
		ev->data_len = value_bytes();
		ev->data = calloc(ev->data_len, 1);
		ev->ret = bpf_map_elem(1 /* BPF_MAP_LOOKUP_ELEM */, map_fd, &key, ev->data, 0);
		if (ev->ret < 0)
			ev->data_len = 0;
		break;
	}
	case OP_FREEZE: ev->ret = bpf_map_freeze(map_fd); break;
	case OP_CLOSE: ev->ret = close(map_fd) ? -errno : 0; break;
	case OP_SMAPS:
		need_inside(addr, 1, "smaps");
		smaps(op->proc, addr, ev->info, sizeof ev->info);
		break;
	}
}

/* ---- probes (src/real/host_probe.cpp) ---- */

/* 1: bpf(2) and mmap of a BPF array work; 0 + why. */
static int bpf_available(char *why, size_t size)
{
	struct map_spec small = {4, 8, 1, 1u << 10 /* BPF_F_MMAPABLE */};
	int64_t fd = bpf_map_create(&small), a;
	if (fd < 0) {
		snprintf(why, size, "bpf(BPF_MAP_CREATE): %s", strerror((int)-fd));
		return 0;
	}
	a = sys_mmap(0, 4096, 1 /* PROT_READ */, REPRO_MAP_SHARED, (int)fd, 0);
	close((int)fd);
	if (a < 0) {
		snprintf(why, size, "mmap of a BPF array: %s", strerror((int)-a));
		return 0;
	}
	sys_munmap((uint64_t)a, 4096);
	return 1;
}

/* Whether array_map_alloc() skips the Spectre-v1 power-of-two rounding
 * (bpf_bypass_spec_v1: CAP_PERFMON or mitigations=off): without it
 * 0xffffffff entries round to 2^32 = 0 in u32, -E2BIG; with it vmalloc
 * refuses more than the RAM, -ENOMEM. -1 when neither. */
static int bypass_spec_v1(void)
{
	struct map_spec huge = {4, 4096, 0xffffffffu, 1u << 10};
	int64_t h = bpf_map_create(&huge);
	if (h >= 0)
		close((int)h);
	return h == -E2BIG ? 0 : h == -ENOMEM ? 1 : -1;
}

/* The executor refuses maps above 1 GiB that would still fit in RAM. */
static int map_size_allowed(int bypass)
{
	uint64_t entries = map.max_entries, page = (uint64_t)sysconf(_SC_PAGESIZE), elem, bytes, ram;
	struct sysinfo si;
	if (map.key_size != 4 || map.value_size == 0 || map.max_entries == 0 || map.value_size > 0x7fffffffu)
		return 1;
	if (!bypass) {
		uint64_t pow2 = 1;
		while (pow2 < entries)
			pow2 <<= 1;
		if (pow2 > 0x80000000u)
			return 1;
		entries = pow2;
	}
	elem = ((uint64_t)map.value_size + 7) & ~(uint64_t)7;
	bytes = page + (entries * elem + page - 1) / page * page;
	memset(&si, 0, sizeof si);
	sysinfo(&si);
	ram = (uint64_t)si.totalram * si.mem_unit;
	if (bytes <= REPRO_MAX_MAP_BYTES || (bytes > ram && bytes > REPRO_MACHINE_RAM))
		return 1;
	printf("unsupported: a map of %llu MiB (the executor allocates at most %llu MiB)\n",
	       (unsigned long long)(bytes >> 20), (unsigned long long)(REPRO_MAX_MAP_BYTES >> 20));
	return 0;
}

/* ---- output and verdict ---- */

/* faultline's trace text: info escapes '%', control bytes and bytes >= 0x7f as %XX. */
static char *trace_text(int64_t map_ret)
{
	static const char hex[] = "0123456789abcdef";
	size_t cap = 4096, n = 0, i, j;
	char *s = malloc(cap);
#define PUT(...)                                                                             \
	do {                                                                                 \
		int k_;                                                                      \
		while ((k_ = snprintf(s + n, cap - n, __VA_ARGS__)) < 0 || (size_t)k_ >= cap - n) \
			s = realloc(s, cap *= 2);                                            \
		n += (size_t)k_;                                                             \
	} while (0)
	PUT("trace map_ret=%lld events=%d\n", (long long)map_ret, NOPS);
	for (i = 0; i < (size_t)NOPS; i++) {
		const struct event *e = &events[i];
		PUT("ev %zu ret=%lld sig=%d data=", i + 1, (long long)e->ret, e->sig);
		if (!e->data_len)
			PUT("-");
		for (j = 0; j < e->data_len; j++)
			PUT("%c%c", hex[e->data[j] >> 4], hex[e->data[j] & 15]);
		PUT(" info=");
		for (j = 0; e->info[j]; j++) {
			unsigned char c = (unsigned char)e->info[j];
			if (c == '%' || c < 0x20 || c >= 0x7f)
				PUT("%%%c%c", hex[c >> 4], hex[c & 15]);
			else
				PUT("%c", c);
		}
		PUT("\n");
	}
	PUT("end\n");
#undef PUT
	return s;
}

/* Line `k` (0-based) of text, without its newline, into out. */
static void nth_line(const char *text, int k, char *out, size_t size)
{
	const char *end;
	size_t n;
	while (k-- > 0 && text)
		text = (text = strchr(text, '\n')) ? text + 1 : NULL;
	if (!text) {
		snprintf(out, size, "(none)");
		return;
	}
	end = strchr(text, '\n');
	n = end ? (size_t)(end - text) : strlen(text);
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), text);
}

/* Compares as faultline's oracle does: the first differing op is a finding
 * unless the port does not model it (then the comparison ends there). */
static int verdict(const struct expected *want, const char *got)
{
	int line;
	for (line = 0;; line++) {
		char a[1024], b[1024];
		const struct scope_end *s;
		nth_line(want->trace, line, a, sizeof a);
		nth_line(got, line, b, sizeof b);
		if (!strcmp(a, "(none)") && !strcmp(b, "(none)"))
			break;
		if (!strcmp(a, b))
			continue;
		for (s = want->scope; s->op >= 0; s++)
			if (line >= 1 && s->op == line - 1) {
				fprintf(stderr, "repro: agrees with the port (%s) up to op %d, where the port stops "
						"modelling: %s\n", want->config, line, s->why);
				return 0;
			}
		fprintf(stderr, "repro: the kernel's trace DIFFERS from the port's (%s)", want->config);
		if (line >= 1 && line <= NOPS)
			fprintf(stderr, " at op %d: %s (proc %d)", line, ops[line - 1].text, ops[line - 1].proc);
		fprintf(stderr, "\n  port:   %s\n  kernel: %s\n", a, b);
		return 1;
	}
	fprintf(stderr, "repro: the kernel's trace equals the port's (%s)\n", want->config);
	return 0;
}

int main(void)
{
	char why[256];
	int reply[2], cmd[2], i, bypass;
	int64_t fd, map_ret;
	long pid;
	const struct expected *want = NULL;
	char *text;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sysconf(_SC_PAGESIZE) != (long)REPRO_PAGE) {
		printf("error: this reproducer resolves pages as 4 KiB; this kernel's page is %ld bytes\n",
		       sysconf(_SC_PAGESIZE));
		return 2;
	}
	if (!bpf_available(why, sizeof why)) {
		printf("skipped: %s\n", why);
		return 77;
	}
	bypass = bypass_spec_v1();
	for (i = 0; i < NEXPECTED; i++)
		if (expected[i].bits == (int)(8 * sizeof(unsigned long)) && expected[i].bypass_spec_v1 == bypass)
			want = &expected[i];
	if (!want) {
		fprintf(stderr, "repro: no expected trace for %d-bit unsigned long, spec_v1 %s (regenerate with "
				"faultline repro --arch)\n",
			(int)(8 * sizeof(unsigned long)), bypass == 1 ? "bypass" : bypass == 0 ? "mask" : "unknown");
		return 2;
	}
	if (!map_size_allowed(bypass))
		return 2;
	if (!find_arena()) {
		printf("error: no free address-space window for the executor's arena\n");
		return 2;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGALRM, on_alarm);
	alarm(REPRO_RUN_TIMEOUT_S);

	fd = bpf_map_create(&map);
	map_ret = fd < 0 ? fd : 0;
	if (fd >= 0) {
		map_fd = fcntl((int)fd, F_DUPFD, REPRO_MAP_FD_FLOOR); /* above the workers' pipes */
		close((int)fd);
		if (map_fd < 0)
			stop("error: cannot move the map fd above %d", REPRO_MAP_FD_FLOOR);
	}
	if (pipe(reply) || pipe(cmd))
		stop("error: pipe: %s", strerror(errno));
	reply_fd = reply[0];
	fflush(NULL);
	pid = spawn_worker(cmd[0], reply[1]);
	if (pid < 0)
		stop("error: clone: %s", strerror((int)-pid));
	procs = malloc(sizeof *procs);
	procs[0].pid = pid;
	procs[0].cmd_fd = cmd[1];
	procs[0].alive = 1;
	nprocs = 1;
	for (i = 0; i < NOPS; i++)
		run_op(&ops[i], &events[i]);
	alarm(0);
	kill_all();

	text = trace_text(map_ret);
	fputs(text, stdout);
	fflush(stdout);
	return verdict(want, text);
}
