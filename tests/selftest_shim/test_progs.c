/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The shim's runner: test__start_subtest and a main() that runs the tests
 * listed in FL_SHIM_TESTS (a generated file of `FL_TEST(name)` lines), one
 * after the other as test_progs does, and prints a test_progs-like summary.
 * Exit 0 when every assertion held.
 */
#include "test_progs.h"

struct test_env env;

bool test__start_subtest(const char *name)
{
	env.subtest = name;
	env.subtests++;
	return true;
}

#define FL_TEST(name) void test_##name(void);
#include FL_SHIM_TESTS
#undef FL_TEST

int main(void)
{
	int tests = 0, failed = 0;
#define FL_TEST(name)                                                                          \
	do {                                                                                   \
		int before = env.fails;                                                        \
		env.test = #name;                                                              \
		env.subtest = NULL;                                                            \
		test_##name();                                                                 \
		tests++;                                                                       \
		failed += env.fails != before;                                                 \
		printf("#%-3d %-50s:%s\n", tests, #name, env.fails != before ? "FAIL" : "OK"); \
	} while (0);
#include FL_SHIM_TESTS
#undef FL_TEST
	printf("Summary: %d/%d PASSED, %d FAILED (%d subtests, %d assertions)\n", tests - failed, tests, failed,
	       env.subtests, env.asserts);
	return failed ? 1 : 0;
}
