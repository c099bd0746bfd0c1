/*
 * shared_lib_test.c — the exported symbol set of libsoftwrap.so.
 *
 * Linked against the SHARED library only.  It resolves every public
 * function of softwrap.h through dlsym (so a function missing from the
 * export list fails here, not in a user's build), checks that internal C++
 * symbols stay hidden (CXX_VISIBILITY_PRESET hidden), and runs one wrap
 * through the shared library from create to reopen.  The reads that the
 * header makes inline (sw_load*, sw_read, sw_peek) stay exported under
 * their names, for programs that cannot inline (FFI, dlsym), beside the
 * *_slow functions the inline ones call: all three give the same answers,
 * in a wrap, after its commit and after retirement, and for misuse.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softwrap/softwrap.h"

static int g_passed, g_failed;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (cond) {                                                                      \
      g_passed++;                                                                    \
    } else {                                                                         \
      g_failed++;                                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (%s)\n", __FILE__, __LINE__, #cond, \
              sw_errormsg());                                                        \
    }                                                                                \
  } while (0)

static const char *const kPublic[] = {
    "sw_errormsg",       "sw_errno",         "sw_strerror",         "sw_pool_create",
    "sw_pool_open",      "sw_pool_close",    "sw_pool_root",        "sw_pool_quiesce",
    "sw_pool_offset",    "sw_pool_ptr",      "sw_pool_base",        "sw_pool_size",
    "sw_pool_recovery_report", "sw_pool_engine_name", "sw_pool_medium_name", "sw_pool_wcl", "sw_wrap_open",
    "sw_wrap_close",     "sw_wrap_abort",    "sw_wrap_depth",       "sw_load8",
    "sw_load16",         "sw_load32",        "sw_load64",           "sw_store8",
    "sw_store16",        "sw_store32",       "sw_store64",          "sw_read",
    "sw_write",          "sw_memset",        "sw_pmalloc",          "sw_pzalloc",
    "sw_pfree",          "sw_pusable_size",  "sw_pool_stats",       "sw_pool_stats_reset",
    "sw_peek",           "sw_load8_slow",    "sw_load16_slow",      "sw_load32_slow",
    "sw_load64_slow",    "sw_read_slow",     "sw_peek_slow",
};

typedef uint8_t (*load8_fn)(sw_pool *, const void *);
typedef uint16_t (*load16_fn)(sw_pool *, const void *);
typedef uint32_t (*load32_fn)(sw_pool *, const void *);
typedef uint64_t (*load64_fn)(sw_pool *, const void *);
typedef int (*read_fn)(sw_pool *, void *, const void *, size_t);
typedef const void *(*peek_fn)(sw_pool *, const void *, size_t, void *);

/* The exported reads, as a program that cannot inline finds them. */
static struct {
  load8_fn load8;
  load16_fn load16;
  load32_fn load32;
  load64_fn load64;
  read_fn read;
  peek_fn peek;
} g_exported;

/* Every way to read the 16 bytes at w (two words) agrees with `want`:
 * the inline reads, the exported functions and the *_slow ones. */
static void check_reads_agree(sw_pool *p, const uint64_t *w, const uint64_t want[2]) {
  const char *b = (const char *)w;
  CHECK(sw_load64(p, w) == want[0]);
  CHECK(g_exported.load64(p, w) == want[0]);
  CHECK(sw_load64_slow(p, w) == want[0]);
  CHECK(sw_load32(p, b + 4) == (uint32_t)(want[0] >> 32));
  CHECK(g_exported.load32(p, b + 4) == (uint32_t)(want[0] >> 32));
  CHECK(sw_load32_slow(p, b + 4) == (uint32_t)(want[0] >> 32));
  CHECK(sw_load16(p, b + 10) == (uint16_t)(want[1] >> 16));
  CHECK(g_exported.load16(p, b + 10) == (uint16_t)(want[1] >> 16));
  CHECK(sw_load16_slow(p, b + 10) == (uint16_t)(want[1] >> 16));
  CHECK(sw_load8(p, b + 15) == (uint8_t)(want[1] >> 56));
  CHECK(g_exported.load8(p, b + 15) == (uint8_t)(want[1] >> 56));
  CHECK(sw_load8_slow(p, b + 15) == (uint8_t)(want[1] >> 56));
  uint64_t got[3][2];
  memset(got, 0, sizeof got);
  CHECK(sw_read(p, got[0], w, 16) == 0);
  CHECK(g_exported.read(p, got[1], w, 16) == 0);
  CHECK(sw_read_slow(p, got[2], w, 16) == 0);
  for (int i = 0; i < 3; i++) CHECK(memcmp(got[i], want, 16) == 0);
  uint64_t scratch[3][2];
  const void *q[3] = {sw_peek(p, w, 16, scratch[0]), g_exported.peek(p, w, 16, scratch[1]),
                      sw_peek_slow(p, w, 16, scratch[2])};
  for (int i = 0; i < 3; i++) CHECK(q[i] != NULL && memcmp(q[i], want, 16) == 0);
}

/* Internal functions that must not leak out of the library. */
static const char *const kHidden[] = {
    "_ZN8softwrap9set_errorEiPKcz",   /* softwrap::set_error(int, const char*, ...) */
    "_ZN8softwrap11clear_errorEv",    /* softwrap::clear_error() */
    "_ZN8softwrap14resolve_configEPK9sw_configPNS_14ResolvedConfigE",
};

int main(void) {
  for (size_t i = 0; i < sizeof kPublic / sizeof kPublic[0]; i++) {
    void *sym = dlsym(RTLD_DEFAULT, kPublic[i]);
    if (!sym) fprintf(stderr, "not exported: %s\n", kPublic[i]);
    CHECK(sym != NULL);
  }
  for (size_t i = 0; i < sizeof kHidden / sizeof kHidden[0]; i++) {
    void *sym = dlsym(RTLD_DEFAULT, kHidden[i]);
    if (sym) fprintf(stderr, "internal symbol exported: %s\n", kHidden[i]);
    CHECK(sym == NULL);
  }
  g_exported.load8 = (load8_fn)dlsym(RTLD_DEFAULT, "sw_load8");
  g_exported.load16 = (load16_fn)dlsym(RTLD_DEFAULT, "sw_load16");
  g_exported.load32 = (load32_fn)dlsym(RTLD_DEFAULT, "sw_load32");
  g_exported.load64 = (load64_fn)dlsym(RTLD_DEFAULT, "sw_load64");
  g_exported.read = (read_fn)dlsym(RTLD_DEFAULT, "sw_read");
  g_exported.peek = (peek_fn)dlsym(RTLD_DEFAULT, "sw_peek");
  if (!g_exported.load8 || !g_exported.load16 || !g_exported.load32 || !g_exported.load64 || !g_exported.read ||
      !g_exported.peek) {
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return 1;
  }
  /* The address of a public function lies in libsoftwrap.so, not in us. */
  Dl_info info;
  void *open_sym = dlsym(RTLD_DEFAULT, "sw_pool_open");
  CHECK(open_sym != NULL && dladdr(open_sym, &info) != 0 && info.dli_fname != NULL &&
        strstr(info.dli_fname, "libsoftwrap") != NULL);

  char dir[512];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/sw-shared-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return 2;
  char path[600];
  snprintf(path, sizeof path, "%s/shared.pool", dir);

  sw_pool *p = sw_pool_create(path, 8u << 20, NULL);
  CHECK(p != NULL);
  if (p) {
    uint64_t *root = sw_pool_root(p, 64);
    CHECK(root != NULL);
    CHECK(sw_wrap_open(p) == 0);
    sw_store64(p, root, 4242);
    CHECK(sw_wrap_close(p) == 0);
    CHECK(sw_pool_close(p) == 0);
    p = sw_pool_open(path, NULL);
    CHECK(p != NULL);
    if (p) {
      root = sw_pool_root(p, 0);
      CHECK(root != NULL && sw_load64(p, root) == 4242);
      if (root) {
        /* In a wrap (its own stores), after the commit, after retirement. */
        const uint64_t want[2] = {0x1122334455667788ull, 0x99AABBCCDDEEFF00ull};
        CHECK(sw_wrap_open(p) == 0);
        sw_store64(p, &root[2], want[0]);
        sw_store64(p, &root[3], want[1]);
        check_reads_agree(p, &root[2], want);
        CHECK(sw_wrap_close(p) == 0);
        check_reads_agree(p, &root[2], want);
        CHECK(sw_pool_quiesce(p) == 0);
        check_reads_agree(p, &root[2], want);
        /* Misuse: the library's checks, whichever way it is reached (each
         * check starts from the other error code). */
        uint64_t on_stack = 5, buf[2];
        char *misaligned = (char *)root + 4;
        char *end = (char *)sw_pool_base(p) + sw_pool_size(p);
        CHECK(g_exported.load64(p, &on_stack) == 0 && sw_errno() == SW_ERANGE);
        CHECK(g_exported.load64(p, misaligned) == 0 && sw_errno() == SW_EINVAL);
        CHECK(sw_load64_slow(p, &on_stack) == 0 && sw_errno() == SW_ERANGE);
        CHECK(sw_load64_slow(p, misaligned) == 0 && sw_errno() == SW_EINVAL);
        CHECK(sw_read(p, buf, end - 8, 16) == SW_ERANGE && sw_errno() == SW_ERANGE);
        (void)sw_load64_slow(p, misaligned);
        CHECK(g_exported.read(p, buf, end - 8, 16) == SW_ERANGE && sw_errno() == SW_ERANGE);
        (void)sw_load64_slow(p, misaligned);
        CHECK(sw_read_slow(p, buf, end - 8, 16) == SW_ERANGE && sw_errno() == SW_ERANGE);
        (void)sw_load64_slow(p, misaligned);
        CHECK(sw_peek(p, end - 8, 16, buf) == NULL && sw_errno() == SW_ERANGE);
        (void)sw_load64_slow(p, misaligned);
        CHECK(g_exported.peek(p, end - 8, 16, buf) == NULL && sw_errno() == SW_ERANGE);
        (void)sw_load64_slow(p, misaligned);
        CHECK(sw_peek_slow(p, end - 8, 16, buf) == NULL && sw_errno() == SW_ERANGE);
      }
      CHECK(sw_pool_close(p) == 0);
    }
  }
  unlink(path);
  rmdir(dir);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
