/* kernbench-like unit 13: compiled in the L2 guest by cc1 + as (scripts/overcommit/run) */
struct s0 { int a[16]; long b; };
static int h0(struct s0 *p, int n)
{
	int t = 0;
	for (int i = 0; i < n && i < 16; i++)
		t += p->a[i] * (i ^ 13);
	return t + (int)p->b;
}
long u13_f0(long x)
{
	struct s0 s = { {0}, x };
	long r = 0;
	for (int k = 0; k < 16; k++) {
		s.a[k] = (int)(x >> (k & 7)) + k * 1;
		r ^= h0(&s, k) * (k + 1);
	}
	switch (x & 3) {
	case 0: r += 3; break;
	case 1: r *= 7; break;
	default: r -= 13;
	}
	return r;
}
struct s1 { int a[16]; long b; };
static int h1(struct s1 *p, int n)
{
	int t = 0;
	for (int i = 0; i < n && i < 16; i++)
		t += p->a[i] * (i ^ 14);
	return t + (int)p->b;
}
long u13_f1(long x)
{
	struct s1 s = { {0}, x };
	long r = 0;
	for (int k = 0; k < 16; k++) {
		s.a[k] = (int)(x >> (k & 7)) + k * 2;
		r ^= h1(&s, k) * (k + 1);
	}
	switch (x & 3) {
	case 0: r += 3; break;
	case 1: r *= 7; break;
	default: r -= 13;
	}
	return r;
}
struct s2 { int a[16]; long b; };
static int h2(struct s2 *p, int n)
{
	int t = 0;
	for (int i = 0; i < n && i < 16; i++)
		t += p->a[i] * (i ^ 15);
	return t + (int)p->b;
}
long u13_f2(long x)
{
	struct s2 s = { {0}, x };
	long r = 0;
	for (int k = 0; k < 16; k++) {
		s.a[k] = (int)(x >> (k & 7)) + k * 3;
		r ^= h2(&s, k) * (k + 1);
	}
	switch (x & 3) {
	case 0: r += 3; break;
	case 1: r *= 7; break;
	default: r -= 13;
	}
	return r;
}
