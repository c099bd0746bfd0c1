// array_update.cc — the SoftWrAP paper's array-update benchmark (full
// paper, section V-B/C; Tables I and II): wraps of n random 8-byte stores
// into a large persistent array, for every engine, on the x86 medium and on
// the emulated SCM (scm-emu, Tw = 1 µs, Ts = 220 ns).
//
// Approach: every (round, medium, engine) cell gets a fresh pool in
// /dev/shm holding one sw_pmalloc'd array (1 GiB by default) whose pages are
// faulted in before timing.  A cell runs a short warm-up, then a closed loop
// (wraps back to back: wraps/s) and an open loop (wraps arrive at a fixed
// rate, 10,000/s as in Table II: mean wrap time from sw_wrap_open to the
// return of sw_wrap_close, its median and 99th percentile, and mean
// response time from the arrival).  Per-wrap counters (fences, streamed
// lines, flushes, log bytes) come from sw_pool_stats over the closed loop,
// retirement included (the pool is quiesced before they are read).  Cells are interleaved: each round visits
// every engine, in an order rotated from round to round, and the table
// reports the median over rounds, with ratios to nonatomic measured in the
// same run.  On scm-emu the table also gives Table I's estimate for each
// engine and, for n = 10/15/20, the paper's measured time.
//
// The closing lines check the bars and print PASS/FAIL (exit status
// 1 on any FAIL): on x86, softwrap reaches at least 0.5x nonatomic's wraps/s;
// on scm-emu, softwrap's mean wrap time is below nonatomic's and undo's is
// at least 2x nonatomic's.  docs/benchmarks.md explains the command.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "softwrap/softwrap.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

using Clock = std::chrono::steady_clock;

// The pool file of the cell being run, removed if the program gives up.
std::string g_pool_path;

struct Options {
  uint64_t array_mb = 1024;
  unsigned n = 10;
  unsigned rounds = 3;
  double seconds = 0.4;  // per loop per cell
  double rate = 10000;   // open-loop arrivals per second
  uint32_t tw_ns = 1000;
  uint32_t ts_ns = 220;
  double t_alias_ns = 450;
  // softwrap alias tables; 0 = the library's defaults.  The paper used 8K
  // entries retired from 500 on (--alias-entries 8192 --retire-divisor 16).
  uint32_t alias_entries = 0;
  uint32_t retire_divisor = 0;
  std::string dir = "/dev/shm";
  std::vector<sw_engine_kind> engines = {SW_ENGINE_NONATOMIC, SW_ENGINE_SOFTWRAP,
                                         SW_ENGINE_SOFTWRAP_LOCAL, SW_ENGINE_UNDO};
  std::vector<sw_medium_kind> media = {SW_MEDIUM_X86, SW_MEDIUM_SCM_EMU};
};

const char* engine_name(sw_engine_kind e) {
  switch (e) {
    case SW_ENGINE_SOFTWRAP: return "softwrap";
    case SW_ENGINE_SOFTWRAP_LOCAL: return "softwrap-local";
    case SW_ENGINE_UNDO: return "undo";
    case SW_ENGINE_NONATOMIC: return "nonatomic";
    default: return "default";
  }
}

const char* medium_name(sw_medium_kind m) {
  switch (m) {
    case SW_MEDIUM_X86: return "x86";
    case SW_MEDIUM_MSYNC: return "msync";
    case SW_MEDIUM_SCM_EMU: return "scm-emu";
    default: return "auto";
  }
}

[[noreturn]] void usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: sw_bench_array [options]\n"
               "  --array-mb M    array size in MiB (default 1024; pool is a bit larger)\n"
               "  --n N           8-byte stores per wrap (default 10)\n"
               "  --rounds R      interleaved rounds, median reported (default 3)\n"
               "  --seconds S     duration of each loop in each cell (default 0.4)\n"
               "  --rate W        open-loop arrivals per second (default 10000)\n"
               "  --tw-ns T       scm-emu write time per line (default 1000, or\n"
               "                  SOFTWRAP_SCM_WRITE_NS)\n"
               "  --ts-ns T       scm-emu pcommit serialization (default 220)\n"
               "  --t-alias-ns T  T_alias for the Table I estimate (default 450)\n"
               "  --alias-entries E, --retire-divisor D\n"
               "                  softwrap alias tables: E entries, retired from E/D on\n"
               "                  (default: the library's; the paper's are 8192 and 16)\n"
               "  --engines LIST  comma-separated (default nonatomic,softwrap,softwrap-local,undo)\n"
               "  --media LIST    comma-separated x86,scm-emu,msync (default x86,scm-emu)\n"
               "  --dir D         where pools are created (default /dev/shm)\n");
  std::exit(status);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  if (const char* tw = std::getenv("SOFTWRAP_SCM_WRITE_NS")) o.tw_ns = static_cast<uint32_t>(std::atoi(tw));
  if (const char* ts = std::getenv("SOFTWRAP_SCM_SERIAL_NS")) o.ts_ns = static_cast<uint32_t>(std::atoi(ts));
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (i + 1 >= argc) usage(2);
    std::string v = argv[++i];
    if (a == "--array-mb") o.array_mb = std::strtoull(v.c_str(), nullptr, 10);
    else if (a == "--n") o.n = static_cast<unsigned>(std::atoi(v.c_str()));
    else if (a == "--rounds") o.rounds = static_cast<unsigned>(std::atoi(v.c_str()));
    else if (a == "--seconds") o.seconds = std::atof(v.c_str());
    else if (a == "--rate") o.rate = std::atof(v.c_str());
    else if (a == "--tw-ns") o.tw_ns = static_cast<uint32_t>(std::atoi(v.c_str()));
    else if (a == "--ts-ns") o.ts_ns = static_cast<uint32_t>(std::atoi(v.c_str()));
    else if (a == "--t-alias-ns") o.t_alias_ns = std::atof(v.c_str());
    else if (a == "--alias-entries") o.alias_entries = static_cast<uint32_t>(std::atoi(v.c_str()));
    else if (a == "--retire-divisor") o.retire_divisor = static_cast<uint32_t>(std::atoi(v.c_str()));
    else if (a == "--dir") o.dir = v;
    else if (a == "--engines") {
      o.engines.clear();
      for (const auto& e : split(v)) {
        if (e == "softwrap") o.engines.push_back(SW_ENGINE_SOFTWRAP);
        else if (e == "softwrap-local") o.engines.push_back(SW_ENGINE_SOFTWRAP_LOCAL);
        else if (e == "undo") o.engines.push_back(SW_ENGINE_UNDO);
        else if (e == "nonatomic") o.engines.push_back(SW_ENGINE_NONATOMIC);
        else usage(2);
      }
    } else if (a == "--media") {
      o.media.clear();
      for (const auto& m : split(v)) {
        if (m == "x86") o.media.push_back(SW_MEDIUM_X86);
        else if (m == "scm-emu") o.media.push_back(SW_MEDIUM_SCM_EMU);
        else if (m == "msync") o.media.push_back(SW_MEDIUM_MSYNC);
        else usage(2);
      }
    } else {
      usage(2);
    }
  }
  if (o.array_mb == 0 || o.n == 0 || o.rounds == 0 || o.seconds <= 0 || o.rate <= 0 ||
      o.engines.empty() || o.media.empty()) {
    usage(2);
  }
  return o;
}

// xorshift64*: cheap enough not to show in the wrap time.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// What one cell measured.
struct CellResult {
  double closed_wraps_per_s = 0;
  double open_wrap_ns = 0;      // sw_wrap_open .. sw_wrap_close returned
  double open_response_ns = 0;  // arrival .. sw_wrap_close returned
  double open_p50_ns = 0, open_p99_ns = 0;  // percentiles of the wrap time
  double fences = 0, streamed = 0, flushes = 0, log_bytes = 0;  // per wrap
};

class ArrayBench {
 public:
  explicit ArrayBench(const Options& o) : o_(o) {}

  // Creates a fresh pool for one engine and medium, runs both loops, and
  // deletes the pool.  Exits on any library failure (a benchmark of a
  // failing engine means nothing).
  CellResult run_cell(sw_engine_kind engine, sw_medium_kind medium, uint64_t seed) {
    const std::string path = o_.dir + "/sw-bench-array-" + std::to_string(getpid());
    g_pool_path = path;
    const uint64_t array_bytes = o_.array_mb << 20;
    const uint64_t pool_bytes = array_bytes + std::max<uint64_t>(64ull << 20, array_bytes / 16);
    sw_config cfg{};
    cfg.engine = engine;
    cfg.medium = medium;
    cfg.scm_write_ns = o_.tw_ns;
    cfg.scm_serialize_ns = o_.ts_ns;
    cfg.alias_entries = o_.alias_entries;
    cfg.retire_divisor = o_.retire_divisor;
    cfg.lanes = 4;
    cfg.lane_size = 8ull << 20;
    cfg.flags = SW_CONFIG_OVERWRITE | SW_CONFIG_NO_WCL;  // the paper's system: no compare (SOFTWRAP_WCL overrides)
    sw_pool* pool = sw_pool_create(path.c_str(), pool_bytes, &cfg);
    if (pool == nullptr) die("sw_pool_create " + path);
    if (std::strcmp(sw_pool_engine_name(pool), engine_name(engine)) != 0 ||
        std::strcmp(sw_pool_medium_name(pool), medium_name(medium)) != 0) {
      std::fprintf(stderr, "sw_bench_array: asked for %s on %s, got %s on %s\n", engine_name(engine),
                   medium_name(medium), sw_pool_engine_name(pool), sw_pool_medium_name(pool));
      sw_pool_close(pool);
      std::remove(path.c_str());
      std::exit(2);
    }
    if (sw_wrap_open(pool) != 0) die("sw_wrap_open");
    auto* array = static_cast<uint64_t*>(sw_pmalloc(pool, array_bytes));
    if (array == nullptr) die("sw_pmalloc of the array");
    if (sw_wrap_close(pool) != 0) die("sw_wrap_close");
    prefault(array, array_bytes);

    const uint64_t words = array_bytes / 8;
    Rng rng{seed | 1};
    CellResult r;

    // Warm-up, then the closed loop with counters from a clean start.
    closed_loop(pool, array, words, rng, o_.seconds / 8);
    quiesce(pool);
    if (sw_pool_stats_reset(pool) != 0) die("sw_pool_stats_reset");
    auto [wraps, elapsed_s] = closed_loop(pool, array, words, rng, o_.seconds);
    r.closed_wraps_per_s = static_cast<double>(wraps) / elapsed_s;
    quiesce(pool);  // retirement's work belongs to these wraps
    sw_stats st{};
    if (sw_pool_stats(pool, &st) != 0) die("sw_pool_stats");
    r.fences = static_cast<double>(st.fences) / static_cast<double>(wraps);
    r.streamed = static_cast<double>(st.streamed_lines) / static_cast<double>(wraps);
    r.flushes = static_cast<double>(st.flushes) / static_cast<double>(wraps);
    r.log_bytes = static_cast<double>(st.log_bytes) / static_cast<double>(wraps);

    open_loop(pool, array, words, rng, &r);

    if (sw_pool_close(pool) != 0) die("sw_pool_close");
    std::remove(path.c_str());
    g_pool_path.clear();
    return r;
  }

 private:
  [[noreturn]] static void die(const std::string& what) {
    std::fprintf(stderr, "sw_bench_array: %s: %s\n", what.c_str(), sw_errormsg());
    if (!g_pool_path.empty()) std::remove(g_pool_path.c_str());
    std::exit(2);
  }

  static void quiesce(sw_pool* pool) {
    if (sw_pool_quiesce(pool) != 0) die("sw_pool_quiesce");
  }

  // Faults the array's pages in so that timing sees no first-touch faults.
  // MADV_POPULATE_WRITE maps them writable without storing anything;
  // where it is missing, one load per page does most of the work.
  static void prefault(void* p, uint64_t n) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    auto begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    auto end = reinterpret_cast<uintptr_t>(p) + n;
    if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return;
    for (uintptr_t a = begin; a < end; a += page) {
      (void)*reinterpret_cast<volatile const char*>(a);
    }
  }

  // One wrap of n random 8-byte stores.
  void one_wrap(sw_pool* pool, uint64_t* array, uint64_t words, Rng& rng) {
    if (sw_wrap_open(pool) != 0) die("sw_wrap_open");
    for (unsigned i = 0; i < o_.n; i++) {
      uint64_t v = rng.next();
      sw_store64(pool, &array[v % words], v);
    }
    if (sw_wrap_close(pool) != 0) die("sw_wrap_close");
  }

  // Wraps back to back for `seconds`; returns {wraps, elapsed seconds}.
  std::pair<uint64_t, double> closed_loop(sw_pool* pool, uint64_t* array, uint64_t words, Rng& rng,
                                          double seconds) {
    const auto start = Clock::now();
    const auto stop = start + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(seconds));
    uint64_t wraps = 0;
    Clock::time_point now;
    do {
      for (int k = 0; k < 32; k++) one_wrap(pool, array, words, rng);
      wraps += 32;
      now = Clock::now();
    } while (now < stop);
    return {wraps, std::chrono::duration<double>(now - start).count()};
  }

  // Wraps arriving every 1/rate seconds; a late wrap starts at once and its
  // response time includes the wait.
  void open_loop(sw_pool* pool, uint64_t* array, uint64_t words, Rng& rng, CellResult* r) {
    const auto wraps = static_cast<uint64_t>(std::max(1.0, o_.rate * o_.seconds));
    const double gap_ns = 1e9 / o_.rate;
    double wrap_ns = 0, response_ns = 0;
    std::vector<double> times;
    times.reserve(wraps);
    const auto t0 = Clock::now() + std::chrono::microseconds(100);
    for (uint64_t i = 0; i < wraps; i++) {
      const auto arrival = t0 + std::chrono::nanoseconds(static_cast<int64_t>(gap_ns * static_cast<double>(i)));
      for (auto now = Clock::now(); now < arrival; now = Clock::now()) {
        if (arrival - now > std::chrono::microseconds(200)) {
          std::this_thread::sleep_for(arrival - now - std::chrono::microseconds(100));
        } else {
          cpu_relax();
        }
      }
      const auto open = Clock::now();
      one_wrap(pool, array, words, rng);
      const auto closed = Clock::now();
      times.push_back(std::chrono::duration<double, std::nano>(closed - open).count());
      wrap_ns += times.back();
      response_ns += std::chrono::duration<double, std::nano>(closed - arrival).count();
    }
    r->open_wrap_ns = wrap_ns / static_cast<double>(wraps);
    r->open_response_ns = response_ns / static_cast<double>(wraps);
    std::sort(times.begin(), times.end());
    r->open_p50_ns = times[times.size() / 2];
    r->open_p99_ns = times[times.size() * 99 / 100];
  }

  const Options& o_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Table I of the full paper: estimated time of a wrap of n word stores.
double table1_estimate_ns(sw_engine_kind e, const Options& o) {
  const double n = o.n, tw = o.tw_ns, ts = o.ts_ns;
  const double log_lines = std::ceil(12.0 * n / 64.0);
  switch (e) {
    case SW_ENGINE_NONATOMIC: return n * tw + ts;
    case SW_ENGINE_UNDO: return n * (2 * tw + ts) + std::ceil(12.0 * n / 64.0 + 1) * tw + ts;
    case SW_ENGINE_SOFTWRAP:
    case SW_ENGINE_SOFTWRAP_LOCAL: return tw + std::max(n * o.t_alias_ns, log_lines * tw) + ts;
    default: return 0;
  }
}

// Table II of the full paper: measured time (ns) for n = 10, 15, 20.
double table2_measured_ns(sw_engine_kind e, unsigned n) {
  const int i = n == 10 ? 0 : n == 15 ? 1 : n == 20 ? 2 : -1;
  if (i < 0) return 0;
  static const double nonatomic[] = {10226, 15223, 20251};
  static const double undo[] = {25653, 37198, 48701};
  static const double softwrap[] = {6043, 7956, 11049};
  switch (e) {
    case SW_ENGINE_NONATOMIC: return nonatomic[i];
    case SW_ENGINE_UNDO: return undo[i];
    case SW_ENGINE_SOFTWRAP: return softwrap[i];
    default: return 0;
  }
}

struct Summary {
  sw_engine_kind engine;
  sw_medium_kind medium;
  CellResult median;
};

const Summary* find(const std::vector<Summary>& all, sw_engine_kind e, sw_medium_kind m) {
  for (const auto& s : all) {
    if (s.engine == e && s.medium == m) return &s;
  }
  return nullptr;
}

void print_table(const std::vector<Summary>& all, const Options& o) {
  for (sw_medium_kind m : o.media) {
    const Summary* base = find(all, SW_ENGINE_NONATOMIC, m);
    std::printf("\n%s%s\n", medium_name(m),
                m == SW_MEDIUM_SCM_EMU ? " (Tw per line and Ts per pcommit emulated)" : "");
    std::printf("%-15s %10s %6s | %8s %6s %8s %8s %9s | %6s %8s %7s %6s", "engine", "wraps/s", "ratio",
                "wrap ns", "ratio", "p50 ns", "p99 ns", "resp ns", "fences", "streamed", "flushes", "log B");
    if (m == SW_MEDIUM_SCM_EMU) std::printf(" | %9s %9s", "TableI ns", "paper ns");
    std::printf("\n");
    for (sw_engine_kind e : o.engines) {
      const Summary* s = find(all, e, m);
      if (s == nullptr) continue;
      const CellResult& c = s->median;
      double tput_ratio = base ? c.closed_wraps_per_s / base->median.closed_wraps_per_s : 0;
      double time_ratio = base ? c.open_wrap_ns / base->median.open_wrap_ns : 0;
      std::printf("%-15s %10.0f %6.2f | %8.0f %6.2f %8.0f %8.0f %9.0f | %6.2f %8.2f %7.2f %6.0f", engine_name(e),
                  c.closed_wraps_per_s, tput_ratio, c.open_wrap_ns, time_ratio, c.open_p50_ns, c.open_p99_ns,
                  c.open_response_ns, c.fences, c.streamed, c.flushes, c.log_bytes);
      if (m == SW_MEDIUM_SCM_EMU) {
        double est = table1_estimate_ns(e, o), paper = table2_measured_ns(e, o.n);
        if (est > 0) std::printf(" | %9.0f", est); else std::printf(" | %9s", "-");
        if (paper > 0) std::printf(" %9.0f", paper); else std::printf(" %9s", "-");
      }
      std::printf("\n");
    }
  }
}

// The bars; returns the number of failures.
int print_checks(const std::vector<Summary>& all, const Options& o) {
  int failures = 0;
  const std::string at_n = "n=" + std::to_string(o.n) + (o.n == 10 ? "" : ", bar stated for n=10");
  auto report = [&](bool ok, const std::string& text) {
    std::printf("%s  %s\n", ok ? "PASS" : "FAIL", text.c_str());
    failures += ok ? 0 : 1;
  };
  std::printf("\n");
  const Summary* xn = find(all, SW_ENGINE_NONATOMIC, SW_MEDIUM_X86);
  const Summary* xs = find(all, SW_ENGINE_SOFTWRAP, SW_MEDIUM_X86);
  if (xn && xs) {
    double ratio = xs->median.closed_wraps_per_s / xn->median.closed_wraps_per_s;
    char buf[200];
    std::snprintf(buf, sizeof buf, "x86: softwrap wraps/s >= 0.5x nonatomic (%.2fx, %s)", ratio, at_n.c_str());
    report(ratio >= 0.5, buf);
  }
  const Summary* sn = find(all, SW_ENGINE_NONATOMIC, SW_MEDIUM_SCM_EMU);
  const Summary* ss = find(all, SW_ENGINE_SOFTWRAP, SW_MEDIUM_SCM_EMU);
  const Summary* su = find(all, SW_ENGINE_UNDO, SW_MEDIUM_SCM_EMU);
  if (sn && ss) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "scm-emu: softwrap mean wrap time < nonatomic's (%.0f ns vs %.0f ns, %s)",
                  ss->median.open_wrap_ns, sn->median.open_wrap_ns, at_n.c_str());
    report(ss->median.open_wrap_ns < sn->median.open_wrap_ns, buf);
  }
  if (sn && su) {
    double ratio = su->median.open_wrap_ns / sn->median.open_wrap_ns;
    char buf[200];
    std::snprintf(buf, sizeof buf, "scm-emu: undo mean wrap time >= 2x nonatomic's (%.2fx, %s)", ratio,
                  at_n.c_str());
    report(ratio >= 2.0, buf);
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  // This program chooses engine and medium per pool; the environment must
  // not override them (Tw and Ts were read into the options above).
  for (const char* v : {"SOFTWRAP_ENGINE", "SOFTWRAP_MEDIUM", "SOFTWRAP_SCM_WRITE_NS", "SOFTWRAP_SCM_SERIAL_NS"}) {
    unsetenv(v);
  }
  std::printf("array update: %llu MiB array, n=%u random 8-byte stores per wrap, %u rounds x %.2f s per loop\n",
              static_cast<unsigned long long>(o.array_mb), o.n, o.rounds, o.seconds);
  std::printf("closed loop: wraps back to back; open loop: %.0f arrivals/s; scm-emu Tw=%u ns, Ts=%u ns; "
              "Table I uses T_alias=%.0f ns\n",
              o.rate, o.tw_ns, o.ts_ns, o.t_alias_ns);
  if (o.alias_entries != 0 || o.retire_divisor != 0) {
    std::printf("softwrap alias tables: %u entries, retire divisor %u (0 = library default)\n",
                o.alias_entries, o.retire_divisor);
  }
  std::printf("open loop: wrap ns (mean, p50, p99) from open to close return, resp ns (mean) from "
              "arrival;\nper-wrap counters include retirement; ratios are to nonatomic, medians over rounds\n");
  std::fflush(stdout);

  ArrayBench bench(o);
  std::vector<std::vector<CellResult>> cells(o.media.size() * o.engines.size());
  for (unsigned round = 0; round < o.rounds; round++) {
    for (size_t mi = 0; mi < o.media.size(); mi++) {
      for (size_t k = 0; k < o.engines.size(); k++) {
        size_t ei = (k + round) % o.engines.size();  // rotate the order
        uint64_t seed = 0x9E3779B97F4A7C15ull * (round * 131 + mi * 17 + ei + 1);
        cells[mi * o.engines.size() + ei].push_back(bench.run_cell(o.engines[ei], o.media[mi], seed));
      }
    }
  }

  std::vector<Summary> all;
  for (size_t mi = 0; mi < o.media.size(); mi++) {
    for (size_t ei = 0; ei < o.engines.size(); ei++) {
      const auto& runs = cells[mi * o.engines.size() + ei];
      auto med = [&](double CellResult::*f) {
        std::vector<double> v;
        for (const auto& c : runs) v.push_back(c.*f);
        return median(v);
      };
      CellResult m;
      m.closed_wraps_per_s = med(&CellResult::closed_wraps_per_s);
      m.open_wrap_ns = med(&CellResult::open_wrap_ns);
      m.open_response_ns = med(&CellResult::open_response_ns);
      m.open_p50_ns = med(&CellResult::open_p50_ns);
      m.open_p99_ns = med(&CellResult::open_p99_ns);
      m.fences = med(&CellResult::fences);
      m.streamed = med(&CellResult::streamed);
      m.flushes = med(&CellResult::flushes);
      m.log_bytes = med(&CellResult::log_bytes);
      all.push_back({o.engines[ei], o.media[mi], m});
    }
  }
  print_table(all, o);
  return print_checks(all, o) == 0 ? 0 : 1;
}
