/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * pvlock: a minimal test runner for the user-space tests. TAP lines
 * ("ok N - name" / "not ok N - name"), then "N passed, N failed" alone on the
 * last line, which CI reads. Tests register with TEST(name) and fail with
 * EXPECT(cond, fmt, ...), which records the failure and goes on.
 *
 * Usage: <binary> [substring]   runs the tests whose name contains substring.
 */
#ifndef PVLOCK_SELFTESTS_HARNESS_H
#define PVLOCK_SELFTESTS_HARNESS_H

#include <stdio.h>
#include <string.h>

namespace harness {

struct Test {
	const char *name;
	void (*fn)();
};

inline Test tests[256];
inline int nr_tests;
inline int current_failures;

struct Register {
	Register(const char *name, void (*fn)()) { tests[nr_tests++] = { name, fn }; }
};

inline int run_all(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : nullptr;
	int passed = 0, failed = 0, n = 0;

	for (int i = 0; i < nr_tests; i++)
		if (!filter || strstr(tests[i].name, filter))
			n++;
	printf("TAP version 13\n1..%d\n", n);
	n = 0;
	for (int i = 0; i < nr_tests; i++) {
		if (filter && !strstr(tests[i].name, filter))
			continue;
		current_failures = 0;
		tests[i].fn();
		n++;
		if (current_failures) {
			printf("not ok %d - %s\n", n, tests[i].name);
			failed++;
		} else {
			printf("ok %d - %s\n", n, tests[i].name);
			passed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

} /* namespace harness */

#define TEST_CAT2(a, b) a##b
#define TEST_CAT(a, b) TEST_CAT2(a, b)
#define TEST(name)                                                              \
	static void TEST_CAT(test_fn_, __LINE__)();                             \
	static harness::Register TEST_CAT(test_reg_, __LINE__)(name,            \
							  TEST_CAT(test_fn_, __LINE__)); \
	static void TEST_CAT(test_fn_, __LINE__)()

#define EXPECT(cond, ...)                                                       \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("#   %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			harness::current_failures++;                            \
		}                                                               \
	} while (0)

#include <stdlib.h>
#include <sys/mman.h>

namespace harness {

/*
 * size bytes of zeroed memory at the fixed address at, so that a simulator
 * seed (whose schedule depends on where hashed lock words lie) replays the
 * same in every execution; anywhere if the address is taken, with a note
 * that seeds then replay within this execution only.
 */
static inline void *fixed_mapping(void *at, unsigned long size, const char *who)
{
	size = (size + 4095) & ~4095UL;
	void *p = mmap(at, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED || p != at) {
		fprintf(stderr, "%s: run state not at %p: seeds replay within "
			"this execution only\n", who, at);
		if (p == MAP_FAILED)
			p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			abort();
	}
	return p;
}

} /* namespace harness */

#endif /* PVLOCK_SELFTESTS_HARNESS_H */
