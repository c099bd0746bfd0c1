// kv_bench.cc — sw_bench_kv: a YCSB-style key-value benchmark of the
// persistent B+tree (softwrap::btree_map<Key, uint64_t>) under every
// engine, side by side with PMDK's btree_map (integer keys) and rtree_map
// (string keys) examples (bench/btree/pmdk_peer.h), all on x86.
//
// Approach.  Per key kind (8-byte integers; random 16- and 64-byte
// strings) every contender gets a fresh pool in /dev/shm (pre-faulted) and
// an empty map, and the same keys are loaded in the same random order, one
// insert per wrap/transaction (phase "load").  Then, per request
// distribution (uniform; YCSB's scrambled Zipfian, theta 0.99) and mix —
// read-only (YCSB C), 95/5 read/update (B) and 50/50 (A) — one sequence of
// operations is generated and applied to every contender.  A read finds
// the key and reads its value; an update finds it and overwrites the value
// in one wrap (ours: `t.find(k)->second = v`; PMDK: one transaction that
// finds the item, snapshots its value and overwrites it).  Work is
// interleaved: chunks of 10,000 operations visit the contenders
// round-robin, the order rotated per chunk, so all see the same machine
// conditions; the run phases are repeated --rounds times and each
// contender's median ops/s is reported.  Every tree is verify()'d and
// every read checked.
//
// The closing lines print PASS/FAIL for the bars of issue 17 (exit status 1
// on any FAIL): integer keys, uniform read-only: softwrap within 1.05x of
// nonatomic per lookup and at least as fast as PMDK's btree_map; uniform
// 50/50: softwrap at least 1.5x PMDK's throughput; string keys: softwrap's
// load (inserts/s) at least 2x PMDK's rtree_map.  --quick: small sizes, no
// bars.  --csv FILE writes one row per (keys, phase, distribution,
// contender).  PMDK's pool is not on DAX here; the program re-executes
// itself with PMEM_IS_PMEM_FORCE=1 (as sw_bench_btree does).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
using int_tree = softwrap::btree_map<uint64_t, uint64_t>;
using str_tree = softwrap::btree_map<std::string, uint64_t>;

struct Options {
  uint64_t n = 1000000;     // integer keys
  uint64_t n_str = 100000;  // string keys (PMDK's rtree_map takes ~5 KiB per key)
  uint64_t ops = 0;         // per run phase (0: as many as keys)
  unsigned rounds = 3;
  uint64_t chunk = 10000;
  uint64_t seed = 1;
  std::vector<std::string> keys{"int", "str16", "str64"};
  std::vector<std::string> engines{"nonatomic", "softwrap", "softwrap-local", "undo"};
  bool pmdk = true;
  bool quick = false;
  std::string dir, csv;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [options]\n"
               "  --n N          integer keys (default 1000000)\n"
               "  --n-str N      string keys (default 100000)\n"
               "  --ops N        operations per run phase (default: the key count)\n"
               "  --rounds R     repetitions of the run phases; medians reported (default 3)\n"
               "  --keys LIST    int,str16,str64 (default all)\n"
               "  --engines LIST nonatomic,softwrap,softwrap-local,undo (default all)\n"
               "  --no-pmdk      without PMDK's btree_map / rtree_map\n"
               "  --seed S       key and request seed (default 1)\n"
               "  --quick        20,000 keys, 1 round, no PASS/FAIL bars\n"
               "  --dir D        pool directory (default /dev/shm, else /tmp)\n"
               "  --csv FILE     also write the rows as CSV\n",
               argv0);
  std::exit(2);
}


uint64_t number(const char* argv0, const std::string& text) {
  uint64_t v = 0;
  if (!softwrap::bench::parse_count(text, &v)) usage(argv0);
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
    if (a == "--n") o.n = number(argv[0], next());
    else if (a == "--n-str") o.n_str = number(argv[0], next());
    else if (a == "--ops") o.ops = number(argv[0], next());
    else if (a == "--rounds") o.rounds = static_cast<unsigned>(std::max<uint64_t>(1, number(argv[0], next())));
    else if (a == "--keys") o.keys = split(next());
    else if (a == "--engines") o.engines = split(next());
    else if (a == "--no-pmdk") o.pmdk = false;
    else if (a == "--seed") o.seed = number(argv[0], next());
    else if (a == "--quick") o.quick = true;
    else if (a == "--dir") o.dir = next();
    else if (a == "--csv") o.csv = next();
    else usage(argv[0]);
  }
  for (const std::string& k : o.keys)
    if (k != "int" && k != "str16" && k != "str64") usage(argv[0]);
  if (o.quick) {
    o.n = o.n_str = 20000;
    o.rounds = 1;
  }
  if (o.dir.empty()) o.dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return o;
}


// YCSB's scrambled Zipfian generator over [0, n), theta 0.99 (Gray et al.).
class Zipf {
 public:
  Zipf(uint64_t n, double theta) : n_(n), theta_(theta) {
    for (uint64_t i = 1; i <= n; ++i) zetan_ += 1.0 / std::pow(static_cast<double>(i), theta);
    const double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2 / zetan_);
  }
  uint64_t next(std::mt19937_64& rng) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const double uz = u * zetan_;
    uint64_t rank;
    if (uz < 1.0) rank = 0;
    else if (uz < 1.0 + std::pow(0.5, theta_)) rank = 1;
    else rank = static_cast<uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    rank = std::min(rank, n_ - 1);
    // Scramble: popular items spread over the key space (FNV-1a of the rank).
    uint64_t h = 0xcbf29ce484222325ull;
    for (int b = 0; b < 8; ++b) h = (h ^ ((rank >> (8 * b)) & 0xFF)) * 0x100000001b3ull;
    return h % n_;
  }

 private:
  uint64_t n_;
  double theta_, zetan_ = 0, alpha_, eta_;
};

// One map under test: ours in a pool, or a PMDK peer.  Keys are given by
// index into the key list.
struct Contender {
  std::string name, path;
  std::function<void(uint64_t, uint64_t)> insert, update;
  std::function<uint64_t(uint64_t)> read;  // the value, ~0 if absent
  std::function<void()> close;
  std::function<std::string()> check;  // "" or what is wrong
  double seconds = 0;
  std::vector<double> per_s;  // one per round (load: one)
};

struct Row {
  std::string keys, phase, dist, name;
  double median_ops = 0;
  unsigned rounds = 0;
};

// Key i of a string kind: `len` bytes over [0-9a-z], random but fixed.
std::vector<std::string> string_keys(uint64_t n, size_t len, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + len);
  static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::vector<std::string> keys(n);
  for (auto& k : keys) {
    k.resize(len);
    for (char& c : k) c = alphabet[rng() % 36];
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

template <class Tree, class KeyOf>
std::unique_ptr<Contender> ours(const Options& o, const std::string& engine, size_t size, KeyOf key_of,
                                uint64_t n) {
  auto c = std::make_unique<Contender>();
  c->name = engine;
  c->path = o.dir + "/sw-bench-kv-" + std::to_string(getpid()) + "-" + engine + ".pool";
  std::filesystem::remove(c->path);
  sw_config cfg{};
  cfg.medium = SW_MEDIUM_X86;
  cfg.engine = engine_kind(engine);
  cfg.lanes = 4;
  auto pl = std::make_shared<softwrap::pool>(softwrap::pool::create(c->path, size, cfg));
  prefault(pl->base(), pl->size());
  auto t = std::make_shared<Tree>(*pl);
  c->insert = [t, key_of](uint64_t i, uint64_t v) { t->insert(key_of(i), v); };
  c->read = [t, key_of](uint64_t i) -> uint64_t {
    auto it = t->find(key_of(i));
    return it == t->end() ? ~uint64_t{0} : it.data();
  };
  c->update = [t, key_of](uint64_t i, uint64_t v) { t->find(key_of(i))->second = v; };
  c->check = [t, n]() -> std::string {
    try {
      t->verify();
    } catch (const std::exception& e) {
      return e.what();
    }
    return t->size() == n ? "" : "size " + std::to_string(t->size()) + " != " + std::to_string(n);
  };
  c->close = [t, pl]() mutable {
    t.reset();
    pl->close();
  };
  return c;
}

// Runs f(contender, begin, end) over [0, total) in chunks, round-robin
// with rotation; adds each contender's time.
void interleave(std::vector<std::unique_ptr<Contender>>& cs, uint64_t total, uint64_t chunk,
                const std::function<void(Contender&, uint64_t, uint64_t)>& f) {
  for (auto& c : cs) c->seconds = 0;
  size_t round = 0;
  for (uint64_t at = 0; at < total; at += chunk, ++round) {
    const uint64_t end = std::min(total, at + chunk);
    for (size_t i = 0; i < cs.size(); ++i) {
      Contender& c = *cs[(i + round) % cs.size()];
      const auto t0 = Clock::now();
      f(c, at, end);
      c.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

bool run_keys(const Options& o, const std::string& kind, std::vector<Row>* rows) {
  const bool is_int = kind == "int";
  const uint64_t want = is_int ? o.n : o.n_str;
  std::vector<uint64_t> ikeys;
  std::vector<std::string> skeys;
  if (is_int) {
    std::mt19937_64 rng(o.seed);
    ikeys.resize(want);
    for (auto& k : ikeys) k = rng() | 1;
    std::sort(ikeys.begin(), ikeys.end());
    ikeys.erase(std::unique(ikeys.begin(), ikeys.end()), ikeys.end());
    std::shuffle(ikeys.begin(), ikeys.end(), rng);
  } else {
    skeys = string_keys(want, kind == "str16" ? 16 : 64, o.seed);
  }
  const uint64_t n = is_int ? ikeys.size() : skeys.size();
  const size_t klen = is_int ? 8 : skeys[0].size();
  const size_t size = std::max<size_t>(size_t{96} << 20, (n * (160 + 2 * klen) + (64u << 20)) & ~size_t{4095});
  std::vector<std::unique_ptr<Contender>> cs;
  for (const std::string& e : o.engines) {
    if (is_int) cs.push_back(ours<int_tree>(o, e, size, [&ikeys](uint64_t i) { return ikeys[i]; }, n));
    else cs.push_back(ours<str_tree>(o, e, size, [&skeys](uint64_t i) { return std::string_view(skeys[i]); }, n));
  }
#ifdef SW_HAVE_PMDK_PEER
  if (o.pmdk) {
    auto c = std::make_unique<Contender>();
    c->path = o.dir + "/sw-bench-kv-" + std::to_string(getpid()) + "-pmdk.pool";
    std::filesystem::remove(c->path);
    if (is_int) {
      c->name = "pmdk-btree_map";
      pmdk_peer* p = pmdk_peer_create(c->path.c_str(), size);
      if (!p) {
        std::fprintf(stderr, "pmdk peer: %s\n", pmdk_peer_errormsg());
        return false;
      }
      prefault(pmdk_peer_base(p), size);
      c->insert = [p, &ikeys](uint64_t i, uint64_t v) {
        if (pmdk_peer_insert(p, ikeys[i], v) != 0) std::abort();
      };
      c->read = [p, &ikeys](uint64_t i) {
        uint64_t v;
        return pmdk_peer_get(p, ikeys[i], &v) ? v : ~uint64_t{0};
      };
      c->update = [p, &ikeys](uint64_t i, uint64_t v) {
        if (pmdk_peer_update(p, ikeys[i], v) != 1) std::abort();
      };
      c->close = [p] { pmdk_peer_close(p); };
    } else {
      c->name = "pmdk-rtree_map";
      const size_t rsize = std::max(size, static_cast<size_t>(n) * 12288 + (size_t{256} << 20));
      pmdk_rtree_peer* p = pmdk_rtree_peer_create(c->path.c_str(), rsize);
      if (!p) {
        std::fprintf(stderr, "pmdk rtree peer: %s\n", pmdk_peer_errormsg());
        return false;
      }
      prefault(pmdk_rtree_peer_base(p), rsize);
      c->insert = [p, &skeys](uint64_t i, uint64_t v) {
        if (pmdk_rtree_peer_insert(p, skeys[i].data(), skeys[i].size(), v) != 0) std::abort();
      };
      c->read = [p, &skeys](uint64_t i) {
        uint64_t v;
        return pmdk_rtree_peer_get(p, skeys[i].data(), skeys[i].size(), &v) ? v : ~uint64_t{0};
      };
      c->update = [p, &skeys](uint64_t i, uint64_t v) {
        if (pmdk_rtree_peer_update(p, skeys[i].data(), skeys[i].size(), v) != 1) std::abort();
      };
      c->close = [p] { pmdk_rtree_peer_close(p); };
    }
    c->check = [] { return std::string(); };
    cs.push_back(std::move(c));
  }
#endif
  // Load: key i gets value i + 1 (so reads can be checked).
  interleave(cs, n, o.chunk, [](Contender& c, uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i) c.insert(i, i + 1);
  });
  for (auto& c : cs) rows->push_back({kind, "load", "-", c->name, static_cast<double>(n) / c->seconds, 1});
  // Run phases.  An update writes the key's index plus a multiple of n, so
  // a read can check that the value belongs to the key.
  const uint64_t ops = o.ops ? o.ops : n;
  struct Mix {
    const char* name;
    unsigned read_pct;
  };
  const Mix mixes[] = {{"read", 100}, {"95/5", 95}, {"50/50", 50}};
  bool ok = true;
  Zipf zipf(n, 0.99);
  for (const char* dist : {"uniform", "zipfian"}) {
    for (const Mix& m : mixes) {
      std::mt19937_64 rng(o.seed * 31 + m.read_pct + (dist[0] == 'z' ? 1000 : 0));
      std::vector<uint64_t> seq(ops);  // key index << 1 | is_update
      for (auto& s : seq) {
        const uint64_t k = dist[0] == 'u' ? rng() % n : zipf.next(rng);
        s = k << 1 | (rng() % 100 >= m.read_pct ? 1 : 0);
      }
      for (auto& c : cs) c->per_s.clear();
      for (unsigned r = 0; r < o.rounds; ++r) {
        uint64_t bad = 0;
        interleave(cs, ops, o.chunk, [&](Contender& c, uint64_t b, uint64_t e) {
          for (uint64_t j = b; j < e; ++j) {
            const uint64_t k = seq[j] >> 1;
            if (seq[j] & 1) {
              c.update(k, k + 1 + n * (j + 1));
            } else if (c.read(k) % n != (k + 1) % n) {
              ++bad;
            }
          }
        });
        if (bad) {
          std::printf("FAIL  %s %s %s: %llu reads returned a wrong value\n", kind.c_str(), dist, m.name,
                      static_cast<unsigned long long>(bad));
          ok = false;
        }
        for (auto& c : cs) c->per_s.push_back(static_cast<double>(ops) / c->seconds);
      }
      for (auto& c : cs) rows->push_back({kind, m.name, dist, c->name, median(c->per_s), o.rounds});
    }
  }
  for (auto& c : cs) {
    if (const std::string why = c->check(); !why.empty()) {
      std::printf("FAIL  %s %s: %s\n", kind.c_str(), c->name.c_str(), why.c_str());
      ok = false;
    }
    c->close();
    std::filesystem::remove(c->path);
  }
  return ok;
}

const Row* find(const std::vector<Row>& rows, const std::string& keys, const std::string& phase,
                const std::string& dist, const std::string& name) {
  for (const Row& r : rows)
    if (r.keys == keys && r.phase == phase && r.dist == dist && r.name == name) return &r;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef SW_HAVE_PMDK_PEER
  softwrap::bench::force_pmem_restart(argv);
#endif
  const Options o = parse(argc, argv);
  std::printf("Key-value benchmark (YCSB-style): %llu integer / %llu string keys, values uint64_t, x86 medium, "
              "%u round(s) of each run phase (median ops/s), pools in %s\n\n",
              static_cast<unsigned long long>(o.n), static_cast<unsigned long long>(o.n_str), o.rounds,
              o.dir.c_str());
  std::vector<Row> rows;
  bool ok = true;
  for (const std::string& k : o.keys) {
    ok &= run_keys(o, k, &rows);
    std::printf("%-6s %-6s %-8s  %-16s %14s\n", "keys", "phase", "dist", "contender", "ops/s");
    for (const Row& r : rows)
      if (r.keys == k) std::printf("%-6s %-6s %-8s  %-16s %14.0f\n", r.keys.c_str(), r.phase.c_str(), r.dist.c_str(), r.name.c_str(), r.median_ops);
    std::printf("\n");
    std::fflush(stdout);
  }
  if (!o.csv.empty()) {
    if (FILE* f = std::fopen(o.csv.c_str(), "w")) {
      std::fprintf(f, "keys,phase,dist,contender,ops_per_s,rounds,n,n_str,seed\n");
      for (const Row& r : rows)
        std::fprintf(f, "%s,%s,%s,%s,%.1f,%u,%llu,%llu,%llu\n", r.keys.c_str(), r.phase.c_str(), r.dist.c_str(),
                     r.name.c_str(), r.median_ops, r.rounds, static_cast<unsigned long long>(o.n),
                     static_cast<unsigned long long>(o.n_str), static_cast<unsigned long long>(o.seed));
      std::fclose(f);
    } else {
      std::fprintf(stderr, "cannot write %s\n", o.csv.c_str());
      ok = false;
    }
  }
  auto bar = [&](const Row* a, const Row* b, double factor, const char* what) {
    if (!a || !b) return;
    const double ratio = a->median_ops / b->median_ops;
    const bool pass = ratio >= factor;
    std::printf("%s  %s: %s %.0f vs %s %.0f ops/s (%.3fx, bar %.2fx)\n", pass ? "PASS" : "FAIL", what,
                a->name.c_str(), a->median_ops, b->name.c_str(), b->median_ops, ratio, factor);
    ok &= pass;
  };
  if (!o.quick) {
    // Within 1.05x per lookup: softwrap's ops/s at least 1/1.05 of nonatomic's.
    bar(find(rows, "int", "read", "uniform", "softwrap"), find(rows, "int", "read", "uniform", "nonatomic"), 1 / 1.05,
        "int uniform lookups within 1.05x of nonatomic");
    bar(find(rows, "int", "read", "uniform", "softwrap"), find(rows, "int", "read", "uniform", "pmdk-btree_map"), 1.0,
        "int uniform lookups at least as fast as PMDK btree_map");
    bar(find(rows, "int", "50/50", "uniform", "softwrap"), find(rows, "int", "50/50", "uniform", "pmdk-btree_map"),
        1.5, "int uniform 50/50 at least 1.5x PMDK btree_map");
    for (const char* k : {"str16", "str64"}) {
      const std::string what = std::string(k) + " inserts at least 2x PMDK rtree_map";
      bar(find(rows, k, "load", "-", "softwrap"), find(rows, k, "load", "-", "pmdk-rtree_map"), 2.0, what.c_str());
    }
  }
  std::printf("%s\n", ok ? "all checks passed" : "some checks FAILED");
  return ok ? 0 : 1;
}
