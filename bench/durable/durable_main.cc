// durable_main.cc — sw_bench_durable: durable commits on an ordinary file
// system (issue 38).  Random uint64 keys -> uint64 values are inserted in
// batches, one durable commit per batch, into softwrap (a btree_map per
// thread in one pool at default settings: msync on a non-DAX file), LMDB
// (default, fully durable flags) and SQLite (synchronous=FULL, journal
// modes WAL and DELETE), from 1 and 4 threads, batches of 1 and 100.
//
// Approach.  Per cell (threads x batch) every thread's keys come from its
// own std::mt19937_64, the same for every contender.  A cell runs --rounds
// rounds; in each, every contender runs once, back to back, in an order
// rotated per round, each from an empty store in a fresh directory under
// --dir that is deleted afterwards.  Only the inserting threads are timed;
// after each run the store is checked (size, every key's value, the
// B+tree's verify()), and a failed check fails the program.  Per cell a
// table gives each contender's median inserts/s and commits/s over the
// rounds and softwrap's flush counters per commit (sw_stats); then the
// ratios side by side, then PASS/FAIL lines for issue 38's bars (exit
// status 1 on any FAIL unless --no-bars).  The machine is shared and
// noisy: only ratios measured in the same run mean much.
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../btree/bench_common.h"  // split
#include "durable.h"

namespace durable = softwrap::bench::durable;
using durable::Cell;
using durable::Keys;
using durable::RunResult;
using softwrap::bench::split;

namespace {

struct Options {
  std::vector<unsigned> threads{1, 4};
  std::vector<uint64_t> batches{1, 100};
  uint64_t inserts = 60000;  // per cell when batch > 1
  uint64_t commits = 3000;   // per cell when batch == 1
  unsigned rounds = 3;
  uint64_t seed = 1;
  size_t pool_mib = 256;
  std::vector<std::string> contenders{"softwrap", "lmdb", "sqlite-wal", "sqlite-delete"};
  bool quick = false, bars = true;
  std::string dir = "/var/tmp", csv;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --threads LIST     thread counts (default 1,4)\n"
               "  --batches LIST     inserts per commit (default 1,100)\n"
               "  --inserts N        inserts per cell of batch > 1, over all threads (default 60000)\n"
               "  --commits N        commits per cell of batch 1, over all threads (default 3000)\n"
               "  --rounds R         runs of each contender per cell; medians reported (default 3)\n"
               "  --contenders LIST  softwrap,lmdb,sqlite-wal,sqlite-delete (default all)\n"
               "  --pool-mib M       softwrap's pool size (default 256)\n"
               "  --seed S           key seed (default 1)\n"
               "  --dir D            where a fresh working directory is made (default /var/tmp)\n"
               "  --csv FILE         also write every run and every median as CSV\n"
               "  --quick            2,000 inserts / 60 commits per cell, 1 round, no bars\n"
               "  --no-bars          no PASS/FAIL bars (the stores are still checked)\n",
               argv0);
  std::exit(2);
}

uint64_t number(const char* argv0, const std::string& text) {
  uint64_t v = 0;
  if (!softwrap::bench::parse_count(text, &v) || v == 0) usage(argv0);
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (a == "--threads") {
      o.threads.clear();
      for (const std::string& t : split(next())) o.threads.push_back(static_cast<unsigned>(number(argv[0], t)));
    } else if (a == "--batches") {
      o.batches.clear();
      for (const std::string& b : split(next())) o.batches.push_back(number(argv[0], b));
    } else if (a == "--inserts") o.inserts = number(argv[0], next());
    else if (a == "--commits") o.commits = number(argv[0], next());
    else if (a == "--rounds") o.rounds = static_cast<unsigned>(number(argv[0], next()));
    else if (a == "--contenders") o.contenders = split(next());
    else if (a == "--pool-mib") o.pool_mib = number(argv[0], next());
    else if (a == "--seed") o.seed = number(argv[0], next());
    else if (a == "--dir") o.dir = next();
    else if (a == "--csv") o.csv = next();
    else if (a == "--quick") o.quick = true;
    else if (a == "--no-bars") o.bars = false;
    else usage(argv[0]);
  }
  for (const std::string& c : o.contenders)
    if (c != "softwrap" && c != "lmdb" && c != "sqlite-wal" && c != "sqlite-delete") usage(argv[0]);
  if (o.quick) {
    o.inserts = 2000;
    o.commits = 60;
    o.rounds = 1;
    o.bars = false;
  }
  return o;
}

// The file system's name for the header (durability costs nothing on tmpfs).
std::string fs_name(const std::string& dir) {
  struct statfs s {};
  if (statfs(dir.c_str(), &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "fs 0x%lx", static_cast<unsigned long>(s.f_type));
      return b;
    }
  }
}

Cell cell_of(const Options& o, unsigned threads, uint64_t batch) {
  const uint64_t total_commits = batch == 1 ? o.commits : o.inserts / batch;
  return Cell{threads, batch, std::max<uint64_t>(1, total_commits / threads)};
}

Keys keys_of(const Cell& c, uint64_t seed) {
  Keys k;
  std::vector<uint64_t> all;
  for (unsigned t = 0; t < c.threads; ++t) {
    std::mt19937_64 rng(seed * 1000003 + t);
    std::vector<uint64_t> v(c.batch * c.commits_per_thread);
    for (uint64_t& x : v) x = rng();
    k.per_thread.push_back(v);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    k.distinct_per_thread.push_back(v.size());
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  k.distinct_all = static_cast<uint64_t>(std::unique(all.begin(), all.end()) - all.begin());
  return k;
}

// One contender's runs in one cell and their medians.
struct Summary {
  Cell cell;
  std::string contender;
  std::vector<RunResult> runs;
  double inserts_per_s = 0, commits_per_s = 0;
  bool has_counters = false, has_device_syncs = false;
  // per commit: wraps, fences, fences_commit, fences_data, fences_retire,
  // device_syncs, device_syncs_commit; and fences_shared (a count)
  double per_commit[7] = {};
  double fences_shared = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void per_commit_of(const RunResult& r, double out[7], double* shared) {
  const durable::FlushCounters& c = *r.counters;
  const double n = static_cast<double>(r.commits);
  const uint64_t v[7] = {c.wraps, c.fences, c.fences_commit, c.fences_data, c.fences_retire, c.device_syncs,
                         c.device_syncs_commit};
  for (int i = 0; i < 7; ++i) out[i] = static_cast<double>(v[i]) / n;
  *shared = static_cast<double>(c.fences_shared);
}

void summarize(Summary* s) {
  std::vector<double> ins, com, pc[7], sh;
  for (const RunResult& r : s->runs) {
    ins.push_back(static_cast<double>(r.inserts) / r.seconds);
    com.push_back(static_cast<double>(r.commits) / r.seconds);
    if (r.counters) {
      s->has_counters = true;
      s->has_device_syncs = r.counters->has_device_syncs;
      double v[7], shared;
      per_commit_of(r, v, &shared);
      for (int i = 0; i < 7; ++i) pc[i].push_back(v[i]);
      sh.push_back(shared);
    }
  }
  s->inserts_per_s = median(ins);
  s->commits_per_s = median(com);
  for (int i = 0; i < 7; ++i) s->per_commit[i] = median(pc[i]);
  s->fences_shared = median(sh);
}

// With details: what each contender ran (engine and medium, versions).
void print_table(const std::vector<Summary>& sums, const Options& o, bool details) {
  const Summary& first = sums.front();
  std::printf("threads %u, batch %llu: %llu commits x %llu inserts per thread, %u round(s), medians\n",
              first.cell.threads, static_cast<unsigned long long>(first.cell.batch),
              static_cast<unsigned long long>(first.cell.commits_per_thread),
              static_cast<unsigned long long>(first.cell.batch), o.rounds);
  std::printf("  %-14s %11s %10s | %7s %7s %7s %7s %7s", "contender", "inserts/s", "commits/s", "wraps/c",
              "fence/c", "f_cmt/c", "f_dat/c", "f_ret/c");
  const bool syncs = std::any_of(sums.begin(), sums.end(), [](const Summary& s) { return s.has_device_syncs; });
  if (syncs) std::printf(" %7s %7s %8s", "sync/c", "s_cmt/c", "f_shared");
  std::printf("\n");
  for (const Summary& s : sums) {
    std::printf("  %-14s %11.0f %10.1f |", s.contender.c_str(), s.inserts_per_s, s.commits_per_s);
    if (s.has_counters) {
      for (int i = 0; i < 5; ++i) std::printf(" %7.3f", s.per_commit[i]);
      if (s.has_device_syncs) std::printf(" %7.3f %7.3f %8.0f", s.per_commit[5], s.per_commit[6], s.fences_shared);
    } else {
      std::printf(" %7s %7s %7s %7s %7s", "-", "-", "-", "-", "-");
      if (syncs) std::printf(" %7s %7s %8s", "-", "-", "-");
    }
    std::printf("\n");
  }
  if (details)
    for (const Summary& s : sums) std::printf("  (%s: %s)\n", s.contender.c_str(), s.runs.front().detail.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

const Summary* find(const std::vector<Summary>& all, unsigned threads, uint64_t batch, const std::string& name) {
  for (const Summary& s : all)
    if (s.cell.threads == threads && s.cell.batch == batch && s.contender == name) return &s;
  return nullptr;
}

void print_ratios(const std::vector<Summary>& all, const Options& o) {
  std::printf("softwrap's inserts/s over each contender's (same cell, medians):\n  %-18s", "cell");
  for (const std::string& c : o.contenders)
    if (c != "softwrap") std::printf(" %14s", c.c_str());
  std::printf("\n");
  for (unsigned t : o.threads)
    for (uint64_t b : o.batches) {
      const Summary* sw = find(all, t, b, "softwrap");
      char cell[32];
      std::snprintf(cell, sizeof cell, "threads %u batch %llu", t, static_cast<unsigned long long>(b));
      std::printf("  %-18s", cell);
      for (const std::string& c : o.contenders) {
        if (c == "softwrap") continue;
        const Summary* x = find(all, t, b, c);
        if (sw && x) std::printf(" %13.2fx", sw->inserts_per_s / x->inserts_per_s);
        else std::printf(" %14s", "-");
      }
      std::printf("\n");
    }
  if (o.threads.size() > 1) {
    const unsigned t0 = o.threads.front();
    std::printf("commits/s with more threads over %u thread(s), same contender and batch:\n", t0);
    for (unsigned t : o.threads) {
      if (t == t0) continue;
      for (uint64_t b : o.batches) {
        std::printf("  threads %u / %u, batch %-4llu", t, t0, static_cast<unsigned long long>(b));
        for (const std::string& c : o.contenders) {
          const Summary* hi = find(all, t, b, c);
          const Summary* lo = find(all, t0, b, c);
          if (hi && lo) std::printf("  %s %.2fx", c.c_str(), hi->commits_per_s / lo->commits_per_s);
        }
        std::printf("\n");
      }
    }
  }
  std::printf("\n");
}

// Issue 38's bars; returns false if any fails.  A bar whose cells were not
// run (or a contender not built) is reported as SKIP.
bool check_bars(const std::vector<Summary>& all) {
  bool ok = true;
  auto line = [&](bool pass, const std::string& text) {
    std::printf("%s  %s\n", pass ? "PASS" : "FAIL", text.c_str());
    ok &= pass;
  };
  auto skip = [](const std::string& text) { std::printf("SKIP  %s\n", text.c_str()); };
  char b[256];
  // softwrap over another contender, inserts/s or commits/s, same cell.
  auto ratio_bar = [&](const Summary* a, const Summary* x, double factor, bool commits, const std::string& what) {
    if (!a || !x) return skip(what + " (not run)");
    const double va = commits ? a->commits_per_s : a->inserts_per_s, vx = commits ? x->commits_per_s : x->inserts_per_s;
    std::snprintf(b, sizeof b, "%s: %.0f vs %.0f %s (%.2fx, bar %.1fx)", what.c_str(), va, vx,
                  commits ? "commits/s" : "inserts/s", va / vx, factor);
    line(va / vx >= factor, b);
  };
  const Summary* sw_1_100 = find(all, 1, 100, "softwrap");
  if (!sw_1_100) skip("batch 100, 1 thread: softwrap >= 115,000 inserts/s (not run)");
  else {
    std::snprintf(b, sizeof b, "batch 100, 1 thread: softwrap %.0f inserts/s (bar 115,000)", sw_1_100->inserts_per_s);
    line(sw_1_100->inserts_per_s >= 115000, b);
  }
  ratio_bar(sw_1_100, find(all, 1, 100, "lmdb"), 1.5, false, "batch 100, 1 thread: softwrap over LMDB");
  ratio_bar(sw_1_100, find(all, 1, 100, "sqlite-wal"), 1.5, false, "batch 100, 1 thread: softwrap over SQLite WAL");
  const Summary* sw_1_1 = find(all, 1, 1, "softwrap");
  ratio_bar(sw_1_1, find(all, 1, 1, "lmdb"), 1.5, false, "batch 1, 1 thread: softwrap over LMDB");
  ratio_bar(sw_1_1, find(all, 1, 1, "sqlite-wal"), 1.3, false, "batch 1, 1 thread: softwrap over SQLite WAL");
  const Summary* sw_4_1 = find(all, 4, 1, "softwrap");
  ratio_bar(sw_4_1, sw_1_1, 2.0, true, "batch 1: softwrap 4 threads over 1 thread");
  ratio_bar(sw_4_1, find(all, 4, 1, "sqlite-wal"), 2.0, true, "batch 1, 4 threads: softwrap over SQLite WAL (4 connections)");

  // Group commit, where the library counts device syncs: one per commit
  // alone (in every run), fewer with 4 threads committing at once.
  bool counted = false;
  for (const Summary& s : all) counted |= s.has_device_syncs;
  if (!counted) {
    skip("device syncs per commit (this build's sw_stats has no device_syncs)");
    return ok;
  }
  for (uint64_t batch : {uint64_t{1}, uint64_t{100}}) {
    const Summary* s = find(all, 1, batch, "softwrap");
    std::snprintf(b, sizeof b, "batch %llu, 1 thread: softwrap device_syncs_commit per commit == 1",
                  static_cast<unsigned long long>(batch));
    if (!s) {
      skip(std::string(b) + " (not run)");
      continue;
    }
    bool exact = true;
    std::string each;
    for (const RunResult& r : s->runs) {
      exact &= r.counters->device_syncs_commit == r.commits;
      each += (each.empty() ? "" : ", ") + std::to_string(r.counters->device_syncs_commit) + "/" +
              std::to_string(r.commits);
    }
    line(exact, std::string(b) + " (per run: " + each + ")");
  }
  if (!sw_4_1) skip("batch 1, 4 threads: softwrap device_syncs_commit per commit < 1 (not run)");
  else {
    std::snprintf(b, sizeof b, "batch 1, 4 threads: softwrap device_syncs_commit per commit %.3f < 1 (fences_shared %.0f)",
                  sw_4_1->per_commit[6], sw_4_1->fences_shared);
    line(sw_4_1->per_commit[6] < 1, b);
  }
  return ok;
}

bool write_csv(const std::string& path, const std::vector<Summary>& all, const std::string& fs) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(f,
               "threads,batch,contender,round,inserts,commits,seconds,inserts_per_s,commits_per_s,"
               "wraps_per_commit,fences_per_commit,fences_commit_per_commit,fences_data_per_commit,"
               "fences_retire_per_commit,device_syncs_per_commit,device_syncs_commit_per_commit,fences_shared,fs\n");
  auto counters = [&](bool has, bool syncs, const double pc[7], double shared) {
    if (!has) return std::fprintf(f, ",,,,,,,,");
    std::fprintf(f, ",%.4f,%.4f,%.4f,%.4f,%.4f", pc[0], pc[1], pc[2], pc[3], pc[4]);
    if (!syncs) return std::fprintf(f, ",,,");
    return std::fprintf(f, ",%.4f,%.4f,%.0f", pc[5], pc[6], shared);
  };
  for (const Summary& s : all) {
    for (size_t i = 0; i < s.runs.size(); ++i) {
      const RunResult& r = s.runs[i];
      std::fprintf(f, "%u,%llu,%s,%zu,%llu,%llu,%.6f,%.1f,%.2f", s.cell.threads,
                   static_cast<unsigned long long>(s.cell.batch), s.contender.c_str(), i + 1,
                   static_cast<unsigned long long>(r.inserts), static_cast<unsigned long long>(r.commits), r.seconds,
                   r.inserts / r.seconds, r.commits / r.seconds);
      double pc[7] = {}, shared = 0;
      if (r.counters) per_commit_of(r, pc, &shared);
      counters(r.counters.has_value(), r.counters && r.counters->has_device_syncs, pc, shared);
      std::fprintf(f, ",%s\n", fs.c_str());
    }
    const RunResult& r = s.runs.front();
    std::fprintf(f, "%u,%llu,%s,median,%llu,%llu,,%.1f,%.2f", s.cell.threads,
                 static_cast<unsigned long long>(s.cell.batch), s.contender.c_str(),
                 static_cast<unsigned long long>(r.inserts), static_cast<unsigned long long>(r.commits),
                 s.inserts_per_s, s.commits_per_s);
    counters(s.has_counters, s.has_device_syncs, s.per_commit, s.fences_shared);
    std::fprintf(f, ",%s\n", fs.c_str());
  }
  return std::fclose(f) == 0;
}

std::unique_ptr<durable::Contender> make(const std::string& name, const Options& o) {
  if (name == "softwrap") return durable::make_softwrap(o.pool_mib << 20);
  if (name == "sqlite-wal") return durable::make_sqlite(true);
  if (name == "sqlite-delete") return durable::make_sqlite(false);
#ifdef SW_HAVE_LMDB
  return durable::make_lmdb();
#else
  return nullptr;  // lmdb: not in this build
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::vector<std::unique_ptr<durable::Contender>> cs;
  for (const std::string& name : o.contenders) {
    if (auto c = make(name, o)) cs.push_back(std::move(c));
    else std::printf("LMDB skipped: this build did not find liblmdb (apt-get install liblmdb-dev)\n");
  }
  o.contenders.clear();
  for (auto& c : cs) o.contenders.push_back(c->name());

  std::string work = o.dir + "/sw_bench_durable.XXXXXX";
  if (!mkdtemp(work.data())) {
    std::fprintf(stderr, "cannot make a directory under %s: %s\n", o.dir.c_str(), std::strerror(errno));
    return 1;
  }
  const std::string fs = fs_name(work);
  std::printf("Durable commits on a file system (issue 38): random uint64 keys -> uint64 values, one durable commit "
              "per batch, in %s (%s); softwrap at default settings, pool %zu MiB; LMDB default flags; SQLite "
              "synchronous=FULL; %u round(s) per cell, contenders rotated per round\n\n",
              work.c_str(), fs.c_str(), o.pool_mib, o.rounds);
  if (fs == "tmpfs") std::printf("note: %s is tmpfs, where a sync costs nothing: the numbers say little\n\n", o.dir.c_str());

  std::vector<Summary> all;
  bool ok = true;
  try {
    for (unsigned t : o.threads)
      for (uint64_t b : o.batches) {
        const Cell cell = cell_of(o, t, b);
        const Keys keys = keys_of(cell, o.seed);
        std::vector<Summary> sums(cs.size());
        for (size_t i = 0; i < cs.size(); ++i) {
          sums[i].cell = cell;
          sums[i].contender = cs[i]->name();
        }
        for (unsigned r = 0; r < o.rounds; ++r)
          for (size_t j = 0; j < cs.size(); ++j) {
            const size_t i = (j + r) % cs.size();
            const std::string dir = work + "/" + cs[i]->name();
            std::filesystem::create_directory(dir);
            RunResult res;
            try {
              res = cs[i]->run(dir, cell, keys);
            } catch (const durable::check_failure& e) {
              std::printf("FAIL  check after the run: %s\n", e.what());
              ok = false;
            }
            std::filesystem::remove_all(dir);
            if (res.commits) sums[i].runs.push_back(res);
          }
        std::vector<Summary> done;
        for (Summary& s : sums)
          if (!s.runs.empty()) {
            summarize(&s);
            done.push_back(s);
          }
        if (!done.empty()) print_table(done, o, all.empty());
        all.insert(all.end(), done.begin(), done.end());
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sw_bench_durable: %s\n", e.what());
    std::filesystem::remove_all(work);
    return 1;
  }
  std::filesystem::remove_all(work);

  if (!all.empty()) print_ratios(all, o);
  if (!o.csv.empty()) ok &= write_csv(o.csv, all, fs);
  if (o.bars) ok &= check_bars(all);
  else std::printf("bars not checked (--no-bars or --quick)\n");
  std::printf("%s\n", ok ? "all checks passed" : "some checks FAILED");
  return ok ? 0 : 1;
}
