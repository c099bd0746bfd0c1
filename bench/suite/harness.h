// harness.h — what the experiments of the evaluation suite share.
//
// Approach: one pool file per experiment run holds a large array (1 GiB as
// in the paper; less with --quick) allocated once; every measurement
// *cell* (engine, medium, parameters) reopens that file with its own
// sw_config — the engine, the medium and the alias tables are open-time
// choices — and faults the mapping in before timing, so cells differ only
// in what they measure.  Workloads are deterministic streams of wraps
// (ArrayWorkload): the values they store are a function of the wrap's
// sequence number, so after a cell the harness replays the stream and
// checks the final contents of a sample of words, through sw_load64 while
// the pool is open and in the raw mapping after sw_pool_quiesce (which
// proves retirement wrote them home).  The loops are the paper's: open
// loop (arrivals at a fixed rate for a fixed wall time: wrap time from
// sw_wrap_open to the return of sw_wrap_close, response time from the
// arrival, achieved throughput) and closed loop (wraps back to back, on
// one or more threads).  Results go to CSV files under
// <out>/<experiment>/, a progress line is redrawn on stderr with \r, and
// counter checks (wraps committed, fences per wrap) make a cell fail
// loudly instead of printing a wrong number.
#ifndef SOFTWRAP_BENCH_SUITE_HARNESS_H_
#define SOFTWRAP_BENCH_SUITE_HARNESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "softwrap/softwrap.h"

namespace softwrap::bench {

using Clock = std::chrono::steady_clock;

// Options of one suite run (from `softwrap bench`).
struct SuiteOptions {
  std::string out_dir = "results";
  std::string pool_dir = "/dev/shm";
  bool quick = false;
  bool plot = true;
  double time_scale = 1.0;  // multiplies every cell's duration
  bool pin = true;          // see pin_threads()
};

// Single-threaded cells: the calling (foreground) thread is pinned to the
// first allowed CPU and every other thread of the process (the library's
// retirement thread) to the remaining ones, so the background never waits
// for the foreground's CPU — the paper's 6-core machine had idle cores for
// it.  Without it, on a 2-CPU machine the kernel often wakes the retirer on
// the foreground's CPU, where it waits milliseconds for the foreground's
// time slice to end (measured: wake-ups 2–5 ms late, table switches only
// at the throttle).  No-op with fewer than 2 allowed CPUs or when disabled.
void set_pinning(bool on);
void pin_threads();
void unpin_threads();  // every thread of the process back on all CPUs

// Thrown (as a message) when a run cannot continue or a check fails.
struct BenchFailure {
  std::string what;
};
[[noreturn]] void fail(const std::string& what);
[[noreturn]] void fail_sw(const std::string& what);  // appends sw_errormsg()

// xorshift64*: a few ns, deterministic from its seed.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull | 1) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

const char* engine_str(sw_engine_kind e);
const char* medium_str(sw_medium_kind m);

// Pool files of up to 1.2 GiB in /dev/shm must not outlive an interrupted
// run: registered paths are unlinked on SIGINT, SIGTERM, SIGHUP and SIGPIPE
// (then the signal's default action runs).  At most 8 at a time.
void register_temp_file(const std::string& path);
void unregister_temp_file(const std::string& path);

// Faults [p, p+n) in for writing (before timing a mapping).
void prefault(void* p, uint64_t n);

// The paper's setting on scm-emu: Tw = 1 µs, Ts = 220 ns.
struct CellConfig {
  sw_engine_kind engine = SW_ENGINE_SOFTWRAP;
  sw_medium_kind medium = SW_MEDIUM_SCM_EMU;
  uint32_t tw_ns = 1000;
  uint32_t ts_ns = 220;
  uint32_t alias_entries = 8192;  // the paper's 8K-entry tables ...
  uint32_t retire_divisor = 16;   // ... retired from 512 entries on (paper: 500)
  uint32_t flags = 0;             // SW_CONFIG_* (SW_CONFIG_WCL: the WCL experiment)
};

// A pool file with one big array, reopened per cell.
class ArrayPool {
 public:
  ArrayPool(const std::string& dir, uint64_t array_bytes);
  ~ArrayPool();
  ArrayPool(const ArrayPool&) = delete;
  ArrayPool& operator=(const ArrayPool&) = delete;

  // Opens the file with cfg and faults the mapping in.
  sw_pool* open(const CellConfig& cfg);
  void close();  // closes the open pool (retires everything)
  sw_pool* pool() const { return pool_; }
  uint64_t* array() const { return array_; }
  uint64_t words() const { return words_; }

 private:
  std::string path_;
  uint64_t array_bytes_, words_;
  sw_pool* pool_ = nullptr;
  uint64_t* array_ = nullptr;
};

// Where a wrap's n words are (sw_store64 each, except kBlock).
enum class Pattern {
  kRandom,     // random words of the array (the paper's array update)
  kBlock,      // one sw_write of n contiguous words (the slides' block copy)
  kSequential, // n consecutive words, one sw_store64 each (workshop paper)
  kPerLine,    // one word in each of n consecutive cache lines (workshop)
};
const char* pattern_str(Pattern p);

// A deterministic stream of wraps over [base, base + words).  Each wrap
// stores n words placed by `pattern`; with probability `reuse` a random
// word is instead one written by the last few wraps (Fig. 12).
class ArrayWorkload {
 public:
  ArrayWorkload(uint64_t* base, uint64_t words, unsigned n, uint64_t seed, double reuse = 0,
                Pattern pattern = Pattern::kRandom);
  void wrap(sw_pool* p);  // one wrap; fails the run on an API error
  uint64_t wraps() const { return seq_; }
  unsigned n() const { return n_; }
  // Replays the stream and compares the final value of every word written
  // by a sampled wrap, through sw_load64 (raw=false, pool open) or in the
  // mapping (raw=true, after quiesce).  Fails the run on a mismatch.
  void verify(sw_pool* p, bool raw) const;
  // Random pattern only: word i of this workload is base[i * k] (words
  // counts this workload's words), so that k workloads with bases base,
  // base + 1, ... share one array, each spread over all of it, without
  // ever writing each other's words.
  void set_stride(unsigned k);

 private:
  struct Gen;
  uint64_t* base_;
  uint64_t words_;
  unsigned n_;
  uint64_t seed_;
  double reuse_;
  Pattern pattern_;
  uint64_t seq_ = 0;
  uint64_t stride_ = 1;
  uint64_t salt_;  // distinct per workload object (value_of)
  Rng rng_;
  std::vector<uint64_t> recent_;  // ring of recently written word indexes
  size_t recent_at_ = 0;
  std::vector<uint64_t> idx_;     // this wrap's word indexes
  std::vector<uint64_t> buf_;     // block mode: the values
  void next_indexes(Rng& rng, std::vector<uint64_t>& recent, size_t& recent_at, std::vector<uint64_t>& out) const;
};

// The value a workload stores as word i of wrap seq.  `salt` tells cells
// apart: every cell replays the same seeded index sequence into the same
// array, so without it a cell would store exactly the values the previous
// cell left at home — and softwrap's retirement, which skips home bytes
// that already hold the value, would write nothing.
inline uint64_t value_of(uint64_t seq, unsigned i, uint64_t salt = 0) {
  uint64_t x = ((seq << 12 | i) ^ (salt * 0xD6E8FEB86659FD93ull)) + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Helper programs (the PMDK peer, sw_bench_btree, sw_tpcc, plot.py).
bool is_file(const std::string& path);
std::string self_dir();  // where the running program is
// The program `name`: $env, else `built` (the path the build compiled in),
// else next to the running program; "" if none exists.
std::string find_program(const char* env, const char* built, const std::string& name);
// Runs argv with extra environment entries and waits; returns its exit
// status (128 + signal; -1 if it could not start).  With `out`, what it
// writes to stdout is appended there.
int run_program(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                std::string* out = nullptr);

// The median of a sample (0 for none).
double median(std::vector<double> v);

// sw_stats is all uint64_t: adds b into *a field by field.
void add_stats(sw_stats* a, const sw_stats& b);

// A pool file under test: any old file at the path is removed first, and
// the file is removed (and unregistered) when this is destroyed.
struct TempPool {
  explicit TempPool(std::string p);
  ~TempPool();
  TempPool(const TempPool&) = delete;
  TempPool& operator=(const TempPool&) = delete;
  std::string path;
};

// Percentile summary of a sample (ns).
struct Dist {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double tmean = 0;  // mean of the values up to p99 (drops preemptions)
  static Dist of(std::vector<double> v);
};

struct OpenLoopResult {
  double offered = 0;     // arrivals per second
  double throughput = 0;  // wraps completed per second of the run
  uint64_t wraps = 0;
  Dist wrap_ns;           // open .. close returned
  Dist resp_ns;           // arrival .. close returned
};

// Per-wrap record for Fig. 8.
struct WrapTrace {
  double arrival_us, open_us, close_us;  // from the start of the run
  uint64_t table_switches;                // cumulative, read after the wrap
  uint64_t retired_entries;
};

// Wraps arriving every 1/rate s for `seconds` of wall time (a late wrap
// starts at once; wraps still unserved at the end are not counted).
OpenLoopResult open_loop(sw_pool* p, ArrayWorkload& w, double rate, double seconds,
                         std::vector<WrapTrace>* trace = nullptr);

// Wraps back to back for `seconds`; returns wraps per second.
double closed_loop(sw_pool* p, ArrayWorkload& w, double seconds);

// Per-wrap counters after a measured loop (the pool is quiesced first, so
// retirement's work is included), with sanity checks: exactly `wraps`
// wraps committed and at least one commit fence each.
struct PerWrap {
  double fences = 0, fences_log = 0, fences_retire = 0, streamed = 0, flushes = 0, home_writes = 0,
         log_bytes = 0, table_switches = 0, retired = 0;
  double retire_ns = 0;  // wall time the retirement thread spent retiring
  uint64_t wraps = 0;
};
PerWrap counters_since_reset(sw_pool* p, uint64_t wraps);
void reset_counters(sw_pool* p);

// One measurement cell: reopen the pool with cfg, warm up, reset the
// counters, run the loop (open at `rate`, closed if rate == 0), read the
// per-wrap counters, verify the array through the API and raw after
// quiesce, close.
struct CellSpec {
  CellConfig cfg;
  unsigned n = 10;
  double reuse = 0;
  Pattern pattern = Pattern::kRandom;
  double rate = 0;  // arrivals/s; 0 = closed loop
  double seconds = 0.3;
  uint64_t seed = 1;
};
struct CellOutcome {
  OpenLoopResult open;     // rate > 0
  double closed_tput = 0;  // rate == 0
  PerWrap per;
};
class Context;
CellOutcome run_cell(Context& ctx, const CellSpec& s, std::vector<WrapTrace>* trace = nullptr);

// A CSV file under <out>/<experiment>/.
class Csv {
 public:
  Csv(const std::string& path, const std::vector<std::string>& header);
  ~Csv();
  Csv& add(const std::string& v);
  Csv& add(double v);
  Csv& add(uint64_t v);
  Csv& add(int v) { return add(static_cast<double>(v)); }
  Csv& add(unsigned v) { return add(static_cast<uint64_t>(v)); }
  void end_row();

 private:
  FILE* f_;
  size_t cols_, at_ = 0;
};

// The context an experiment runs in.
class Context {
 public:
  // Output goes to <out>/<experiment>/; `label` names the progress line
  // (default: the experiment).
  Context(const SuiteOptions& o, const std::string& experiment, const std::string& meta_name = "meta.csv",
          const std::string& label = "");
  ~Context();
  const SuiteOptions& opts() const { return o_; }
  bool quick() const { return o_.quick; }
  // Duration of one cell: `full` seconds, or `quick` with --quick.
  double secs(double full, double quick) const { return (o_.quick ? quick : full) * o_.time_scale; }
  std::string dir() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  // The experiment's shared array pool (created on first use).
  ArrayPool& pool();
  uint64_t array_bytes() const { return o_.quick ? (64ull << 20) : (1024ull << 20); }
  // Progress line: "[exp] step/total what", redrawn with \r.
  void set_total(int total) { total_ = total; }
  void step(const std::string& what);
  // Free-form facts recorded in meta.csv (load average, CPU time stolen by
  // the hypervisor while the experiment ran, options, checks).
  void note(const std::string& key, const std::string& value);
  void check(bool ok, const std::string& what);  // recorded; failing => run fails
  int failures() const { return failures_; }

 private:
  SuiteOptions o_;
  std::string name_, dir_, meta_name_;
  ArrayPool* pool_ = nullptr;
  int total_ = 0, done_ = 0, failures_ = 0;
  std::vector<std::pair<std::string, std::string>> notes_;
  Clock::time_point start_;
  std::pair<uint64_t, uint64_t> steal_start_;  // /proc/stat: steal and total ticks
};

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

// Paper's Table I estimate (ns) of a wrap of n word stores; T_alias = 450.
double table1_estimate_ns(sw_engine_kind e, unsigned n, double tw, double ts, double t_alias = 450);

}  // namespace softwrap::bench

#endif  // SOFTWRAP_BENCH_SUITE_HARNESS_H_
