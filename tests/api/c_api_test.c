/*
 * c_api_test.c — the public C API (softwrap.h) exercised from C11.
 *
 * Compiled as C, so it also proves the header is valid C.  Every function of
 * softwrap.h is called and its result asserted; then each documented error
 * is provoked and its code checked: create over an existing file, foreign,
 * truncated and corrupted files, misuse of wraps, out-of-pool and
 * misaligned accesses, a full heap, a wrap larger than its log lane, and
 * closing a pool with an open wrap.  The functional part runs once per
 * engine (the engine a pool really got is read back with
 * sw_pool_engine_name, so SOFTWRAP_ENGINE in the environment is honoured).
 *
 * sw_errno() is the code of the thread's *last failure* and is not cleared
 * by successes, so before provoking an error the test first provokes a
 * different one (prime_errno) and then checks the code changed to the
 * expected one.  Prints "N passed, M failed"; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "softwrap/softwrap.h"

static int g_passed, g_failed;
static char g_dir[512];

/* Records one assertion; prints the failure with the library's error. */
static int record(int ok, const char *text, const char *file, int line, const char *func) {
  if (ok) {
    g_passed++;
  } else {
    g_failed++;
    fprintf(stderr, "%s:%d: %s: CHECK(%s) failed (sw_errno=%s, sw_errormsg=\"%s\")\n", file, line, func, text,
            sw_strerror(sw_errno()), sw_errormsg());
  }
  return ok;
}
/* Each evaluates its argument exactly once (arguments have side effects). */
#define CHECK(cond) ((void)record(!!(cond), #cond, __FILE__, __LINE__, __func__))
#define CHECK_EQ_U64(a, b)                                                                   \
  do {                                                                                       \
    uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                         \
    if (!record(a_ == b_, #a " == " #b, __FILE__, __LINE__, __func__))                       \
      fprintf(stderr, "  %llu != %llu\n", (unsigned long long)a_, (unsigned long long)b_);  \
  } while (0)
/* Fatal precondition of the rest of a test function. */
#define REQUIRE(cond)                                                  \
  do {                                                                 \
    if (!record(!!(cond), #cond, __FILE__, __LINE__, __func__)) return; \
  } while (0)

#define MIB ((size_t)1 << 20)
#define POOL_SIZE (16 * MIB)

static const char *path_in_dir(const char *name, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s", g_dir, name);
  return buf;
}

static sw_config config_for(sw_engine_kind engine) {
  sw_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.engine = engine;
  return cfg;
}

static const char *engine_label(sw_engine_kind k) {
  switch (k) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap-local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_UNDO_THEMIS: return "undo-themis";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

/* Provokes a failure with a code other than `not_this`, so that a later
 * check of sw_errno() proves the call under test set it. */
static void prime_errno(sw_pool *pool, int not_this) {
  static uint64_t word;
  if (not_this != SW_ERANGE) {
    (void)sw_load64_slow(pool, &word); /* DRAM address: SW_ERANGE */
  } else {
    (void)sw_load64_slow(pool, (char *)sw_pool_base(pool) + 4); /* misaligned: SW_EINVAL */
  }
}

/* The same without a pool: opening a path in a missing directory. */
static void prime_errno_nopool(int not_this) {
  char p[600];
  snprintf(p, sizeof p, "%s/no-such-dir/x.pool", g_dir);
  (void)sw_pool_open(p, NULL);
  if (sw_errno() == not_this || sw_errno() == 0) (void)sw_pool_create(p, 1, NULL);
}

static int read_file(const char *path, unsigned char **data, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *data = malloc(n > 0 ? (size_t)n : 1);
  *len = fread(*data, 1, (size_t)n, f);
  fclose(f);
  return 0;
}

static int write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, len, f);
  fclose(f);
  return w == len ? 0 : -1;
}

/* True if the file at path holds exactly (data, len). */
static int file_equals(const char *path, const unsigned char *data, size_t len) {
  unsigned char *now;
  size_t n;
  if (read_file(path, &now, &n) != 0) return 0;
  int eq = n == len && memcmp(now, data, len) == 0;
  free(now);
  return eq;
}

/* ------------------------------------------------------------ functional */

struct test_root {
  uint64_t w64[4];
  uint32_t w32[4];
  uint16_t w16[4];
  uint8_t w8[8];
  uint64_t block_off;   /* offset of a committed sw_pzalloc'd block */
  uint64_t counter;
  unsigned char bytes[1024];
  uint64_t slots[4096]; /* random-store oracle region */
};

static void test_strerror(void) {
  static const struct { int code; const char *name; } names[] = {
      {SW_EINVAL, "SW_EINVAL"},   {SW_EIO, "SW_EIO"},         {SW_ENOMEM, "SW_ENOMEM"},
      {SW_ENOSPC, "SW_ENOSPC"},   {SW_ECORRUPT, "SW_ECORRUPT"}, {SW_EFOREIGN, "SW_EFOREIGN"},
      {SW_EVERSION, "SW_EVERSION"}, {SW_ENOWRAP, "SW_ENOWRAP"}, {SW_ETOOBIG, "SW_ETOOBIG"},
      {SW_ENOTSUP, "SW_ENOTSUP"}, {SW_EBUSY, "SW_EBUSY"},     {SW_EEXIST, "SW_EEXIST"},
      {SW_ERANGE, "SW_ERANGE"},   {SW_EABORTED, "SW_EABORTED"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *s = sw_strerror(names[i].code);
    CHECK(s != NULL && strcmp(s, names[i].name) == 0);
  }
  CHECK(sw_strerror(SW_OK) != NULL);
  CHECK(sw_strerror(-12345) != NULL);
  CHECK(sw_errormsg() != NULL);
}

/* Everything a well-behaved program does, on one engine. */
static void test_lifecycle(sw_engine_kind engine, uint32_t flags) {
  char path[600];
  path_in_dir("lifecycle.pool", path, sizeof path);
  unlink(path);
  sw_config cfg = config_for(engine);
  cfg.flags = flags;
  cfg.alias_entries = 1024; /* softwrap: retire every 128 entries */
  sw_pool *p = sw_pool_create(path, POOL_SIZE, &cfg);
  REQUIRE(p != NULL);
  const char *ename = sw_pool_engine_name(p);
  REQUIRE(ename != NULL);
  const int atomic = strcmp(ename, "nonatomic") != 0;
  const char *env_engine = getenv("SOFTWRAP_ENGINE");
  if (engine != SW_ENGINE_DEFAULT && (!env_engine || !*env_engine))
    CHECK(strcmp(ename, engine_label(engine)) == 0);
  CHECK(sw_pool_medium_name(p) != NULL && sw_pool_medium_name(p)[0] != '\0');
  {
    const char *why = NULL;
    const int wcl = sw_pool_wcl(p, &why);
    CHECK(wcl == 0 || wcl == 1 || wcl == 2);
    CHECK(why != NULL && why[0] != '\0');
  }
  CHECK(sw_pool_base(p) != NULL);
  CHECK_EQ_U64(sw_pool_size(p), POOL_SIZE);

  /* Root: zeroed, stable, bounded; created in the caller's wrap, it goes
   * away with that wrap's abort. */
  CHECK(sw_pool_root(p, 0) == NULL);
  if (atomic) {
    CHECK(sw_wrap_open(p) == 0);
    CHECK(sw_pool_root(p, 4096) != NULL);
    CHECK(sw_wrap_abort(p) == 0);
    CHECK(sw_pool_root(p, 0) == NULL);
  }
  struct test_root *r = sw_pool_root(p, sizeof *r);
  REQUIRE(r != NULL);
  CHECK(((uintptr_t)r & 15) == 0);
  CHECK(sw_pool_root(p, sizeof *r) == r);
  CHECK(sw_pool_root(p, 0) == r);
  CHECK(sw_pool_root(p, 16) == r);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pool_root(p, sizeof *r + 4096) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  {
    unsigned char zero[sizeof *r], got[sizeof *r];
    memset(zero, 0, sizeof zero);
    memset(got, 0xff, sizeof got);
    CHECK(sw_read(p, got, r, sizeof *r) == 0);
    CHECK(memcmp(zero, got, sizeof zero) == 0);
  }

  /* Offsets. */
  uint64_t root_off = sw_pool_offset(p, r);
  CHECK(root_off > 0 && root_off < POOL_SIZE);
  CHECK(sw_pool_ptr(p, root_off) == (void *)r);
  CHECK_EQ_U64(sw_pool_offset(p, NULL), 0);
  CHECK(sw_pool_ptr(p, 0) == NULL);
  CHECK((char *)sw_pool_base(p) + root_off == (char *)r);

  /* A nested wrap of every store width; loads see own stores. */
  CHECK(sw_pool_stats_reset(p) == 0);
  CHECK(sw_wrap_depth(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_wrap_depth(p) == 1);
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_wrap_depth(p) == 2);
  sw_store64(p, &r->w64[1], 0x0123456789abcdefull);
  sw_store32(p, &r->w32[2], 0xdeadbeefu);
  sw_store16(p, &r->w16[3], 0xbeefu);
  sw_store8(p, &r->w8[5], 0xa5u);
  CHECK_EQ_U64(sw_load64(p, &r->w64[1]), 0x0123456789abcdefull);
  CHECK_EQ_U64(sw_load32(p, &r->w32[2]), 0xdeadbeefu);
  CHECK_EQ_U64(sw_load16(p, &r->w16[3]), 0xbeefu);
  CHECK_EQ_U64(sw_load8(p, &r->w8[5]), 0xa5u);
  CHECK_EQ_U64(sw_load8(p, &r->w8[4]), 0);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_wrap_depth(p) == 1);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_wrap_depth(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &r->w64[1]), 0x0123456789abcdefull);
  CHECK_EQ_U64(sw_load32(p, &r->w32[2]), 0xdeadbeefu);
  {
    sw_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK(sw_pool_stats(p, &s) == 0);
    CHECK(s.wraps >= 1);
    CHECK(s.stores >= 4);
    /* Inline loads that read home are not counted unless asked for. */
    if (flags & SW_CONFIG_COUNT_LOADS) CHECK(s.loads >= 6);
    CHECK(s.aborts == 0);
    if (atomic) CHECK(s.fences >= 1);
  }

  /* Byte ranges: unaligned write/read, memset. */
  {
    unsigned char src[300], dst[300];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 7 + 1);
    CHECK(sw_wrap_open(p) == 0);
    CHECK(sw_write(p, r->bytes + 3, src, sizeof src) == 0);
    CHECK(sw_memset(p, r->bytes + 400, 0xab, 77) == 0);
    memset(dst, 0, sizeof dst);
    CHECK(sw_read(p, dst, r->bytes + 3, sizeof dst) == 0);
    CHECK(memcmp(src, dst, sizeof src) == 0);
    CHECK(sw_wrap_close(p) == 0);
    memset(dst, 0, sizeof dst);
    CHECK(sw_read(p, dst, r->bytes + 3, sizeof dst) == 0);
    CHECK(memcmp(src, dst, sizeof src) == 0);
    unsigned char m[79];
    CHECK(sw_read(p, m, r->bytes + 399, sizeof m) == 0);
    CHECK(m[0] == 0 && m[1] == 0xab && m[77] == 0xab && m[78] == 0);
    /* sw_peek sees the same bytes (at home or in scratch). */
    {
      unsigned char scratch[79];
      const unsigned char *pk = (const unsigned char *)sw_peek(p, r->bytes + 399, sizeof scratch, scratch);
      CHECK(pk != NULL && (pk == r->bytes + 399 || pk == scratch) && memcmp(pk, m, sizeof m) == 0);
    }
    /* Word loads see bytes written by sw_write and vice versa. */
    uint64_t w;
    memcpy(&w, src + 5, 8); /* r->bytes + 8 is 8-aligned: bytes is at offset 80 */
    CHECK_EQ_U64(sw_load64(p, r->bytes + 8), w);
  }

  /* Abort: discards the whole wrap whatever the depth. */
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  sw_store64(p, &r->w64[1], 42);
  sw_store8(p, &r->w8[0], 7);
  {
    int rc = sw_wrap_abort(p);
    CHECK(rc == (atomic ? 0 : SW_ENOTSUP));
  }
  CHECK(sw_wrap_depth(p) == 0);
  if (atomic) {
    CHECK_EQ_U64(sw_load64(p, &r->w64[1]), 0x0123456789abcdefull);
    CHECK_EQ_U64(sw_load8(p, &r->w8[0]), 0);
    sw_stats s;
    CHECK(sw_pool_stats(p, &s) == 0);
    CHECK(s.aborts >= 1);
  } else {
    CHECK_EQ_U64(sw_load64(p, &r->w64[1]), 42);
    sw_store64(p, &r->w64[1], 0x0123456789abcdefull);
    sw_store8(p, &r->w8[0], 0);
  }

  /* A store outside a wrap is a wrap of its own. */
  sw_store64(p, &r->w64[3], 99);
  CHECK(sw_wrap_depth(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &r->w64[3]), 99);

  /* Allocation. */
  CHECK(sw_wrap_open(p) == 0);
  void *a = sw_pmalloc(p, 100);
  CHECK(a != NULL);
  CHECK(((uintptr_t)a & 15) == 0);
  CHECK(sw_pusable_size(p, a) >= 100);
  unsigned char *z = sw_pzalloc(p, 5000);
  REQUIRE(z != NULL);
  CHECK(sw_pusable_size(p, z) >= 5000);
  {
    unsigned char buf[5000];
    memset(buf, 0x55, sizeof buf);
    CHECK(sw_read(p, buf, z, sizeof buf) == 0);
    int allzero = 1;
    for (size_t i = 0; i < sizeof buf; i++) allzero &= buf[i] == 0;
    CHECK(allzero);
  }
  sw_store64(p, z, 0xfeedull);
  sw_store64(p, &r->block_off, sw_pool_offset(p, z));
  CHECK(sw_pfree(p, a) == 0);
  CHECK(sw_pfree(p, NULL) == 0);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pfree(p, &r->w64[2]) == SW_EINVAL); /* not an allocation */
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pmalloc(p, 0) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_pusable_size(p, z) >= 5000);

  /* Many small wraps against a DRAM oracle (forces alias retirement). */
  {
    static uint64_t oracle[4096];
    memset(oracle, 0, sizeof oracle);
    uint64_t x = 88172645463325252ull;
    int mismatches = 0;
    for (int w = 0; w < 600; w++) {
      if (sw_wrap_open(p) != 0) { mismatches++; break; }
      for (int k = 0; k < 8; k++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t i = (size_t)(x % 4096);
        sw_store64(p, &r->slots[i], x);
        oracle[i] = x;
      }
      sw_store64(p, &r->counter, (uint64_t)w + 1);
      if (sw_wrap_close(p) != 0) { mismatches++; break; }
      size_t probe = (size_t)((x >> 20) % 4096);
      if (sw_load64(p, &r->slots[probe]) != oracle[probe]) mismatches++;
    }
    CHECK(mismatches == 0);
    /* quiesce: plain reads of home locations now see committed values. */
    CHECK(sw_pool_quiesce(p) == 0);
    CHECK(memcmp((const void *)r->slots, oracle, sizeof oracle) == 0);
    CHECK_EQ_U64(r->counter, 600);
    CHECK_EQ_U64(r->w64[1], 0x0123456789abcdefull);

    CHECK(sw_pool_stats_reset(p) == 0);
    sw_stats s;
    CHECK(sw_pool_stats(p, &s) == 0);
    CHECK_EQ_U64(s.wraps, 0);
    CHECK_EQ_U64(s.stores, 0);

    /* Everything survives close and reopen. */
    CHECK(sw_pool_close(p) == 0);
    p = sw_pool_open(path, &cfg);
    REQUIRE(p != NULL);
    sw_recovery_report rep;
    memset(&rep, 0xff, sizeof rep);
    CHECK(sw_pool_recovery_report(p, &rep) == 0);
    CHECK(rep.undo_wraps_rolled_back == 0); /* clean close: nothing to undo */
    CHECK(rep.torn_frames_skipped < (1ull << 40));
    r = sw_pool_root(p, 0);
    REQUIRE(r != NULL);
    int bad = 0;
    for (size_t i = 0; i < 4096; i++) bad += sw_load64(p, &r->slots[i]) != oracle[i];
    CHECK(bad == 0);
  }
  CHECK_EQ_U64(sw_load64(p, &r->counter), 600);
  CHECK_EQ_U64(sw_load64(p, &r->w64[1]), 0x0123456789abcdefull);
  CHECK_EQ_U64(sw_load32(p, &r->w32[2]), 0xdeadbeefu);
  CHECK_EQ_U64(sw_load16(p, &r->w16[3]), 0xbeefu);
  CHECK_EQ_U64(sw_load8(p, &r->w8[5]), 0xa5u);
  CHECK_EQ_U64(sw_load64(p, &r->w64[3]), 99);
  {
    void *blk = sw_pool_ptr(p, sw_load64(p, &r->block_off));
    CHECK(blk != NULL);
    CHECK(sw_pusable_size(p, blk) >= 5000);
    CHECK_EQ_U64(sw_load64(p, blk), 0xfeedull);
    CHECK(sw_wrap_open(p) == 0);
    CHECK(sw_pfree(p, blk) == 0);
    sw_store64(p, &r->block_off, 0);
    CHECK(sw_wrap_close(p) == 0);
  }
  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

/* ----------------------------------------------------------------- errors */

static void test_create_errors(void) {
  char path[600];
  path_in_dir("exists.pool", path, sizeof path);
  unlink(path);
  sw_pool *p = sw_pool_create(path, POOL_SIZE, NULL);
  REQUIRE(p != NULL);
  uint64_t *root = sw_pool_root(p, 64);
  REQUIRE(root != NULL);
  sw_store64(p, root, 1234);
  CHECK(sw_pool_close(p) == 0);

  /* Over an existing file: refused, file untouched. */
  unsigned char *before;
  size_t before_len;
  REQUIRE(read_file(path, &before, &before_len) == 0);
  CHECK(sw_pool_create(path, POOL_SIZE, NULL) == NULL);
  CHECK(sw_errno() == SW_EEXIST);
  CHECK(sw_errormsg()[0] != '\0');
  CHECK(file_equals(path, before, before_len));
  free(before);

  /* Too small, and a bad config. */
  char small[600];
  path_in_dir("small.pool", small, sizeof small);
  unlink(small);
  CHECK(sw_pool_create(small, 1 * MIB, NULL) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  sw_config bad = config_for(SW_ENGINE_DEFAULT);
  bad.alias_entries = 1000; /* not a power of two */
  prime_errno_nopool(SW_EINVAL);
  CHECK(sw_pool_create(small, POOL_SIZE, &bad) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  unlink(small);

  /* SW_CONFIG_OVERWRITE replaces the pool with a fresh one. */
  sw_config ow = config_for(SW_ENGINE_DEFAULT);
  ow.flags = SW_CONFIG_OVERWRITE;
  p = sw_pool_create(path, POOL_SIZE, &ow);
  REQUIRE(p != NULL);
  CHECK(sw_pool_root(p, 0) == NULL);
  CHECK(sw_pool_close(p) == 0);

  /* Opening a file that does not exist. */
  char missing[600];
  path_in_dir("missing.pool", missing, sizeof missing);
  CHECK(sw_pool_open(missing, NULL) == NULL);
  CHECK(sw_errormsg()[0] != '\0');
  unlink(path);
}

/* undo-themis from C: refused on this machine's medium without the opt-in
 * (and no file left), the paper's Ideal with it: no non-temporal ->
 * temporal fence issued, each one counted as elided, and the distances
 * between them in the histograms. */
static void test_undo_themis(void) {
  char path[600];
  path_in_dir("themis.pool", path, sizeof path);
  unlink(path);
  sw_config c = config_for(SW_ENGINE_UNDO_THEMIS);
  prime_errno_nopool(SW_ENOTSUP);
  CHECK(sw_pool_create(path, POOL_SIZE, &c) == NULL);
  CHECK(sw_errno() == SW_ENOTSUP);
  CHECK(strstr(sw_errormsg(), "SW_CONFIG_THEMIS_IDEAL") != NULL);
  CHECK(access(path, F_OK) != 0);
  /* Without write-combined logging (on by default on the msync medium),
   * which would skip the stores of unchanged values (w + k == 0) and their
   * fences: every store is counted here. */
  c.flags = SW_CONFIG_THEMIS_IDEAL | SW_CONFIG_NO_WCL;
  sw_pool *p = sw_pool_create(path, POOL_SIZE, &c);
  REQUIRE(p != NULL);
  CHECK(strcmp(sw_pool_engine_name(p), "undo-themis") == 0);
  CHECK(sw_pool_wcl(p, NULL) == 0);
  uint64_t *a = sw_pool_root(p, 64 * sizeof(uint64_t));
  REQUIRE(a != NULL);
  CHECK(sw_pool_stats_reset(p) == 0);
  for (int w = 0; w < 10; w++) {
    CHECK(sw_wrap_open(p) == 0);
    for (int k = 0; k < 4; k++) sw_store64(p, &a[k * 8], (uint64_t)(w + k));
    CHECK(sw_wrap_close(p) == 0);
  }
  sw_stats s;
  memset(&s, 0xff, sizeof s);
  CHECK(sw_pool_stats(p, &s) == 0);
  CHECK_EQ_U64(s.fences_log, 0);
  CHECK_EQ_U64(s.fences_elided, 40);
  CHECK_EQ_U64(s.fences_data, 10);
  CHECK_EQ_U64(s.fences_commit, 10);
  CHECK_EQ_U64(s.fences, s.fences_commit + s.fences_log + s.fences_retire + s.fences_data + s.fences_other);
  CHECK_EQ_U64(s.removable_gaps, 39);
  uint64_t in_buckets = 0;
  for (unsigned b = 0; b < SW_GAP_BUCKETS; b++) in_buckets += s.removable_gap_events[b];
  CHECK_EQ_U64(in_buckets, 39);
  CHECK_EQ_U64(sw_gap_bucket_low(8), 8);
  CHECK_EQ_U64(sw_gap_bucket_low(12), 16);
  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

/* Creates a pool with a committed root value and returns its bytes. */
static int make_pool_image(const char *path, unsigned char **img, size_t *len) {
  unlink(path);
  sw_pool *p = sw_pool_create(path, POOL_SIZE, NULL);
  if (!p) return -1;
  uint64_t *root = sw_pool_root(p, 64);
  if (!root) return -1;
  sw_store64(p, root, 777);
  if (sw_pool_close(p) != 0) return -1;
  return read_file(path, img, len);
}

static void test_open_refuses_bad_files(void) {
  char path[600];
  path_in_dir("bad.pool", path, sizeof path);

  /* A foreign file. */
  size_t n = POOL_SIZE;
  unsigned char *junk = malloc(n);
  REQUIRE(junk != NULL);
  for (size_t i = 0; i < n; i++) junk[i] = (unsigned char)("not a pool\n"[i % 11]);
  REQUIRE(write_file(path, junk, n) == 0);
  prime_errno_nopool(SW_EFOREIGN);
  CHECK(sw_pool_open(path, NULL) == NULL);
  CHECK(sw_errno() == SW_EFOREIGN);
  CHECK(file_equals(path, junk, n));
  free(junk);

  /* An empty file is foreign too, or at least refused. */
  REQUIRE(write_file(path, "", 0) == 0);
  CHECK(sw_pool_open(path, NULL) == NULL);
  CHECK(sw_errno() == SW_EFOREIGN || sw_errno() == SW_ECORRUPT);

  unsigned char *img;
  size_t len;
  REQUIRE(make_pool_image(path, &img, &len) == 0);
  REQUIRE(len == POOL_SIZE);

  /* Truncated to half its size. */
  REQUIRE(write_file(path, img, len / 2) == 0);
  prime_errno_nopool(SW_ECORRUPT);
  CHECK(sw_pool_open(path, NULL) == NULL);
  CHECK(sw_errno() == SW_ECORRUPT);
  CHECK(file_equals(path, img, len / 2));

  /* One flipped byte in the header (inside the UUID, covered by the
   * checksum). */
  img[40] ^= 0x01;
  REQUIRE(write_file(path, img, len) == 0);
  prime_errno_nopool(SW_ECORRUPT);
  CHECK(sw_pool_open(path, NULL) == NULL);
  CHECK(sw_errno() == SW_ECORRUPT);
  CHECK(file_equals(path, img, len));

  /* The intact image still opens and holds its value. */
  img[40] ^= 0x01;
  REQUIRE(write_file(path, img, len) == 0);
  sw_pool *p = sw_pool_open(path, NULL);
  REQUIRE(p != NULL);
  uint64_t *root = sw_pool_root(p, 0);
  CHECK(root != NULL && sw_load64(p, root) == 777);
  CHECK(sw_pool_close(p) == 0);
  free(img);
  unlink(path);
}

static void test_misuse(void) {
  char path[600];
  path_in_dir("misuse.pool", path, sizeof path);
  unlink(path);
  sw_pool *p = sw_pool_create(path, POOL_SIZE, NULL);
  REQUIRE(p != NULL);
  uint64_t *root = sw_pool_root(p, 256);
  REQUIRE(root != NULL);
  sw_store64(p, &root[0], 0x1111111111111111ull);
  sw_store64(p, &root[1], 0x2222222222222222ull);

  /* Close or abort without an open wrap. */
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_wrap_close(p) == SW_ENOWRAP);
  CHECK(sw_errno() == SW_ENOWRAP);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_wrap_abort(p) == SW_ENOWRAP);
  CHECK(sw_wrap_depth(p) == 0);

  /* Out-of-pool addresses: the library's loads (what the inline ones call,
   * and what a program that cannot inline calls) report them; the inline
   * loads leave that check to strict mode (strict_test) and read the
   * address as a plain load would. */
  uint64_t on_stack = 5;
  prime_errno(p, SW_ERANGE);
  CHECK_EQ_U64(sw_load64_slow(p, &on_stack), 0);
  CHECK(sw_errno() == SW_ERANGE);
  /* After a quiesce no slot is raised, so the inline load is a plain one
   * (with a raised slot it would ask the library: 0 and SW_ERANGE). */
  CHECK(sw_pool_quiesce(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &on_stack), 5);
  prime_errno(p, SW_ERANGE);
  CHECK_EQ_U64(sw_load8_slow(p, (char *)sw_pool_base(p) + sw_pool_size(p)), 0);
  CHECK(sw_errno() == SW_ERANGE);
  prime_errno(p, SW_ERANGE);
  sw_store64(p, &on_stack, 6);
  CHECK(sw_errno() == SW_ERANGE);
  CHECK(on_stack == 5);
  {
    char dst[16];
    CHECK(sw_read(p, dst, (char *)sw_pool_base(p) + sw_pool_size(p) - 8, 16) == SW_ERANGE);
  }

  /* Misaligned loads (the library's: see above) and stores. */
  prime_errno(p, SW_EINVAL);
  CHECK_EQ_U64(sw_load64_slow(p, (char *)root + 4), 0);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  CHECK_EQ_U64(sw_load32_slow(p, (char *)root + 2), 0);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  CHECK_EQ_U64(sw_load16_slow(p, (char *)root + 1), 0);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  sw_store64(p, (char *)root + 4, 0);
  CHECK(sw_errno() == SW_EINVAL);
  CHECK_EQ_U64(sw_load64(p, &root[0]), 0x1111111111111111ull);
  CHECK_EQ_U64(sw_load64(p, &root[1]), 0x2222222222222222ull);

  /* Bad frees and slots. */
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pfree(p, &on_stack) == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pfree(p, (char *)root + 16) == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pmalloc_slot(p, NULL, 64) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_ERANGE);
  CHECK(sw_pmalloc_slot(p, (uint64_t *)&on_stack, 64) == NULL);
  CHECK(sw_errno() == SW_ERANGE);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pzalloc_slot(p, (uint64_t *)((char *)root + 4), 64) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pmalloc(p, 0) == NULL);
  CHECK(sw_errno() == SW_EINVAL);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_wrap_close(p) == SW_ENOWRAP);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_wrap_abort(p) == SW_ENOWRAP);

  /* Closing the pool with a wrap open: refused, pool stays usable. */
  CHECK(sw_wrap_open(p) == 0);
  sw_store64(p, &root[2], 3);
  prime_errno(p, SW_EBUSY);
  CHECK(sw_pool_close(p) == SW_EBUSY);
  CHECK(sw_wrap_depth(p) == 1);
  CHECK(sw_wrap_close(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &root[2]), 3);

  /* A second process cannot open a pool that is open here. */
  pid_t pid = fork();
  if (pid == 0) {
    sw_pool *q = sw_pool_open(path, NULL);
    _exit(q == NULL && sw_errno() == SW_EBUSY ? 0 : 1);
  }
  REQUIRE(pid > 0);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

/* Allocation outside a wrap is a wrap of its own, like a store; the slot
 * forms allocate (or free) and store the offset in one wrap; under
 * SW_CONFIG_REQUIRE_WRAP everything that changes the pool needs a wrap. */
static void test_alloc_outside_wrap(sw_engine_kind engine) {
  char path[600];
  path_in_dir("outside.pool", path, sizeof path);
  sw_config cfg = config_for(engine);
  sw_pool *p = sw_pool_create(path, POOL_SIZE, &cfg);
  REQUIRE(p != NULL);
  uint64_t *root = sw_pool_root(p, 64);
  REQUIRE(root != NULL);
  sw_stats st;
  CHECK(sw_pool_stats(p, &st) == 0);
  const uint64_t wraps0 = st.wraps;

  uint64_t *a = sw_pzalloc(p, 100); /* one wrap: allocate and zero */
  REQUIRE(a != NULL);
  CHECK(sw_wrap_depth(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &a[11]), 0);
  CHECK(sw_pusable_size(p, a) >= 100);
  sw_store64(p, &a[0], 42);
  char *b = sw_pmalloc(p, 100000); /* an extent of whole chunks */
  REQUIRE(b != NULL);
  CHECK(sw_memset(p, b, 0xAB, 100000) == 0);
  CHECK_EQ_U64(sw_load8(p, b + 99999), 0xAB);
  CHECK(sw_pfree(p, b) == 0);
  prime_errno(p, SW_EINVAL);
  CHECK(sw_pfree(p, b) == SW_EINVAL); /* double free */

  /* Slot forms: the block and its offset come and go together. */
  uint64_t *blk = sw_pmalloc_slot(p, &root[0], 48);
  REQUIRE(blk != NULL);
  CHECK_EQ_U64(sw_load64(p, &root[0]), sw_pool_offset(p, blk));
  uint64_t *z = sw_pzalloc_slot(p, &root[1], 5000);
  REQUIRE(z != NULL);
  CHECK_EQ_U64(sw_load64(p, &root[1]), sw_pool_offset(p, z));
  CHECK_EQ_U64(sw_load64(p, &z[624]), 0);
  CHECK(sw_pfree_slot(p, &root[0]) == 0);
  CHECK_EQ_U64(sw_load64(p, &root[0]), 0);
  CHECK(sw_pfree_slot(p, &root[0]) == 0); /* empty slot: nothing to do */
  sw_store64(p, &root[2], 12345);         /* not an allocation */
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_pfree_slot(p, &root[2]) == SW_EINVAL);
  CHECK_EQ_U64(sw_load64(p, &root[2]), 12345); /* the failed free changed nothing */

  /* Inside a caller's wrap, the slot forms join it; an abort takes both back. */
  CHECK(sw_wrap_open(p) == 0);
  uint64_t *c = sw_pmalloc_slot(p, &root[3], 64);
  CHECK(c != NULL);
  CHECK(sw_pfree_slot(p, &root[1]) == 0);
  CHECK(sw_wrap_depth(p) == 1);
  int rc = sw_wrap_abort(p);
  if (strcmp(sw_pool_engine_name(p), "nonatomic") != 0) {
    CHECK(rc == 0);
    CHECK_EQ_U64(sw_load64(p, &root[3]), 0);
    CHECK_EQ_U64(sw_load64(p, &root[1]), sw_pool_offset(p, z));
    CHECK(sw_pusable_size(p, z) >= 5000);
  }
  CHECK(sw_pool_stats(p, &st) == 0);
  CHECK_EQ_U64(st.wraps - wraps0, 10); /* each successful call above outside a wrap was one */

  /* Committed allocations survive a reopen. */
  /* Offsets, not pointers: the reopened pool may be mapped elsewhere. */
  const uint64_t a_off = sw_pool_offset(p, a), z_off = sw_pool_offset(p, z);
  CHECK(sw_pool_close(p) == 0);
  p = sw_pool_open(path, &cfg);
  REQUIRE(p != NULL);
  root = sw_pool_root(p, 0);
  REQUIRE(root != NULL);
  a = sw_pool_ptr(p, a_off);
  CHECK_EQ_U64(sw_load64(p, &a[0]), 42);
  CHECK(sw_pusable_size(p, a) >= 100);
  if (strcmp(sw_pool_engine_name(p), "nonatomic") != 0) {
    CHECK_EQ_U64(sw_load64(p, &root[1]), z_off);
  }
  CHECK(sw_pool_close(p) == 0);

  /* SW_CONFIG_REQUIRE_WRAP: no implicit wraps. */
  cfg.flags = SW_CONFIG_REQUIRE_WRAP;
  p = sw_pool_open(path, &cfg);
  REQUIRE(p != NULL);
  root = sw_pool_root(p, 0);
  prime_errno(p, SW_ENOWRAP);
  sw_store64(p, &root[4], 1);
  CHECK(sw_errno() == SW_ENOWRAP);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_pmalloc(p, 16) == NULL);
  CHECK(sw_errno() == SW_ENOWRAP);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_write(p, &root[4], "x", 1) == SW_ENOWRAP);
  prime_errno(p, SW_ENOWRAP);
  CHECK(sw_pfree(p, a) == SW_ENOWRAP);
  CHECK_EQ_U64(sw_load64(p, &root[4]), 0);
  CHECK(sw_wrap_open(p) == 0);
  sw_store64(p, &root[4], 1);
  CHECK(sw_pmalloc(p, 16) != NULL);
  CHECK(sw_wrap_close(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &root[4]), 1);
  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

static void test_full_pool(void) {
  char path[600];
  path_in_dir("full.pool", path, sizeof path);
  unlink(path);
  sw_config cfg = config_for(SW_ENGINE_DEFAULT);
  cfg.lanes = 4; /* small log: most of the 16 MiB is heap */
  cfg.lane_size = 64 << 10;
  sw_pool *p = sw_pool_create(path, POOL_SIZE, &cfg);
  REQUIRE(p != NULL);
  uint64_t *root = sw_pool_root(p, 64);
  REQUIRE(root != NULL);
  sw_store64(p, &root[0], 0xc0ffeeull);

  /* Allocate in shrinking sizes until the heap refuses even small blocks;
   * each block is stamped with its own offset in the same wrap. */
  static const size_t sizes[] = {1 * MIB, 64 << 10, 4096, 256, 64};
  static uint64_t offs[1 << 16];
  size_t count = 0;
  int saw_enospc = 0;
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    for (;;) {
      if (count == sizeof offs / sizeof offs[0]) break;
      REQUIRE(sw_wrap_open(p) == 0);
      void *b = sw_pmalloc(p, sizes[s]);
      if (!b) {
        saw_enospc += sw_errno() == SW_ENOSPC;
        CHECK(sw_errno() == SW_ENOSPC);
        CHECK(sw_wrap_close(p) == 0); /* the wrap itself is still good */
        break;
      }
      uint64_t off = sw_pool_offset(p, b);
      sw_store64(p, b, off);
      REQUIRE(sw_wrap_close(p) == 0);
      offs[count++] = off;
    }
  }
  CHECK(saw_enospc == (int)(sizeof sizes / sizeof sizes[0]));
  CHECK(count > 8); /* 16 MiB held several 1 MiB blocks at least */
  CHECK_EQ_U64(sw_load64(p, &root[0]), 0xc0ffeeull);
  CHECK(sw_pool_close(p) == 0);

  /* Reopen: committed data intact, every block still live and stamped. */
  p = sw_pool_open(path, &cfg);
  REQUIRE(p != NULL);
  root = sw_pool_root(p, 0);
  REQUIRE(root != NULL);
  CHECK_EQ_U64(sw_load64(p, &root[0]), 0xc0ffeeull);
  size_t bad = 0;
  for (size_t i = 0; i < count; i++) {
    void *b = sw_pool_ptr(p, offs[i]);
    bad += sw_pusable_size(p, b) == 0 || sw_load64(p, b) != offs[i];
  }
  CHECK(bad == 0);
  /* Still full; freeing makes room again. */
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_pmalloc(p, 1 * MIB) == NULL);
  CHECK(sw_errno() == SW_ENOSPC);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  for (size_t i = 0; i < count; i++) CHECK(sw_pfree(p, sw_pool_ptr(p, offs[i])) == 0);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  CHECK(sw_pmalloc(p, 1 * MIB) != NULL);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

/* A wrap whose log does not fit its 64 KiB lane fails as a whole. */
static void test_oversized_wrap(sw_engine_kind engine) {
  char path[600];
  path_in_dir("toobig.pool", path, sizeof path);
  unlink(path);
  sw_config cfg = config_for(engine);
  cfg.lane_size = 64 << 10;
  cfg.lanes = 4;
  cfg.medium = SW_MEDIUM_X86; /* not msync: undo fences once per stored word here */
  sw_pool *p = sw_pool_create(path, POOL_SIZE, &cfg);
  REQUIRE(p != NULL);
  if (strcmp(sw_pool_engine_name(p), "nonatomic") == 0) { /* has no log */
    CHECK(sw_pool_close(p) == 0);
    unlink(path);
    return;
  }
  uint64_t *root = sw_pool_root(p, 64);
  REQUIRE(root != NULL);
  /* 6 MiB of words: their log (16 or 32 bytes per word) exceeds what is
   * left of the 16 MiB pool.  One wrap over its first MiB still commits:
   * 2 MiB of log through 64 KiB lanes, continued in extents. */
  const size_t region_words = (6 * MIB) / 8;
  CHECK(sw_wrap_open(p) == 0);
  uint64_t *region = sw_pmalloc(p, region_words * 8); /* not zeroed: that alone could overflow */
  REQUIRE(region != NULL);
  sw_store64(p, &root[1], sw_pool_offset(p, region));
  sw_store64(p, &root[0], 100);
  CHECK(sw_wrap_close(p) == 0);
  CHECK(sw_wrap_open(p) == 0);
  for (size_t i = 0; i < MIB / 8; i++) sw_store64(p, &region[i], i);
  CHECK(sw_wrap_close(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &region[MIB / 8 - 1]), MIB / 8 - 1);
  static uint64_t before[(6 << 20) / 8];
  for (size_t i = 0; i < region_words; i++) before[i] = sw_load64(p, &region[i]);

  /* 6 MiB of distinct word stores in one wrap: fails at some store. */
  prime_errno(p, SW_ETOOBIG);
  const int primed = sw_errno();
  CHECK(sw_wrap_open(p) == 0);
  sw_store64(p, &root[0], 200);
  int store_err = 0;
  for (size_t i = 0; i < region_words && store_err == 0; i++) {
    sw_store64(p, &region[i], ~before[i]);
    if (sw_errno() != primed) store_err = sw_errno();
  }
  int rc = sw_wrap_close(p);
  CHECK(rc != 0);
  CHECK(rc == SW_EABORTED || store_err == SW_ETOOBIG);
  CHECK(store_err == SW_ETOOBIG);
  CHECK(rc == SW_EABORTED);
  CHECK(sw_wrap_depth(p) == 0);

  /* Nothing of it happened; new wraps work. */
  CHECK_EQ_U64(sw_load64(p, &root[0]), 100);
  size_t changed = 0;
  for (size_t i = 0; i < region_words; i++) changed += sw_load64(p, &region[i]) != before[i];
  CHECK(changed == 0);
  CHECK(sw_wrap_open(p) == 0);
  sw_store64(p, &root[0], 300);
  sw_store64(p, &region[5], 5);
  CHECK(sw_wrap_close(p) == 0);
  CHECK_EQ_U64(sw_load64(p, &root[0]), 300);
  CHECK(sw_pool_close(p) == 0);

  p = sw_pool_open(path, &cfg);
  REQUIRE(p != NULL);
  root = sw_pool_root(p, 0);
  REQUIRE(root != NULL);
  region = sw_pool_ptr(p, sw_load64(p, &root[1]));
  CHECK_EQ_U64(sw_load64(p, &root[0]), 300);
  CHECK_EQ_U64(sw_load64(p, &region[5]), 5);
  CHECK_EQ_U64(sw_load64(p, &region[6]), before[6]);
  CHECK(sw_pool_close(p) == 0);
  unlink(path);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/sw-capi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 2;
  }

  test_strerror();
  static const sw_engine_kind engines[] = {SW_ENGINE_DEFAULT, SW_ENGINE_SOFTWRAP, SW_ENGINE_SOFTWRAP_LOCAL,
                                           SW_ENGINE_UNDO, SW_ENGINE_NONATOMIC};
  for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
    int before = g_failed;
    test_lifecycle(engines[i], 0);
    /* With every load counted (inline loads then call the library). */
    test_lifecycle(engines[i], SW_CONFIG_COUNT_LOADS);
    if (g_failed != before) fprintf(stderr, "  (in lifecycle, engine %s)\n", engine_label(engines[i]));
  }
  test_lifecycle(SW_ENGINE_SOFTWRAP, SW_CONFIG_NO_RETIRE_THREAD);
  test_create_errors();
  test_open_refuses_bad_files();
  test_misuse();
  for (size_t i = 1; i < sizeof engines / sizeof engines[0]; i++) {
    int before = g_failed;
    test_alloc_outside_wrap(engines[i]);
    if (g_failed != before) fprintf(stderr, "  (in alloc outside wrap, engine %s)\n", engine_label(engines[i]));
  }
  test_full_pool();
  test_undo_themis();
  for (size_t i = 1; i < sizeof engines / sizeof engines[0]; i++) {
    int before = g_failed;
    test_oversized_wrap(engines[i]);
    if (g_failed != before) fprintf(stderr, "  (in oversized wrap, engine %s)\n", engine_label(engines[i]));
  }

  rmdir(g_dir);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
