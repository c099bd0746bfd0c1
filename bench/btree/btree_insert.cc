// btree_insert.cc — the SoftWrAP paper's B+tree experiment (full paper,
// section V-D; Figs. 13 and 14): one million single-insert wraps into a
// persistent B+tree (softwrap::btree_map<uint64_t, uint64_t>, default
// traits), with sequential and with random keys, for every engine on the
// emulated SCM (scm-emu, Tw = 1 µs) and on x86; on x86 also PMDK's
// btree_map example (bench/btree/pmdk_peer.h) with the same keys.
//
// Approach: per (medium, key order) every contender gets a fresh pool in
// /dev/shm (pre-faulted) and an empty tree; the keys are then inserted in
// chunks of 10,000, visiting the contenders round-robin with the order
// rotated per chunk, so that all of them see the same machine conditions
// (interleaved in one run).  Each insert is one wrap: the tree's own
// (for PMDK: btree_map_insert's own transaction).  Reported: µs per
// insert, inserts/s, and per insert the loads and stores counted by
// sw_pool_stats (the paper: sequential 61.6 reads and 8.1 writes, random
// 74.8 and 20; a node read whole with one sw_read counts as one load, and an
// sw_write of a shifted range as one store), log bytes and fences.
// Every tree is verify()'d and its size checked afterwards.
//
// PMDK's pool is not on DAX here; the program re-executes itself with
// PMEM_IS_PMEM_FORCE=1 so that libpmem flushes with cache-line
// instructions, as our x86 medium does, instead of msync.
//
// The closing lines print PASS/FAIL for the bars (exit status 1 on
// any FAIL): on scm-emu, per key order, softwrap within 10 % of nonatomic
// and undo at least 3x softwrap per insert; on x86, softwrap's random
// inserts/s at least 2x PMDK's.  --quick runs 20,000 keys (no bars).
// --csv FILE also writes every printed row (one per medium, key order and
// contender; PMDK's counters empty) with the run's parameters and the
// cell's CPU steal time, for bench/suite/make-results.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "softwrap/btree_map.hpp"

#ifdef SW_HAVE_PMDK_PEER
#include "pmdk_peer.h"
#endif

namespace {

using softwrap::bench::engine_kind;
using softwrap::bench::prefault;
using softwrap::bench::split;
using Clock = std::chrono::steady_clock;
using tree_t = softwrap::btree_map<uint64_t, uint64_t>;

struct Options {
  uint64_t n = 1000000;
  uint64_t chunk = 10000;
  uint32_t tw_ns = 1000;
  uint32_t alias_entries = 4096;  // the paper's Figs. 13/14: tables of at most 4K entries
  uint64_t seed = 1;
  std::string dir;
  std::vector<std::string> media{"scm-emu", "x86"};
  std::vector<std::string> orders{"sequential", "random"};
  std::vector<std::string> engines{"nonatomic", "softwrap", "softwrap-local", "undo"};
  bool pmdk = true;
  bool quick = false;
  std::string csv;
};


[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --n N           inserts per (medium, order) (default 1000000)\n"
               "  --quick         20,000 inserts, no PASS/FAIL bars\n"
               "  --media LIST    scm-emu,x86 (default both)\n"
               "  --orders LIST   sequential,random (default both)\n"
               "  --engines LIST  nonatomic,softwrap,softwrap-local,undo (default all); an\n"
               "                  engine may carry settings, e.g. softwrap@entries=512:budget=64:\n"
               "                  entries (alias_entries), divisor (retire_divisor), page\n"
               "                  (shadow_page_size), tables (max_alias_tables), lanekib (lane_size\n"
               "                  in KiB), budget\n"
               "                  (shadow_budget_kib), inline (1: no retirement thread), wcl\n"
               "                  (1: write-combined logging, SW_CONFIG_WCL; 0: none,\n"
               "                  SW_CONFIG_NO_WCL; unset: the medium's choice) — a\n"
               "                  variant runs interleaved with the others, as its own contender\n"
               "  --no-pmdk       without the PMDK btree_map peer\n"
               "  --tw-ns T       scm-emu write time per line (default 1000)\n"
               "  --seed S        random key sequence seed (default 1)\n"
               "  --alias-entries E  softwrap alias table entries (default 4096, as in\n"
               "                  the paper's Figs. 13/14; 0 = the library default)\n"
               "  --dir D         pool directory (default /dev/shm, else /tmp)\n"
               "  --csv FILE      also write the rows as CSV (with n, tw_ns, alias_entries, seed)\n",
               argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (a == "--n") o.n = std::stoull(next());
    else if (a == "--quick") o.quick = true;
    else if (a == "--media") o.media = split(next());
    else if (a == "--orders") o.orders = split(next());
    else if (a == "--engines") o.engines = split(next());
    else if (a == "--no-pmdk") o.pmdk = false;
    else if (a == "--tw-ns") o.tw_ns = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--seed") o.seed = std::stoull(next());
    else if (a == "--alias-entries") o.alias_entries = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--dir") o.dir = next();
    else if (a == "--csv") o.csv = next();
    else usage(argv[0]);
  }
  if (o.quick) o.n = 20000;
  if (o.dir.empty()) o.dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  o.chunk = std::min(o.chunk, std::max<uint64_t>(o.n / 20, 1));
  return o;
}

// "engine@key=value:key=value..." -> the engine's name, its settings applied to cfg.
std::string apply_variant(const std::string& spec, sw_config* cfg) {
  const size_t at = spec.find('@');
  if (at == std::string::npos) return spec;
  std::string settings = spec.substr(at + 1);
  std::replace(settings.begin(), settings.end(), ':', ',');
  for (const std::string& kv : split(settings)) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "bad engine setting '%s' in %s (want key=value)\n", kv.c_str(), spec.c_str());
      std::exit(2);
    }
    const std::string k = kv.substr(0, eq), text = kv.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    const unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || parsed > UINT32_MAX) {
      std::fprintf(stderr, "bad value '%s' for engine setting '%s' in %s (want 0 to %u)\n", text.c_str(), k.c_str(),
                   spec.c_str(), UINT32_MAX);
      std::exit(2);
    }
    const auto v = static_cast<uint32_t>(parsed);
    if (k == "entries") cfg->alias_entries = v;
    else if (k == "divisor") cfg->retire_divisor = v;
    else if (k == "page") cfg->shadow_page_size = v;
    else if (k == "tables") cfg->max_alias_tables = v;
    else if (k == "budget") cfg->shadow_budget_kib = v;
    else if (k == "lanekib") cfg->lane_size = uint64_t{v} << 10;
    else if (k == "inline") cfg->flags = v ? cfg->flags | SW_CONFIG_NO_RETIRE_THREAD : cfg->flags & ~SW_CONFIG_NO_RETIRE_THREAD;
    else if (k == "wcl") cfg->flags = v ? (cfg->flags | SW_CONFIG_WCL) & ~SW_CONFIG_NO_WCL : (cfg->flags | SW_CONFIG_NO_WCL) & ~SW_CONFIG_WCL;
    else {
      std::fprintf(stderr, "unknown engine setting '%s' in %s\n", k.c_str(), spec.c_str());
      std::exit(2);
    }
  }
  return spec.substr(0, at);
}


// One tree being filled: ours (pool + tree) or PMDK's.
struct Contender {
  std::string name;
  std::string path;
  std::function<void(uint64_t)> insert;
  double seconds = 0;
  softwrap::pool pool;
  std::unique_ptr<tree_t> tree;
  sw_stats stats{};
#ifdef SW_HAVE_PMDK_PEER
  pmdk_peer* peer = nullptr;
#endif
};

struct Row {
  std::string medium, order, name;
  double us = 0, per_s = 0, loads = 0, stores = 0, log_bytes = 0, fences = 0;
  double streamed = 0, flushed = 0;  // cache lines per insert (all threads, retirement included)
  double nvram_words = 0, nvram_lines = 0;  // written to the pool per insert (log and home)
  bool ours = false;
  bool verified = true;  // verify() and size (ours), sampled lookups (PMDK)
  double steal_pct = -1;  // the cell's CPU steal time (all vCPUs), -1 if unknown
};

// CPU time stolen by the hypervisor, and all CPU time, in clock ticks since
// boot (the first line of /proc/stat); false where there is no /proc/stat.
// On a shared VM both vCPUs are sometimes taken away for a while: softwrap,
// whose retirement runs on the second vCPU, then slows down more than the
// single-threaded contenders, so every cell reports how much was stolen.
bool cpu_ticks(uint64_t* steal, uint64_t* total) {
  FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long v[8] = {};
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                              &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (got != 8) return false;
  *steal = v[7];
  *total = 0;
  for (unsigned long long x : v) *total += x;
  return true;
}

size_t pool_bytes(uint64_t n) { return std::max<size_t>(size_t{64} << 20, (n * 112 + (32u << 20)) & ~size_t{4095}); }

bool run_cell(const Options& o, const std::string& medium, const std::string& order,
              const std::vector<uint64_t>& keys, std::vector<Row>* rows) {
  std::vector<std::unique_ptr<Contender>> cs;
  const size_t size = pool_bytes(o.n);
  for (const std::string& e : o.engines) {
    auto c = std::make_unique<Contender>();
    c->name = e;
    std::string file = e;
    for (char& ch : file)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '_';
    c->path = o.dir + "/sw-bench-btree-" + file + ".pool";
    std::filesystem::remove(c->path);
    sw_config cfg{};
    cfg.medium = medium == "scm-emu" ? SW_MEDIUM_SCM_EMU : SW_MEDIUM_X86;
    cfg.scm_write_ns = o.tw_ns;
    cfg.lanes = 4;
    cfg.alias_entries = o.alias_entries;
    cfg.engine = engine_kind(apply_variant(e, &cfg));
    c->pool = softwrap::pool::create(c->path, size, cfg);
    prefault(c->pool.base(), c->pool.size());
    c->tree = std::make_unique<tree_t>(c->pool);
    tree_t* t = c->tree.get();
    c->insert = [t](uint64_t k) { t->insert(k, k ^ 0x5555); };
    c->pool.reset_stats();
    cs.push_back(std::move(c));
  }
#ifdef SW_HAVE_PMDK_PEER
  if (o.pmdk && medium == "x86") {
    auto c = std::make_unique<Contender>();
    c->name = "pmdk-btree_map";
    c->path = o.dir + "/sw-bench-btree-pmdk.pool";
    std::filesystem::remove(c->path);
    c->peer = pmdk_peer_create(c->path.c_str(), size);
    if (!c->peer) {
      std::fprintf(stderr, "pmdk peer: %s\n", pmdk_peer_errormsg());
      return false;
    }
    prefault(pmdk_peer_base(c->peer), size);
    pmdk_peer* p = c->peer;
    c->insert = [p](uint64_t k) {
      if (pmdk_peer_insert(p, k, k ^ 0x5555) != 0) {
        std::fprintf(stderr, "pmdk insert failed: %s\n", pmdk_peer_errormsg());
        std::exit(1);
      }
    };
    cs.push_back(std::move(c));
  }
#endif
  // Interleaved: chunk by chunk, the contenders in rotated order.
  uint64_t steal0 = 0, total0 = 0;
  const bool have_ticks = cpu_ticks(&steal0, &total0);
  size_t round = 0;
  for (uint64_t at = 0; at < keys.size(); at += o.chunk, ++round) {
    const uint64_t end = std::min<uint64_t>(keys.size(), at + o.chunk);
    for (size_t i = 0; i < cs.size(); ++i) {
      Contender& c = *cs[(i + round) % cs.size()];
      const auto t0 = Clock::now();
      for (uint64_t j = at; j < end; ++j) c.insert(keys[j]);
      c.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    }
  }
  double steal_pct = -1;
  uint64_t steal1, total1;
  if (have_ticks && cpu_ticks(&steal1, &total1) && total1 > total0) {
    steal_pct = 100.0 * static_cast<double>(steal1 - steal0) / static_cast<double>(total1 - total0);
  }
  // Check every tree, then report.
  std::vector<uint64_t> distinct(keys);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  bool ok = true;
  for (auto& c : cs) {
    Row r;
    r.medium = medium;
    r.order = order;
    r.name = c->name;
    r.steal_pct = steal_pct;
    r.us = c->seconds / static_cast<double>(keys.size()) * 1e6;
    r.per_s = static_cast<double>(keys.size()) / c->seconds;
    if (c->tree) {
      r.ours = true;
      c->pool.quiesce();  // retirement's home writes counted too
      c->stats = c->pool.stats();
      const double n = static_cast<double>(keys.size());
      r.loads = static_cast<double>(c->stats.loads) / n;
      r.stores = static_cast<double>(c->stats.stores) / n;
      r.log_bytes = static_cast<double>(c->stats.log_bytes) / n;
      r.fences = static_cast<double>(c->stats.fences) / n;
      r.streamed = static_cast<double>(c->stats.streamed_lines) / n;
      r.flushed = static_cast<double>(c->stats.flushes) / n;
      r.nvram_words = static_cast<double>(c->stats.nvram_words) / n;
      r.nvram_lines = static_cast<double>(c->stats.nvram_lines) / n;
      try {
        c->tree->verify();
      } catch (const std::exception& e) {
        std::printf("FAIL  %s %s %s: verify: %s\n", medium.c_str(), order.c_str(), c->name.c_str(), e.what());
        ok = false;
        r.verified = false;
      }
      if (c->tree->size() != distinct.size()) {
        std::printf("FAIL  %s %s %s: size %zu, expected %zu\n", medium.c_str(), order.c_str(), c->name.c_str(),
                    c->tree->size(), distinct.size());
        ok = false;
        r.verified = false;
      }
      c->tree.reset();
      c->pool.close();
    }
#ifdef SW_HAVE_PMDK_PEER
    if (c->peer) {
      for (size_t i = 0; i < distinct.size(); i += 997) {
        if (!pmdk_peer_lookup(c->peer, distinct[i])) {
          std::printf("FAIL  %s %s %s: key %zu missing\n", medium.c_str(), order.c_str(), c->name.c_str(), i);
          ok = false;
          r.verified = false;
          break;
        }
      }
      pmdk_peer_close(c->peer);
    }
#endif
    std::filesystem::remove(c->path);
    rows->push_back(r);
  }
  return ok;
}

const Row* find(const std::vector<Row>& rows, const std::string& medium, const std::string& order,
                const std::string& name) {
  for (const Row& r : rows)
    if (r.medium == medium && r.order == order && r.name == name) return &r;
  return nullptr;
}

// One line per row: the printed columns (full precision; PMDK's counters
// empty) and the run's parameters.
bool write_csv(const Options& o, const std::vector<Row>& rows) {
  FILE* f = std::fopen(o.csv.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
    return false;
  }
  std::fprintf(f, "medium,order,contender,us_per_insert,inserts_per_s,loads,stores,log_bytes,fences,streamed,"
                  "flushed,verified,n,tw_ns,alias_entries,seed,steal_pct,nvram_words,nvram_lines\n");
  for (const Row& r : rows) {
    std::fprintf(f, "%s,%s,%s,%.4f,%.1f,", r.medium.c_str(), r.order.c_str(), r.name.c_str(), r.us, r.per_s);
    if (r.ours)
      std::fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,", r.loads, r.stores, r.log_bytes, r.fences, r.streamed,
                   r.flushed);
    else
      std::fprintf(f, ",,,,,,");
    std::fprintf(f, "%d,%llu,%u,%u,%llu,", r.verified ? 1 : 0, static_cast<unsigned long long>(o.n), o.tw_ns,
                 o.alias_entries, static_cast<unsigned long long>(o.seed));
    if (r.steal_pct >= 0) std::fprintf(f, "%.2f", r.steal_pct);
    if (r.ours) {
      std::fprintf(f, ",%.4f,%.4f", r.nvram_words, r.nvram_lines);
    } else {
      std::fprintf(f, ",,");
    }
    std::fprintf(f, "\n");
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) std::fprintf(stderr, "cannot write %s: %s\n", o.csv.c_str(), std::strerror(errno));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef SW_HAVE_PMDK_PEER
  softwrap::bench::force_pmem_restart(argv);
#endif
  const Options o = parse(argc, argv);
  std::printf("B+tree inserts (full paper V-D, Figs. 13/14): %llu single-insert wraps per cell, "
              "btree_map<uint64_t, uint64_t> (leaf %u, inner %u slots), pools in %s, Tw %u ns on scm-emu\n\n",
              static_cast<unsigned long long>(o.n), tree_t::leaf_slotmax, tree_t::inner_slotmax, o.dir.c_str(),
              o.tw_ns);
  std::vector<Row> rows;
  bool ok = true;
  for (const std::string& medium : o.media) {
    for (const std::string& order : o.orders) {
      std::vector<uint64_t> keys(o.n);
      if (order == "sequential") {
        for (uint64_t i = 0; i < o.n; ++i) keys[i] = i + 1;
      } else {
        std::mt19937_64 rng(o.seed);
        for (auto& k : keys) k = rng() | 1;
      }
      ok &= run_cell(o, medium, order, keys, &rows);
      std::printf("%-8s %-10s  %-24s %10s %12s %8s %8s %10s %8s %8s %8s\n", "medium", "keys", "contender",
                  "us/insert", "inserts/s", "loads", "stores", "log B", "fences", "streamed", "flushed");
      for (const Row& r : rows) {
        if (r.medium != medium || r.order != order) continue;
        if (r.ours)
          std::printf("%-8s %-10s  %-24s %10.2f %12.0f %8.1f %8.1f %10.1f %8.2f %8.1f %8.1f\n", r.medium.c_str(),
                      r.order.c_str(), r.name.c_str(), r.us, r.per_s, r.loads, r.stores, r.log_bytes, r.fences, r.streamed,
                      r.flushed);
        else
          std::printf("%-8s %-10s  %-24s %10.2f %12.0f %8s %8s %10s %8s %8s %8s\n", r.medium.c_str(), r.order.c_str(),
                      r.name.c_str(), r.us, r.per_s, "-", "-", "-", "-", "-", "-");
      }
      if (!rows.empty() && rows.back().steal_pct >= 0) {
        std::printf("(CPU steal during these inserts: %.1f%% of the vCPUs' time)\n", rows.back().steal_pct);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  const bool csv_ok = o.csv.empty() || write_csv(o, rows);
  auto bar = [&](bool pass, const std::string& text) {
    std::printf("%s  %s\n", pass ? "PASS" : "FAIL", text.c_str());
    ok &= pass;
  };
  if (!o.quick) {
    for (const std::string& order : o.orders) {
      const Row* sw = find(rows, "scm-emu", order, "softwrap");
      const Row* na = find(rows, "scm-emu", order, "nonatomic");
      const Row* un = find(rows, "scm-emu", order, "undo");
      char b[200];
      if (sw && na) {
        std::snprintf(b, sizeof b, "scm-emu %s: softwrap %.2f us/insert within 10%% of nonatomic %.2f (%.2fx)",
                      order.c_str(), sw->us, na->us, sw->us / na->us);
        bar(sw->us <= 1.10 * na->us, b);
      }
      if (sw && un) {
        std::snprintf(b, sizeof b, "scm-emu %s: undo %.2f us/insert at least 3x softwrap %.2f (%.2fx)",
                      order.c_str(), un->us, sw->us, un->us / sw->us);
        bar(un->us >= 3.0 * sw->us, b);
      }
    }
    const Row* sw = find(rows, "x86", "random", "softwrap");
    const Row* pm = find(rows, "x86", "random", "pmdk-btree_map");
    if (sw && pm) {
      char b[200];
      std::snprintf(b, sizeof b, "x86 random: softwrap %.0f inserts/s at least 2x PMDK btree_map %.0f (%.2fx)",
                    sw->per_s, pm->per_s, sw->per_s / pm->per_s);
      bar(sw->per_s >= 2.0 * pm->per_s, b);
    }
  }
  std::printf("%s\n", ok ? "all checks passed" : "some checks FAILED");
  return ok && csv_ok ? 0 : 1;
}
