// SPDX-License-Identifier: GPL-2.0-only
// The one file of coverage_unobserved_test under sanitizer coverage (its
// counters are all the binary has): a function with a few edges.
int branchy(int x)
{
	if (x > 3)
		return x * 2;
	if (x < -2)
		return -x;
	return x + 1;
}
