// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ebizzy-like: a memory-allocation workload in the spirit of ebizzy (the
 * benchmark of seeds 000 and 003), written for pvlock's nested lab.
 *
 * THREADS threads run for SECONDS seconds. One "record" is: map a fresh
 * anonymous CHUNK (mmap), fill it from a random chunk of a shared,
 * read-only pool (page faults: the page allocator's zone locks, the mm's
 * page-table lock and mmap_lock), search it for a random key, and unmap it
 * (munmap: mmap_lock for writing and a TLB shootdown IPI to every CPU that
 * ran the process). Those are the kernel spinlocks and IPIs that suffer
 * when a vCPU holding them is preempted. Prints the total records/s.
 *
 * Usage: ebizzy-like [-t THREADS] [-s SECONDS] [-c CHUNK_KIB] [-n POOL_CHUNKS]
 * Output: records=N seconds=S threads=T records_per_s=R
 * Build: gcc -O2 -static -pthread (the L2 initramfs has no libc).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static size_t chunk_bytes = 64 * 1024;
static unsigned int pool_chunks = 16;
static uint64_t **pool;
static volatile int stop;

struct worker {
	pthread_t tid;
	uint64_t seed;
	unsigned long records;
	int failed;
};

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64: cheap, and every thread has its own state */
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t words = chunk_bytes / sizeof(uint64_t);

	while (!stop) {
		const uint64_t *src = pool[next_rand(&w->seed) % pool_chunks];
		uint64_t key = src[next_rand(&w->seed) % words];
		uint64_t *buf;
		size_t i;

		buf = mmap(NULL, chunk_bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED) {
			w->failed = errno;
			return NULL;
		}
		memcpy(buf, src, chunk_bytes);
		for (i = 0; i < words && buf[i] != key; i++)
			;
		if (i == words) {
			/* the key came from this chunk: a miss is a bug */
			w->failed = -1;
			munmap(buf, chunk_bytes);
			return NULL;
		}
		munmap(buf, chunk_bytes);
		w->records++;
	}
	return NULL;
}

static unsigned long arg_ul(const char *opt, const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "ebizzy-like: %s wants a number in [%lu, %lu], not '%s'\n",
			opt, lo, hi, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int threads = ncpu > 0 ? (unsigned int)ncpu : 1;
	unsigned int seconds = 3, i;
	unsigned long total = 0;
	struct worker *ws;
	double t0, t1;
	int opt, failed = 0;

	while ((opt = getopt(argc, argv, "t:s:c:n:")) != -1) {
		switch (opt) {
		case 't': threads = arg_ul("-t", optarg, 1, 1024); break;
		case 's': seconds = arg_ul("-s", optarg, 1, 3600); break;
		case 'c': chunk_bytes = arg_ul("-c", optarg, 4, 65536) * 1024; break;
		case 'n': pool_chunks = arg_ul("-n", optarg, 1, 4096); break;
		default:
			fprintf(stderr, "usage: ebizzy-like [-t THREADS] [-s SECONDS] "
				"[-c CHUNK_KIB] [-n POOL_CHUNKS]\n");
			return 2;
		}
	}

	pool = calloc(pool_chunks, sizeof(*pool));
	ws = calloc(threads, sizeof(*ws));
	if (!pool || !ws) {
		perror("ebizzy-like: calloc");
		return 1;
	}
	for (i = 0; i < pool_chunks; i++) {
		uint64_t s = 0x9e3779b97f4a7c15ULL * (i + 1);
		size_t j;

		pool[i] = malloc(chunk_bytes);
		if (!pool[i]) {
			perror("ebizzy-like: malloc");
			return 1;
		}
		for (j = 0; j < chunk_bytes / sizeof(uint64_t); j++)
			pool[i][j] = next_rand(&s);
	}

	t0 = now();
	for (i = 0; i < threads; i++) {
		ws[i].seed = 0x2545f4914f6cdd1dULL ^ ((uint64_t)i << 32 | (i + 1));
		if (pthread_create(&ws[i].tid, NULL, work, &ws[i])) {
			perror("ebizzy-like: pthread_create");
			return 1;
		}
	}
	sleep(seconds);
	stop = 1;
	for (i = 0; i < threads; i++) {
		pthread_join(ws[i].tid, NULL);
		total += ws[i].records;
		if (ws[i].failed) {
			fprintf(stderr, "ebizzy-like: thread %u failed (%d)\n", i, ws[i].failed);
			failed = 1;
		}
	}
	t1 = now();
	printf("records=%lu seconds=%.3f threads=%u records_per_s=%.1f\n",
	       total, t1 - t0, threads, total / (t1 - t0));
	return failed;
}
