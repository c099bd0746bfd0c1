// exit_cases.cc — programs that close (or do not close) a pool at every
// place a program may: from main, from atexit handlers, from destructors of
// static, function-static and thread_local objects, from another thread,
// after threads that ran wraps have exited, and not at all (exit() with the
// pool open).  exit_test.cc runs each case in a process of its own, on each
// engine, then reopens the pool and checks what it holds.
//
// Usage: sw_exit_cases CASE ENGINE MEDIUM PATH.  Every case writes words of
// the root object (uint64_t r[8]); a case prints "closed 0" when its close
// returned 0 and exits 0 when everything it checked held.  Words a case
// stores in a wrap that never commits must read 0 after recovery.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"
#include "softwrap/softwrap.hpp"

namespace {

sw_config g_cfg{};
std::string g_path;
sw_pool* g_pool = nullptr;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "sw_exit_cases: %s: %s\n", what, sw_errormsg());
  std::fflush(stderr);
  _exit(3);
}

sw_pool* create_pool() {
  sw_config cfg = g_cfg;
  cfg.flags |= SW_CONFIG_OVERWRITE;
  sw_pool* p = sw_pool_create(g_path.c_str(), 16u << 20, &cfg);
  if (!p) die("sw_pool_create");
  if (!sw_pool_root(p, 64)) die("sw_pool_root");
  return p;
}

uint64_t* root(sw_pool* p) {
  auto* r = static_cast<uint64_t*>(sw_pool_root(p, 0));
  if (!r) die("sw_pool_root(0)");
  return r;
}

void commit_two(sw_pool* p) {  // r[0] = 1 (a store outside a wrap), r[1] = 2 (in a wrap)
  uint64_t* r = root(p);
  sw_store64(p, &r[0], 1);
  if (sw_wrap_open(p) != 0) die("sw_wrap_open");
  sw_store64(p, &r[1], 2);
  if (sw_wrap_close(p) != 0) die("sw_wrap_close");
}

void close_checked(sw_pool* p) {
  const int rc = sw_pool_close(p);
  if (rc != 0) die("sw_pool_close");
  std::printf("closed %d\n", rc);
  std::fflush(stdout);
}

void close_global() { close_checked(g_pool); }

// Owns a pool and closes it in its destructor (as softwrap::pool does, but
// reporting the result).
struct Holder {
  softwrap::pool pl;
  Holder() : pl(create_pool()) {}
  ~Holder() {
    try {
      pl.close();
    } catch (const softwrap::error& e) {
      std::fprintf(stderr, "sw_exit_cases: close in a destructor: %s\n", e.what());
      _exit(3);
    }
    std::printf("closed 0\n");
    std::fflush(stdout);
  }
};

// A softwrap::pool in a global object, closed by its own destructor at
// exit.  The verifier is defined first, so it is destroyed after the pool:
// the pool file's lock is free again only if the destructor closed it.
struct StaticVerifier {
  bool armed = false;
  ~StaticVerifier() {
    if (!armed) return;
    sw_pool* p = sw_pool_open(g_path.c_str(), &g_cfg);
    if (!p) die("reopen after the static softwrap::pool was destroyed");
    close_checked(p);
  }
} g_static_verifier;
softwrap::pool g_static_pool;

Holder& function_static() {
  static Holder h;
  return h;
}

// A thread_local object whose destructor runs a wrap and closes the pool.
struct TlsCloser {
  sw_pool* p = nullptr;
  ~TlsCloser() {
    if (!p) return;
    uint64_t* r = root(p);
    if (sw_wrap_open(p) != 0) die("sw_wrap_open in a thread_local destructor");
    sw_store64(p, &r[2], 3);
    if (sw_wrap_close(p) != 0) die("sw_wrap_close in a thread_local destructor");
    close_checked(p);
  }
};
thread_local TlsCloser tls_closer;

// ---- STAMP-style use (issue 12): a transactional-memory shim onto wraps,
// as STAMP's programs are run on softwrap — the pool in a global closed by
// an exit handler, setup allocations outside transactions, one global lock
// around each transaction (close before unlock), allocations inside them,
// strict mode on so that any misuse aborts the run.
namespace stamp {

constexpr int kAccounts = 100, kThreads = 4, kTransfers = 500;
struct Receipt {
  uint64_t next, from, to, amount;
};
std::mutex g_tm_lock;

void tm_startup() {
  sw_config cfg = g_cfg;
  cfg.flags |= SW_CONFIG_OVERWRITE | SW_CONFIG_STRICT;
  g_pool = sw_pool_create(g_path.c_str(), 16u << 20, &cfg);
  if (!g_pool || !sw_pool_root(g_pool, 64)) die("TM_STARTUP");
  std::atexit(close_global);  // TM_SHUTDOWN
}
void tm_begin() {
  g_tm_lock.lock();
  if (sw_wrap_open(g_pool) != 0) die("TM_BEGIN");
}
void tm_end() {
  if (sw_wrap_close(g_pool) != 0) die("TM_END");
  g_tm_lock.unlock();
}

void run() {
  tm_startup();
  uint64_t* r = root(g_pool);
  // P_MALLOC: setup outside any transaction, initialised through the API.
  auto* acct = static_cast<uint64_t*>(sw_pzalloc_slot(g_pool, &r[3], kAccounts * sizeof(uint64_t)));
  if (!acct) die("P_MALLOC");
  for (int i = 0; i < kAccounts; ++i) sw_store64(g_pool, &acct[i], 1000);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([acct, r, t] {
      uint64_t seed = 0x9E3779B97F4A7C15ull * (t + 1);
      for (int k = 0; k < kTransfers; ++k) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        const uint64_t from = seed % kAccounts, to = (seed >> 20) % kAccounts, amount = (seed >> 40) % 50;
        tm_begin();
        sw_store64(g_pool, &acct[from], sw_load64(g_pool, &acct[from]) - amount);  // TM_SHARED_WRITE
        sw_store64(g_pool, &acct[to], sw_load64(g_pool, &acct[to]) + amount);
        auto* rc = static_cast<Receipt*>(sw_pmalloc(g_pool, sizeof(Receipt)));  // TM_MALLOC
        if (!rc) die("TM_MALLOC");
        const Receipt v{sw_load64(g_pool, &r[4]), from, to, amount};
        if (sw_write(g_pool, rc, &v, sizeof v) != 0) die("sw_write");
        sw_store64(g_pool, &r[4], sw_pool_offset(g_pool, rc));
        sw_store64(g_pool, &r[1], sw_load64(g_pool, &r[1]) + 1);
        tm_end();
      }
    });
  }
  for (auto& t : ts) t.join();
  uint64_t sum = 0, receipts = 0;
  for (int i = 0; i < kAccounts; ++i) sum += sw_load64(g_pool, &acct[i]);
  for (uint64_t o = sw_load64(g_pool, &r[4]); o != 0; ++receipts) {
    o = sw_load64(g_pool, &static_cast<Receipt*>(sw_pool_ptr(g_pool, o))->next);
  }
  if (receipts != uint64_t{kThreads} * kTransfers || sw_load64(g_pool, &r[1]) != receipts) die("receipts lost");
  sw_store64(g_pool, &r[2], sum);
  sw_store64(g_pool, &r[0], 1);
}

}  // namespace stamp

int run_case(const std::string& c) {
  if (c == "stamp") {
    stamp::run();
    return 0;
  }
  if (c == "main") {
    sw_pool* p = create_pool();
    commit_two(p);
    close_checked(p);
    return 0;
  }
  if (c == "atexit-nowrap") {  // the reproduction: no wrap at all
    g_pool = create_pool();
    std::atexit(close_global);
    return 0;
  }
  if (c == "atexit") {
    g_pool = create_pool();
    commit_two(g_pool);
    std::atexit(close_global);
    return 0;
  }
  if (c == "exit-call") {  // exit() from inside the program, handlers run
    g_pool = create_pool();
    std::atexit(close_global);
    commit_two(g_pool);
    std::vector<int> alive(10);
    std::exit(0);
  }
  if (c == "static-object") {
    g_static_pool = softwrap::pool(create_pool());
    commit_two(g_static_pool.handle());
    g_static_verifier.armed = true;
    return 0;
  }
  if (c == "function-static") {
    commit_two(function_static().pl.handle());
    return 0;
  }
  if (c == "thread-local-main") {  // the main thread's thread_local destructors run at exit
    sw_pool* p = create_pool();
    commit_two(p);
    tls_closer.p = p;
    return 0;
  }
  if (c == "thread-local-thread") {
    sw_pool* p = create_pool();
    commit_two(p);
    std::thread t([p] {
      uint64_t* r = root(p);
      sw_store64(p, &r[3], 4);  // this thread has a context before its destructors run
      tls_closer.p = p;
    });
    t.join();
    return 0;
  }
  if (c == "other-thread") {
    sw_pool* p = create_pool();
    commit_two(p);
    std::thread t([p] { close_checked(p); });
    t.join();
    return 0;
  }
  if (c == "threads-exited") {
    sw_pool* p = create_pool();
    uint64_t* r = root(p);
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i) {
      ts.emplace_back([p, r, i] {
        for (int k = 0; k < 100; ++k) {
          if (sw_wrap_open(p) != 0) die("sw_wrap_open");
          sw_store64(p, &r[1 + i], sw_load64(p, &r[1 + i]) + 1);
          if (sw_wrap_close(p) != 0) die("sw_wrap_close");
        }
        if (i == 0) {  // exits with a wrap open: rolled back when the thread ends
          if (sw_wrap_open(p) != 0) die("sw_wrap_open");
          sw_store64(p, &r[6], 999);
        }
      });
    }
    for (auto& t : ts) t.join();
    sw_store64(p, &r[0], 1);
    close_checked(p);
    return 0;
  }
  if (c == "exit-open") {  // never closed; a wrap left open too
    sw_pool* p = create_pool();
    commit_two(p);
    uint64_t* r = root(p);
    if (sw_wrap_open(p) != 0) die("sw_wrap_open");
    sw_store64(p, &r[5], 99);
    std::exit(0);
  }
  std::fprintf(stderr, "sw_exit_cases: unknown case '%s'\n", c.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: sw_exit_cases CASE ENGINE MEDIUM PATH\n");
    return 2;
  }
  const std::string engine = argv[2], medium = argv[3];
  if (engine == "softwrap") g_cfg.engine = SW_ENGINE_SOFTWRAP;
  else if (engine == "softwrap-local") g_cfg.engine = SW_ENGINE_SOFTWRAP_LOCAL;
  else if (engine == "undo") g_cfg.engine = SW_ENGINE_UNDO;
  else if (engine == "nonatomic") g_cfg.engine = SW_ENGINE_NONATOMIC;
  else return std::fprintf(stderr, "sw_exit_cases: unknown engine '%s'\n", argv[2]), 2;
  if (medium == "auto") g_cfg.medium = SW_MEDIUM_AUTO;
  else if (medium == "scm-emu") g_cfg.medium = SW_MEDIUM_SCM_EMU;
  else if (medium == "x86") g_cfg.medium = SW_MEDIUM_X86;
  else return std::fprintf(stderr, "sw_exit_cases: unknown medium '%s'\n", argv[3]), 2;
  g_cfg.scm_write_ns = 100;
  g_path = argv[4];
  return run_case(argv[1]);
}
