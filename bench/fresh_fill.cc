// fresh_fill.cc — a root or a zeroed block as large as the pool's free
// space, on every engine, against the limit: memset plus flush of the same
// bytes (docs/benchmarks.md, "Fresh blocks").
//
// A block a wrap allocates is written in place (engine/fresh.h), and
// sw_pzalloc / a new root write nothing where the pool knows its bytes are
// zero.  Per engine, three cases, each in a new pool of --pool bytes (in
// /dev/shm, pages touched beforehand so that no case pays page faults the
// limit does not):
//   root     sw_pool_root(p, --root bytes) in a new pool (its chunks are
//            known to be zero);
//   pzalloc  sw_pzalloc of the heap's whole free space in a new pool;
//   used     the same after the heap was filled with other bytes, freed
//            and the pool reopened (nothing is known to be zero: every
//            byte is zeroed in place).
// The limit: memset of the same number of bytes in a mapping of /dev/shm,
// then a flush of every line and a fence, with the library's x86 medium
// (the same flush instruction).  Medians of --reps runs; each case is timed
// side by side with its limit (interleaved).  The closing lines print
// PASS/FAIL for the bar: every case at most 1.2x its limit (exit
// status 1 on a FAIL).  --csv FILE also writes the table's rows at full
// precision (one per engine and case, with the bar's verdict, also under
// --quick) and the run's parameters, for bench/suite/make-results.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/runtime.h"
#include "medium/medium.h"
#include "softwrap/softwrap.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Options {
  uint64_t pool = 768ull << 20;
  uint64_t root = 512ull << 20;
  int reps = 3;
  std::string dir = "/dev/shm";
  std::vector<std::string> engines = {"softwrap", "softwrap-local", "undo", "undo-themis", "nonatomic"};
  bool quick = false;
  std::string csv;
};

constexpr double kBar = 1.2;  // the bar: at most 1.2x memset + flush

sw_engine_kind engine_of(const std::string& e) {
  if (e == "softwrap-local") return SW_ENGINE_SOFTWRAP_LOCAL;
  if (e == "undo") return SW_ENGINE_UNDO;
  if (e == "undo-themis") return SW_ENGINE_UNDO_THEMIS;
  if (e == "nonatomic") return SW_ENGINE_NONATOMIC;
  return SW_ENGINE_SOFTWRAP;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "sw_bench_fill: %s: %s\n", what, sw_errormsg());
  std::exit(2);
}

// Faults in every page of [p, p+n) for writing: rewrites one byte of each
// page with its own value (a read alone could map a shared zero page).
void touch(void* p, size_t n) {
  auto* c = static_cast<volatile unsigned char*>(p);
  for (size_t i = 0; i < n; i += 4096) c[i] = c[i];
}

class Limit {
 public:
  Limit(const std::string& dir, size_t n) : path_(dir + "/sw_bench_fill_limit_" + std::to_string(getpid())), n_(n) {
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(n)) != 0) die("limit file");
    p_ = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p_ == MAP_FAILED) die("limit mmap");
    touch(p_, n);
    softwrap::MediumOptions mo;
    mo.kind = SW_MEDIUM_X86;
    medium_ = softwrap::make_medium(mo, static_cast<char*>(p_), n);
    if (!medium_) die("x86 medium");
  }
  ~Limit() {
    munmap(p_, n_);
    unlink(path_.c_str());
  }
  // memset + flush + fence of the first n bytes.
  double run(size_t n) {
    std::memset(p_, 0x5A, n);  // not zero before: the memset writes
    medium_->flush(p_, n);
    medium_->fence(softwrap::FenceKind::kOther);
    const auto t0 = Clock::now();
    std::memset(p_, 0, n);
    medium_->flush(p_, n);
    medium_->fence(softwrap::FenceKind::kOther);
    return seconds_since(t0);
  }

 private:
  std::string path_;
  size_t n_;
  void* p_;
  std::unique_ptr<softwrap::Medium> medium_;
};

struct Cell {
  std::string engine, kase;
  uint64_t bytes = 0;
  std::vector<double> t, limit;
  uint64_t fresh_words = 0, log_bytes = 0;
};

sw_config config_of(const std::string& e) {
  sw_config c{};
  c.engine = engine_of(e);
  c.medium = SW_MEDIUM_X86;
  if (c.engine == SW_ENGINE_UNDO_THEMIS) c.flags |= SW_CONFIG_THEMIS_IDEAL;  // x86 does not keep the Themis rule
  return c;
}

// One line per cell: the printed columns at full precision, the bar's
// verdict (also under --quick) and the run's parameters.
bool write_csv(const Options& o, const std::vector<Cell>& cells) {
  FILE* f = std::fopen(o.csv.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
    return false;
  }
  std::fprintf(f, "engine,case,bytes,ms,baseline_ms,ratio,bar,result,fresh_words,log_bytes,reps,pool_mib,root_mib\n");
  for (const Cell& c : cells) {
    const double t = median(c.t), l = median(c.limit), r = t / l;
    std::fprintf(f, "%s,%s,%llu,%.6f,%.6f,%.6f,%.1f,%s,%llu,%llu,%d,%llu,%llu\n", c.engine.c_str(), c.kase.c_str(),
                 static_cast<unsigned long long>(c.bytes), t * 1e3, l * 1e3, r, kBar, r <= kBar ? "PASS" : "FAIL",
                 static_cast<unsigned long long>(c.fresh_words), static_cast<unsigned long long>(c.log_bytes), o.reps,
                 static_cast<unsigned long long>(o.pool >> 20), static_cast<unsigned long long>(o.root >> 20));
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) std::fprintf(stderr, "cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
  return ok;
}

uint64_t free_heap(sw_pool* p) { return p->alloc->stats().free_chunks * (256u << 10); }

// One run of a case; returns seconds of the timed call, fills counters.
double run_case(const Options& o, const std::string& e, const std::string& kase, Cell* cell) {
  const std::string path = o.dir + "/sw_bench_fill_" + std::to_string(getpid()) + "_" + e;
  unlink(path.c_str());
  sw_config c = config_of(e);
  sw_pool* p = sw_pool_create(path.c_str(), o.pool, &c);
  if (!p) die("create");
  touch(static_cast<char*>(sw_pool_base(p)), sw_pool_size(p));
  if (kase == "used") {
    // Fill the heap with other bytes, free it, reopen: nothing is known to
    // be zero any more.
    const uint64_t n = free_heap(p);
    if (sw_wrap_open(p) != 0) die("used: open");
    void* junk = sw_pmalloc(p, n);  // fresh in this wrap: the memset goes home in place
    if (!junk || sw_memset(p, junk, 0xA5, n) != 0 || sw_wrap_close(p) != 0 || sw_pfree(p, junk) != 0) {
      die("used: fill");
    }
    if (sw_pool_close(p) != 0) die("close");
    p = sw_pool_open(path.c_str(), &c);
    if (!p) die("reopen");
    touch(static_cast<char*>(sw_pool_base(p)), sw_pool_size(p));  // a new mapping: fault it in again
  }
  sw_pool_stats_reset(p);
  void* block = nullptr;
  uint64_t n = 0;
  const auto t0 = Clock::now();
  if (kase == "root") {
    n = o.root;
    block = sw_pool_root(p, n);
  } else {
    n = free_heap(p);
    block = sw_pzalloc(p, n);
  }
  const double t = seconds_since(t0);
  if (!block) die(kase.c_str());
  // Zero, as promised (sampled).
  for (uint64_t i = 0; i < n; i += 4093 * 8) {
    if (static_cast<const unsigned char*>(block)[i] != 0) {
      std::fprintf(stderr, "sw_bench_fill: %s %s: byte %llu is not zero\n", e.c_str(), kase.c_str(),
                   static_cast<unsigned long long>(i));
      std::exit(2);
    }
  }
  sw_stats s{};
  sw_pool_stats(p, &s);
  cell->bytes = n;
  cell->fresh_words = s.fresh_words;
  cell->log_bytes = s.log_bytes;
  if (sw_pool_close(p) != 0) die("close");
  unlink(path.c_str());
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
      o.pool = 64ull << 20;
      o.root = 32ull << 20;
      o.reps = 1;
    } else if (a == "--pool") {
      o.pool = std::stoull(next()) << 20;
    } else if (a == "--root") {
      o.root = std::stoull(next()) << 20;
    } else if (a == "--reps") {
      o.reps = std::stoi(next());
    } else if (a == "--dir") {
      o.dir = next();
    } else if (a == "--csv") {
      o.csv = next();
    } else if (a == "--engines") {
      o.engines.clear();
      std::string s = next();
      for (size_t at = 0; at <= s.size();) {
        const size_t comma = std::min(s.find(',', at), s.size());
        o.engines.push_back(s.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--pool MiB] [--root MiB] [--reps N] [--engines LIST] [--dir D]\n"
                   "          [--csv FILE]\n"
                   "  a root (--root, default 512 MiB) and sw_pzalloc of the whole free heap in new pools of\n"
                   "  --pool MiB (default 768), and sw_pzalloc after the heap was used, against memset + flush\n"
                   "  --csv FILE   also write the rows as CSV (with the bar's verdict, reps, pool and root MiB)\n",
                   argv[0]);
      return 2;
    }
  }
  Limit limit(o.dir, o.pool);
  std::vector<Cell> cells;
  for (const std::string& e : o.engines) {
    for (const char* kase : {"root", "pzalloc", "used"}) {
      Cell cell;
      cell.engine = e;
      cell.kase = kase;
      for (int r = 0; r < o.reps; ++r) {
        cell.t.push_back(run_case(o, e, kase, &cell));
        cell.limit.push_back(limit.run(cell.bytes));
      }
      cells.push_back(cell);
    }
  }
  std::printf("Fresh blocks: a root / sw_pzalloc as large as the free heap (pool %llu MiB), medians of %d, "
              "against memset + flush + fence of the same bytes\n\n",
              static_cast<unsigned long long>(o.pool >> 20), o.reps);
  std::printf("%-15s %-8s %10s %10s %10s %7s %12s %9s\n", "engine", "case", "MiB", "ms", "limit ms", "ratio",
              "fresh words", "log B");
  bool ok = true;
  for (const Cell& c : cells) {
    const double t = median(c.t), l = median(c.limit), r = t / l;
    std::printf("%-15s %-8s %10.1f %10.2f %10.2f %6.2fx %12llu %9llu\n", c.engine.c_str(), c.kase.c_str(),
                c.bytes / 1048576.0, t * 1e3, l * 1e3, r, static_cast<unsigned long long>(c.fresh_words),
                static_cast<unsigned long long>(c.log_bytes));
    if (!o.quick && r > kBar) ok = false;
  }
  std::printf("\n");
  const bool csv_ok = o.csv.empty() || write_csv(o, cells);
  if (!o.quick) {
    for (const Cell& c : cells) {
      const double r = median(c.t) / median(c.limit);
      std::printf("%s  %s %s: %.2fx memset + flush (bar: at most 1.2x)\n", r <= kBar ? "PASS" : "FAIL",
                  c.engine.c_str(), c.kase.c_str(), r);
    }
  }
  return ok && csv_ok ? 0 : 1;
}
