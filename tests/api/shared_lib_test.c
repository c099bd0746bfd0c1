/*
 * shared_lib_test.c — the exported symbol set of libsoftwrap.so.
 *
 * Linked against the SHARED library only.  It resolves every public
 * function of softwrap.h through dlsym (so a function missing from the
 * export list fails here, not in a user's build), checks that internal C++
 * symbols stay hidden (CXX_VISIBILITY_PRESET hidden), and runs one wrap
 * through the shared library from create to reopen.
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
    "sw_pool_recovery_report", "sw_pool_engine_name", "sw_pool_medium_name", "sw_wrap_open",
    "sw_wrap_close",     "sw_wrap_abort",    "sw_wrap_depth",       "sw_load8",
    "sw_load16",         "sw_load32",        "sw_load64",           "sw_store8",
    "sw_store16",        "sw_store32",       "sw_store64",          "sw_read",
    "sw_write",          "sw_memset",        "sw_pmalloc",          "sw_pzalloc",
    "sw_pfree",          "sw_pusable_size",  "sw_pool_stats",       "sw_pool_stats_reset",
};

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
      CHECK(sw_pool_close(p) == 0);
    }
  }
  unlink(path);
  rmdir(dir);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
