/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small stand-in for tools/testing/selftests/bpf/test_progs.h: the
 * subtest and ASSERT_* macros `faultline selftest` output uses, with the
 * same semantics (each ASSERT returns whether it held, prints what failed
 * and counts the failure), so the generated tests build against Debian's
 * libbpf-dev here and against the real test_progs in a kernel tree.
 */
#ifndef FAULTLINE_TEST_PROGS_SHIM_H
#define FAULTLINE_TEST_PROGS_SHIM_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct test_env {
	const char *test, *subtest;
	int fails, subtests, asserts;
};
extern struct test_env env;

bool test__start_subtest(const char *name);

static inline bool fl_shim_check(bool ok, const char *name, const char *file, int line, const char *what)
{
	env.asserts++;
	if (!ok) {
		env.fails++;
		fprintf(stderr, "%s:%d: %s/%s: %s: %s\n", file, line, env.test ? env.test : "?",
			env.subtest ? env.subtest : "-", name, what);
	}
	return ok;
}

#define FL_SHIM_CMP(actual, expected, op, name)                                                        \
	({                                                                                             \
		long long ___a = (long long)(actual), ___e = (long long)(expected);                     \
		char ___w[160];                                                                        \
		snprintf(___w, sizeof ___w, "unexpected %s: actual %lld (0x%llx) " #op " expected %lld", \
			 #actual, ___a, (unsigned long long)___a, ___e);                                \
		fl_shim_check(___a op ___e, (name), __FILE__, __LINE__, ___w);                         \
	})

#define ASSERT_EQ(actual, expected, name) FL_SHIM_CMP(actual, expected, ==, name)
#define ASSERT_NEQ(actual, expected, name) FL_SHIM_CMP(actual, expected, !=, name)
#define ASSERT_GE(actual, expected, name) FL_SHIM_CMP(actual, expected, >=, name)
#define ASSERT_OK(res, name) FL_SHIM_CMP(res, 0, ==, name)
#define ASSERT_ERR(res, name) FL_SHIM_CMP(res, 0, <, name)
/* test_progs: libbpf_get_error(), i.e. IS_ERR_OR_NULL(); MAP_FAILED is ERR_PTR(-1) */
static inline bool fl_shim_is_err_or_null(const void *p)
{
	return !p || (unsigned long)p >= (unsigned long)-4095;
}
#define ASSERT_OK_PTR(ptr, name) \
	fl_shim_check(!fl_shim_is_err_or_null(ptr), (name), __FILE__, __LINE__, "unexpected error pointer")
#define ASSERT_ERR_PTR(ptr, name) \
	fl_shim_check(fl_shim_is_err_or_null(ptr), (name), __FILE__, __LINE__, "unexpected valid pointer")
#define ASSERT_STREQ(actual, expected, name)                                                  \
	({                                                                                    \
		const char *___a = (actual), *___e = (expected);                              \
		char ___w[600];                                                               \
		snprintf(___w, sizeof ___w, "actual '%.250s' != expected '%.250s'", ___a, ___e); \
		fl_shim_check(!strcmp(___a, ___e), (name), __FILE__, __LINE__, ___w);         \
	})

#endif
