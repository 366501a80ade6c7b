/*
 * The types and constants of a faultline reproducer (the Program's tables
 * follow them, then the executor). Only libc and raw syscalls: builds with
 * `gcc -static repro.c` and `gcc -m32 -static repro.c`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

/* The Program's operations, in faultline's order (src/check/program.h). */
enum op_kind {
	OP_MMAP, OP_RESERVE, OP_MUNMAP, OP_MPROTECT, OP_MREMAP, OP_MADVISE, OP_FORK, OP_EXIT,
	OP_LOAD, OP_STORE, OP_UPDATE, OP_LOOKUP, OP_FREEZE, OP_CLOSE, OP_SMAPS,
};

/* An address: a label's current address plus a byte offset (4 KiB pages resolved). */
struct addr {
	int label; /* -1: none */
	uint64_t off;
	int negative;
};

struct op {
	const char *text; /* the Program line */
	enum op_kind kind;
	int proc;
	int label; /* mmap/reserve: defines it; mremap: as= (or -1) */
	struct addr addr;
	uint64_t len, new_len, pgoff;
	int prot, flags, advice;
	int has_at;
	struct addr at; /* mmap: MAP_FIXED target; mremap: to= */
	unsigned size;
	uint64_t value;
	uint32_t index;
};

struct map_spec {
	uint32_t key_size, value_size, max_entries, map_flags;
};

/* The port's trace at one configuration, and where the port stops modelling. */
struct scope_end {
	int op;	/* 0-based */
	const char *why;
};
struct expected {
	int bits;	/* width of unsigned long */
	int bypass_spec_v1;
	const char *config;
	const char *trace;
	const struct scope_end *scope; /* ends with op = -1 */
};
