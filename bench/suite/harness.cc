// harness.cc — pools, workloads, loops, counters and output of the suite.
//
// Approach: see harness.h.  Everything here either measures or checks;
// nothing prints except the progress line (stderr) and the CSV files.
// Timing uses std::chrono::steady_clock (about 25 ns a read here), and the
// open loop sleeps only while the next arrival is more than 200 µs away,
// spinning otherwise, so arrivals are punctual to within a microsecond
// unless the scheduler preempts the process (the machine is shared; the
// percentiles show it).
#include "harness.h"

#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <unordered_map>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

extern char** environ;

namespace softwrap::bench {

void fail(const std::string& what) { throw BenchFailure{what}; }
void fail_sw(const std::string& what) { throw BenchFailure{what + ": " + sw_errormsg()}; }

std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

const char* engine_str(sw_engine_kind e) {
  switch (e) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap-local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_UNDO_THEMIS: return "undo-themis";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

const char* medium_str(sw_medium_kind m) {
  switch (m) {
    case SW_MEDIUM_X86: return "x86";
    case SW_MEDIUM_MSYNC: return "msync";
    case SW_MEDIUM_SCM_EMU: return "scm-emu";
    default: return "auto";
  }
}

double table1_estimate_ns(sw_engine_kind e, unsigned n_, double tw, double ts, double t_alias) {
  const double n = n_;
  switch (e) {
    case SW_ENGINE_NONATOMIC: return n * tw + ts;
    case SW_ENGINE_UNDO: return n * (2 * tw + ts) + std::ceil(12.0 * n / 64.0 + 1) * tw + ts;
    case SW_ENGINE_SOFTWRAP:
    case SW_ENGINE_SOFTWRAP_LOCAL: return tw + std::max(n * t_alias, std::ceil(12.0 * n / 64.0) * tw) + ts;
    default: return 0;
  }
}

// --------------------------------------------------------------- pinning

namespace {
bool g_pin = true;

std::vector<pid_t> threads_of_process() {
  std::vector<pid_t> out;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    }
    closedir(d);
  }
  return out;
}

cpu_set_t& all_cpus() {
  static cpu_set_t set = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) CPU_SET(0, &s);
    return s;
  }();
  return set;
}
}  // namespace

void set_pinning(bool on) {
  (void)all_cpus();  // remember the original mask before pinning anything
  g_pin = on;
}

void pin_threads() {
  cpu_set_t all = all_cpus();
  if (!g_pin || CPU_COUNT(&all) < 2) return;
  int first = -1;
  for (int i = 0; i < CPU_SETSIZE; i++) {
    if (CPU_ISSET(i, &all)) {
      first = i;
      break;
    }
  }
  cpu_set_t fg, bg = all;
  CPU_ZERO(&fg);
  CPU_SET(first, &fg);
  CPU_CLR(first, &bg);
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  for (pid_t t : threads_of_process()) sched_setaffinity(t, sizeof(cpu_set_t), t == self ? &fg : &bg);
}

void unpin_threads() {
  cpu_set_t all = all_cpus();
  if (!g_pin) return;
  for (pid_t t : threads_of_process()) sched_setaffinity(t, sizeof(cpu_set_t), &all);
}

// ------------------------------------------------------------ temp files

namespace {
constexpr int kTempSlots = 8;
char g_temp[kTempSlots][512];  // unlinked by the signal handler

extern "C" void unlink_temps_and_reraise(int sig) {
  for (auto& p : g_temp) {
    if (p[0] != 0) unlink(p);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void register_temp_file(const std::string& path) {
  static bool installed = [] {
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(s, unlink_temps_and_reraise);
    return true;
  }();
  (void)installed;
  for (auto& p : g_temp) {
    if (p[0] == 0 && path.size() < sizeof p) {
      std::memcpy(p, path.c_str(), path.size() + 1);
      return;
    }
  }
}

void unregister_temp_file(const std::string& path) {
  for (auto& p : g_temp) {
    if (path == p) p[0] = 0;
  }
}

// ------------------------------------------------------------------ pool

namespace {
struct Root {
  uint64_t array_off;
  uint64_t array_bytes;
};
}  // namespace

void prefault(void* p, uint64_t n) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  auto end = reinterpret_cast<uintptr_t>(p) + n;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return;
  for (uintptr_t a = begin; a < end; a += page) (void)*reinterpret_cast<volatile const char*>(a);
}

ArrayPool::ArrayPool(const std::string& dir, uint64_t array_bytes)
    : path_(dir + "/sw-bench-suite-" + std::to_string(getpid()) + ".pool"),
      array_bytes_(array_bytes),
      words_(array_bytes / 8) {
  register_temp_file(path_);
  sw_config cfg{};
  cfg.engine = SW_ENGINE_NONATOMIC;
  cfg.medium = SW_MEDIUM_X86;
  cfg.lanes = 8;
  cfg.lane_size = 8ull << 20;
  cfg.flags = SW_CONFIG_OVERWRITE;
  sw_pool* p = sw_pool_create(path_.c_str(), array_bytes + (128ull << 20), &cfg);
  if (!p) fail_sw("sw_pool_create " + path_);
  auto* root = static_cast<Root*>(sw_pool_root(p, sizeof(Root)));
  if (!root) fail_sw("sw_pool_root");
  if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
  void* a = sw_pmalloc(p, array_bytes);  // a new file reads as zeros
  if (!a) fail_sw("sw_pmalloc of the array");
  sw_store64(p, &root->array_off, sw_pool_offset(p, a));
  sw_store64(p, &root->array_bytes, array_bytes);
  if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  if (sw_pool_close(p) != 0) fail_sw("sw_pool_close");
}

ArrayPool::~ArrayPool() {
  if (pool_) sw_pool_close(pool_);
  std::remove(path_.c_str());
  unregister_temp_file(path_);
}

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string self_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  const std::string s(buf);
  return s.substr(0, s.rfind('/'));
}

std::string find_program(const char* env, const char* built, const std::string& name) {
  if (const char* p = std::getenv(env); p && *p) return p;
  if (built && *built && is_file(built)) return built;
  if (is_file(self_dir() + "/" + name)) return self_dir() + "/" + name;
  return "";
}

int run_program(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, std::string* out) {
  int fd[2] = {-1, -1};
  if (out && pipe(fd) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out) {
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
  }
  std::vector<char*> av, ev;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const auto& e : extra_env) ev.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e; ++e) ev.push_back(*e);
  ev.push_back(nullptr);
  pid_t pid;
  const int rc = posix_spawn(&pid, av[0], &fa, nullptr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  if (out) close(fd[1]);
  if (rc != 0) {
    if (out) close(fd[0]);
    return -1;
  }
  if (out) {
    char buf[4096];
    ssize_t got;
    while ((got = read(fd[0], buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
      if (got > 0) out->append(buf, static_cast<size_t>(got));
    }
    close(fd[0]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void add_stats(sw_stats* a, const sw_stats& b) {
  static_assert(sizeof(sw_stats) % sizeof(uint64_t) == 0);
  auto* x = reinterpret_cast<uint64_t*>(a);
  const auto* y = reinterpret_cast<const uint64_t*>(&b);
  for (size_t i = 0; i < sizeof(sw_stats) / sizeof(uint64_t); ++i) x[i] += y[i];
}

TempPool::TempPool(std::string p) : path(std::move(p)) {
  unlink(path.c_str());
  register_temp_file(path);
}

TempPool::~TempPool() {
  unlink(path.c_str());
  unregister_temp_file(path);
}

sw_pool* ArrayPool::open(const CellConfig& c) {
  if (pool_) close();
  sw_config cfg{};
  cfg.engine = c.engine;
  cfg.medium = c.medium;
  cfg.scm_write_ns = c.tw_ns;
  cfg.scm_serialize_ns = c.ts_ns == 0 ? 1 : c.ts_ns;  // 0 would mean "default"
  cfg.alias_entries = c.alias_entries;
  cfg.retire_divisor = c.retire_divisor;
  // The SoftWrAP paper's system does not compare: write-combined logging
  // only where a cell asks for it (the WCL experiment), never the medium's
  // default (on for scm-emu).
  cfg.flags = (c.flags & SW_CONFIG_WCL) ? c.flags : c.flags | SW_CONFIG_NO_WCL;
  pool_ = sw_pool_open(path_.c_str(), &cfg);
  if (!pool_) fail_sw("sw_pool_open " + path_);
  if (std::strcmp(sw_pool_engine_name(pool_), engine_str(c.engine)) != 0 ||
      std::strcmp(sw_pool_medium_name(pool_), medium_str(c.medium)) != 0) {
    fail(fmt("asked for %s on %s, got %s on %s (SOFTWRAP_ENGINE/SOFTWRAP_MEDIUM set?)", engine_str(c.engine),
             medium_str(c.medium), sw_pool_engine_name(pool_), sw_pool_medium_name(pool_)));
  }
  auto* root = static_cast<Root*>(sw_pool_root(pool_, 0));
  if (!root || root->array_bytes != array_bytes_) fail("benchmark pool has no array");
  array_ = static_cast<uint64_t*>(sw_pool_ptr(pool_, root->array_off));
  prefault(sw_pool_base(pool_), sw_pool_size(pool_));
  return pool_;
}

void ArrayPool::close() {
  if (!pool_) return;
  sw_pool* p = pool_;
  pool_ = nullptr;
  array_ = nullptr;
  if (sw_pool_close(p) != 0) fail_sw("sw_pool_close");
}

// -------------------------------------------------------------- workload

const char* pattern_str(Pattern p) {
  switch (p) {
    case Pattern::kRandom: return "random";
    case Pattern::kBlock: return "block";
    case Pattern::kSequential: return "sequential";
    case Pattern::kPerLine: return "per-line";
  }
  return "?";
}

namespace {
// A process-random start (array pools may outlive a process) plus a count.
uint64_t next_salt() {
  static std::atomic<uint64_t> next{std::random_device{}() | uint64_t{1} << 32};
  return next.fetch_add(1);
}
}  // namespace

ArrayWorkload::ArrayWorkload(uint64_t* base, uint64_t words, unsigned n, uint64_t seed, double reuse,
                             Pattern pattern)
    : base_(base), words_(words), n_(n), seed_(seed), reuse_(reuse), pattern_(pattern), salt_(next_salt()),
      rng_(seed), recent_(std::max<size_t>(8 * n, 16), 0) {
  if (n == 0 || words < 16 * uint64_t{n} + 16) fail("workload: array too small");
  idx_.reserve(n);
  buf_.resize(n);
}

void ArrayWorkload::set_stride(unsigned k) {
  if (pattern_ != Pattern::kRandom || k == 0) fail("workload: a stride needs the random pattern");
  stride_ = k;
}

void ArrayWorkload::next_indexes(Rng& rng, std::vector<uint64_t>& recent, size_t& recent_at,
                                 std::vector<uint64_t>& out) const {
  out.clear();
  if (pattern_ != Pattern::kRandom) {
    const uint64_t stride = pattern_ == Pattern::kPerLine ? 8 : 1;
    const uint64_t start = (rng.next() % (words_ - stride * n_)) & ~uint64_t{7};
    for (unsigned i = 0; i < n_; i++) out.push_back(start + stride * i);
    return;
  }
  for (unsigned i = 0; i < n_; i++) {
    uint64_t r = rng.next();
    uint64_t w;
    if (reuse_ > 0 && static_cast<double>(r >> 11) * 0x1.0p-53 < reuse_ && recent[0] != 0) {
      w = recent[rng.next() % recent.size()];
    } else {
      w = 1 + rng.next() % (words_ - 1);  // word 0 marks an empty ring slot
    }
    out.push_back(w);
  }
  for (uint64_t w : out) {
    recent[recent_at] = w;
    recent_at = recent_at + 1 == recent.size() ? 0 : recent_at + 1;
  }
}

void ArrayWorkload::wrap(sw_pool* p) {
  next_indexes(rng_, recent_, recent_at_, idx_);
  if (sw_wrap_open(p) != 0) fail_sw("sw_wrap_open");
  if (pattern_ == Pattern::kBlock) {
    for (unsigned i = 0; i < n_; i++) buf_[i] = value_of(seq_, i, salt_);
    if (sw_write(p, base_ + idx_[0], buf_.data(), n_ * sizeof(uint64_t)) != 0) fail_sw("sw_write");
  } else {
    for (unsigned i = 0; i < n_; i++) sw_store64(p, base_ + idx_[i] * stride_, value_of(seq_, i, salt_));
  }
  if (sw_wrap_close(p) != 0) fail_sw("sw_wrap_close");
  ++seq_;
}

void ArrayWorkload::verify(sw_pool* p, bool raw) const {
  Rng rng(seed_);
  std::vector<uint64_t> recent(recent_.size(), 0), idx;
  size_t at = 0;
  std::unordered_map<uint64_t, uint64_t> expect;
  const uint64_t tail = seq_ > 64 ? seq_ - 64 : 0;
  for (uint64_t s = 0; s < seq_; s++) {
    next_indexes(rng, recent, at, idx);
    const bool sampled = s % 61 == 0 || s >= tail;
    for (unsigned i = 0; i < n_; i++) {
      if (sampled) {
        expect[idx[i]] = value_of(s, i, salt_);
      } else if (auto it = expect.find(idx[i]); it != expect.end()) {
        it->second = value_of(s, i, salt_);
      }
    }
  }
  for (const auto& [w, v] : expect) {
    uint64_t got = raw ? base_[w * stride_] : sw_load64(p, base_ + w * stride_);
    if (got != v) {
      fail(fmt("verify (%s): word %llu holds %016llx, expected %016llx after %llu wraps", raw ? "raw" : "sw_load64",
               static_cast<unsigned long long>(w), static_cast<unsigned long long>(got),
               static_cast<unsigned long long>(v), static_cast<unsigned long long>(seq_)));
    }
  }
}

// ----------------------------------------------------------------- loops

Dist Dist::of(std::vector<double> v) {
  Dist d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  const size_t keep = std::max<size_t>(1, v.size() - v.size() / 100);
  double tsum = 0;
  for (size_t i = 0; i < keep; i++) tsum += v[i];
  d.tmean = tsum / static_cast<double>(keep);
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))]; };
  d.p50 = at(0.5);
  d.p90 = at(0.9);
  d.p99 = at(0.99);
  d.max = v.back();
  return d;
}

namespace {
inline void relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}
// Waiting for an arrival sleeps (timer slack 1 ns) when it is further away
// than this and spins closer to it.  Measured: sleeping already 30 µs
// ahead, to leave the CPU to the retirement thread, made table-switch
// wraps slower, the wake-ups being late on a loaded machine.
constexpr int kSleepAboveUs = 200;

inline double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}
}  // namespace

OpenLoopResult open_loop(sw_pool* p, ArrayWorkload& w, double rate, double seconds, std::vector<WrapTrace>* trace) {
  OpenLoopResult r;
  r.offered = rate;
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  const double gap_ns = 1e9 / rate;
  const auto t0 = Clock::now() + std::chrono::microseconds(50);
  const auto end = t0 + std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
  std::vector<double> wrap_ns, resp_ns;
  const size_t expected = static_cast<size_t>(rate * seconds) + 1;
  wrap_ns.reserve(expected);
  resp_ns.reserve(expected);
  if (trace) trace->reserve(expected);
  Clock::time_point last_close = t0;
  for (uint64_t i = 0;; i++) {
    const auto arrival = t0 + std::chrono::nanoseconds(static_cast<int64_t>(gap_ns * static_cast<double>(i)));
    if (arrival >= end) break;
    auto now = Clock::now();
    if (now >= end) break;  // backlog left at the end is not served
    while (now < arrival) {
      if (arrival - now > std::chrono::microseconds(kSleepAboveUs)) {
        std::this_thread::sleep_for(arrival - now - std::chrono::microseconds(kSleepAboveUs / 2));
      } else {
        relax();
      }
      now = Clock::now();
    }
    const auto open = now;
    w.wrap(p);
    const auto closed = Clock::now();
    last_close = closed;
    wrap_ns.push_back(ns_between(open, closed));
    resp_ns.push_back(ns_between(arrival, closed));
    if (trace) {
      sw_stats st{};
      sw_pool_stats(p, &st);
      trace->push_back({ns_between(t0, arrival) / 1e3, ns_between(t0, open) / 1e3, ns_between(t0, closed) / 1e3,
                        st.table_switches, st.retired_entries});
    }
  }
  r.wraps = wrap_ns.size();
  const double elapsed = std::max(ns_between(t0, last_close), 1.0) / 1e9;
  r.throughput = static_cast<double>(r.wraps) / elapsed;
  r.wrap_ns = Dist::of(std::move(wrap_ns));
  r.resp_ns = Dist::of(std::move(resp_ns));
  return r;
}

double closed_loop(sw_pool* p, ArrayWorkload& w, double seconds) {
  const auto start = Clock::now();
  const auto stop = start + std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
  uint64_t wraps = 0;
  Clock::time_point now;
  do {
    for (int k = 0; k < 8; k++) w.wrap(p);
    wraps += 8;
    now = Clock::now();
  } while (now < stop);
  return static_cast<double>(wraps) / (ns_between(start, now) / 1e9);
}

void reset_counters(sw_pool* p) {
  if (sw_pool_quiesce(p) != 0) fail_sw("sw_pool_quiesce");
  if (sw_pool_stats_reset(p) != 0) fail_sw("sw_pool_stats_reset");
}

PerWrap counters_since_reset(sw_pool* p, uint64_t wraps) {
  if (sw_pool_quiesce(p) != 0) fail_sw("sw_pool_quiesce");
  sw_stats st{};
  if (sw_pool_stats(p, &st) != 0) fail_sw("sw_pool_stats");
  if (st.wraps != wraps) {
    fail(fmt("counters: %llu wraps committed, the workload ran %llu", static_cast<unsigned long long>(st.wraps),
             static_cast<unsigned long long>(wraps)));
  }
  if (st.fences_commit < wraps) {
    fail(fmt("counters: %llu commit fences for %llu wraps", static_cast<unsigned long long>(st.fences_commit),
             static_cast<unsigned long long>(wraps)));
  }
  PerWrap r;
  const double d = wraps ? static_cast<double>(wraps) : 1.0;
  r.wraps = wraps;
  r.fences = static_cast<double>(st.fences) / d;
  r.fences_log = static_cast<double>(st.fences_log) / d;
  r.fences_retire = static_cast<double>(st.fences_retire) / d;
  r.streamed = static_cast<double>(st.streamed_lines) / d;
  r.flushes = static_cast<double>(st.flushes) / d;
  r.home_writes = static_cast<double>(st.home_writes) / d;
  r.log_bytes = static_cast<double>(st.log_bytes) / d;
  r.table_switches = static_cast<double>(st.table_switches) / d;
  r.retired = static_cast<double>(st.retired_entries) / d;
  r.retire_ns = static_cast<double>(st.retire_ns) / d;
  return r;
}

CellOutcome run_cell(Context& ctx, const CellSpec& s, std::vector<WrapTrace>* trace) {
  ArrayPool& ap = ctx.pool();
  sw_pool* p = ap.open(s.cfg);
  pin_threads();  // after open: the retirement thread exists now
  ArrayWorkload w(ap.array(), ap.words(), s.n, s.seed, s.reuse, s.pattern);
  CellOutcome out;
  // Warm-up: the same loop for a tenth of the time (tables, caches, queue).
  const double warm = std::max(0.01, s.seconds / 10);
  if (s.rate > 0) {
    open_loop(p, w, s.rate, warm);
  } else {
    closed_loop(p, w, warm);
  }
  reset_counters(p);
  const uint64_t before = w.wraps();
  if (s.rate > 0) {
    out.open = open_loop(p, w, s.rate, s.seconds, trace);
  } else {
    out.closed_tput = closed_loop(p, w, s.seconds);
  }
  w.verify(p, false);  // through the alias tables, before retirement
  out.per = counters_since_reset(p, w.wraps() - before);
  w.verify(p, true);   // in the mapping: counters_since_reset quiesced
  unpin_threads();
  ap.close();
  return out;
}

// ---------------------------------------------------------------- output

namespace {
void mkdirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); i++) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) fail("mkdir " + prefix + ": " + strerror(errno));
    }
  }
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// CPU time stolen by the hypervisor and all CPU time, in ticks since boot
// (the first line of /proc/stat); {0, 0} where it cannot be read.
std::pair<uint64_t, uint64_t> steal_and_total() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  uint64_t v[8] = {}, total = 0;
  f >> cpu;
  for (uint64_t& x : v) f >> x;
  if (!f || cpu != "cpu") return {0, 0};
  for (uint64_t x : v) total += x;
  return {v[7], total};
}
}  // namespace

Csv::Csv(const std::string& path, const std::vector<std::string>& header) : cols_(header.size()) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) fail("cannot write " + path + ": " + strerror(errno));
  for (size_t i = 0; i < header.size(); i++) std::fprintf(f_, "%s%s", i ? "," : "", header[i].c_str());
  std::fprintf(f_, "\n");
}

Csv::~Csv() {
  if (f_) std::fclose(f_);
}

namespace {

// A CSV field in quotes, its quotes doubled (RFC 4180).
std::string csv_quoted(std::string s) {
  for (size_t i = 0; (i = s.find('"', i)) != std::string::npos; i += 2) s.insert(i, 1, '"');
  return "\"" + s + "\"";
}

}  // namespace

Csv& Csv::add(const std::string& v) {
  // Quoted only if it must be: a comma, a quote or a line break in it.
  const bool plain = v.find_first_of(",\"\n\r") == std::string::npos;
  std::fprintf(f_, "%s%s", at_++ ? "," : "", plain ? v.c_str() : csv_quoted(v).c_str());
  return *this;
}

Csv& Csv::add(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::fprintf(f_, "%s%.0f", at_++ ? "," : "", v);
  } else {
    std::fprintf(f_, "%s%.6g", at_++ ? "," : "", v);
  }
  return *this;
}

Csv& Csv::add(uint64_t v) {
  std::fprintf(f_, "%s%llu", at_++ ? "," : "", static_cast<unsigned long long>(v));
  return *this;
}

void Csv::end_row() {
  if (at_ != cols_) fail(fmt("csv row has %zu of %zu columns", at_, cols_));
  std::fprintf(f_, "\n");
  std::fflush(f_);
  at_ = 0;
}

Context::Context(const SuiteOptions& o, const std::string& experiment, const std::string& meta_name,
                 const std::string& label)
    : o_(o), name_(label.empty() ? experiment : label), dir_(o.out_dir + "/" + experiment), meta_name_(meta_name),
      start_(Clock::now()), steal_start_(steal_and_total()) {
  mkdirs(dir_);
  set_pinning(o.pin);
  unpin_threads();
  note("quick", o.quick ? "1" : "0");
  note("pinned", o.pin ? "foreground CPU 0, other threads the other CPUs (single-threaded cells)" : "no");
  note("loadavg_start", loadavg());
  note("cpus", std::to_string(std::thread::hardware_concurrency()));
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      note("cpu_model", line.substr(line.find(':') + 2));
      break;
    }
  }
}

Context::~Context() {
  if (!std::uncaught_exceptions()) {
    note("loadavg_end", loadavg());
    const auto [steal, total] = steal_and_total();
    if (total > steal_start_.second) {
      note("cpu_steal_pct", fmt("%.2f", 100.0 * static_cast<double>(steal - steal_start_.first) /
                                            static_cast<double>(total - steal_start_.second)));
    }
    note("seconds", fmt("%.1f", std::chrono::duration<double>(Clock::now() - start_).count()));
  }
  delete pool_;
  if (FILE* f = std::fopen(file(meta_name_).c_str(), "w")) {
    std::fprintf(f, "key,value\n");
    for (const auto& [k, v] : notes_) std::fprintf(f, "%s,%s\n", csv_quoted(k).c_str(), csv_quoted(v).c_str());
    std::fclose(f);
  }
  std::fprintf(stderr, "\r\033[K");
}

ArrayPool& Context::pool() {
  if (!pool_) {
    step("creating the array pool");
    pool_ = new ArrayPool(o_.pool_dir, array_bytes());
  }
  return *pool_;
}

void Context::step(const std::string& what) {
  if (what.rfind("creating", 0) != 0) done_++;
  const double el = std::chrono::duration<double>(Clock::now() - start_).count();
  std::fprintf(stderr, "\r\033[K[%s %d/%d %.0fs] %s", name_.c_str(), std::min(done_, total_), total_, el,
               what.c_str());
  std::fflush(stderr);
}

void Context::note(const std::string& key, const std::string& value) {
  for (auto& kv : notes_) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  notes_.emplace_back(key, value);
}

void Context::check(bool ok, const std::string& what) {
  note("check: " + what, ok ? "PASS" : "FAIL");
  if (!ok) failures_++;
}

}  // namespace softwrap::bench
