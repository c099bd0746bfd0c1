// tpcc_main.cc — sw_tpcc: load, run and check TPC-C on SQLite.
//
// Any VFS works: the softwrap ones are registered at start, so
// "file:/dev/shm/t.db?vfs=softwrap" and plain paths (unix VFS) are both
// accepted.  Options select the phases; the default is all three.  Output
// is one "key value" line per measure so that scripts can parse it; on a
// softwrap pool the run's pool counters follow (log bytes, NVRAM writes,
// write-combined logging).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "softwrap/softwrap.h"
#include "softwrap/sqlite.h"
#include "tpcc.h"

namespace {
void usage() {
  std::fprintf(stderr,
               "usage: sw_tpcc --db URI [--load] [--run] [--check] [--warehouses N] [--items N]\n"
               "               [--customers N] [--seconds S] [--transactions N] [--seed N]\n"
               "               [--batch ROWS] [--commit-log FILE] [--pragma SQL]...\n"
               "Without --load/--run/--check: all three.  --pragma runs after open (e.g.\n"
               "'PRAGMA journal_mode=WAL').\n");
}
}  // namespace

int main(int argc, char** argv) {
  swtpcc::Config cfg;
  std::string uri, pragmas;
  bool do_load = false, do_run = false, do_check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--db") uri = val();
    else if (a == "--load") do_load = true;
    else if (a == "--run") do_run = true;
    else if (a == "--check") do_check = true;
    else if (a == "--warehouses") cfg.warehouses = std::atoi(val());
    else if (a == "--items") cfg.items = std::atoi(val());
    else if (a == "--customers") cfg.customers_per_district = std::atoi(val());
    else if (a == "--seconds") cfg.seconds = std::atof(val());
    else if (a == "--transactions") cfg.max_transactions = std::strtoull(val(), nullptr, 10);
    else if (a == "--seed") cfg.seed = std::strtoull(val(), nullptr, 10);
    else if (a == "--batch") cfg.load_batch_rows = std::atoi(val());
    else if (a == "--commit-log") cfg.commit_log = val();
    else if (a == "--pragma") pragmas += std::string(val()) + ";";
    else {
      usage();
      return 2;
    }
  }
  if (uri.empty() || cfg.warehouses < 1 || cfg.items < 1 || cfg.customers_per_district < 1 ||
      cfg.load_batch_rows < 1) {
    usage();
    return 2;
  }
  if (!do_load && !do_run && !do_check) do_load = do_run = do_check = true;
  if (sw_sqlite_register(0) != 0) {
    std::fprintf(stderr, "sw_tpcc: cannot register the softwrap VFSes\n");
    return 1;
  }
  std::string err;
  sqlite3* db = swtpcc::open_db(uri, &err);
  if (db == nullptr) {
    std::fprintf(stderr, "sw_tpcc: open %s: %s\n", uri.c_str(), err.c_str());
    return 1;
  }
  if (!pragmas.empty() && sqlite3_exec(db, pragmas.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "sw_tpcc: %s: %s\n", pragmas.c_str(), sqlite3_errmsg(db));
    return 1;
  }
  int rc = 0;
  if (do_load && !swtpcc::load(db, cfg, &err)) {
    std::fprintf(stderr, "sw_tpcc: %s\n", err.c_str());
    rc = 1;
  }
  if (rc == 0 && do_run) {
    swtpcc::Result r;
    sw_pool* pool = sw_sqlite_pool(db, "main");  // NULL off the softwrap VFSes
    if (pool != nullptr) sw_pool_stats_reset(pool);
    const bool ok = swtpcc::run(db, cfg, &r, &err);
    std::printf("seconds %.3f\nnew_order %llu\npayment %llu\norder_status %llu\ndelivery %llu\nstock_level %llu\n"
                "rolled_back %llu\nbusy_retries %llu\ntpmC %.1f\ntps %.1f\n",
                r.seconds, static_cast<unsigned long long>(r.committed[swtpcc::kNewOrder]),
                static_cast<unsigned long long>(r.committed[swtpcc::kPayment]),
                static_cast<unsigned long long>(r.committed[swtpcc::kOrderStatus]),
                static_cast<unsigned long long>(r.committed[swtpcc::kDelivery]),
                static_cast<unsigned long long>(r.committed[swtpcc::kStockLevel]),
                static_cast<unsigned long long>(r.rolled_back), static_cast<unsigned long long>(r.busy), r.tpmC,
                r.tps);
    if (pool != nullptr) {
      // What the run wrote to the pool: the write-combined logging paper's
      // measures (docs/results.md, WCL section).
      sw_stats st{};
      sw_pool_stats(pool, &st);
      std::printf("engine %s\nwrap_log_bytes %llu\nnvram_words %llu\nnvram_lines %llu\nwcl_words_full %llu\n"
                  "wcl_words_half %llu\nwcl_words_paired %llu\nwcl_words_eliminated %llu\n",
                  sw_pool_engine_name(pool), static_cast<unsigned long long>(st.log_bytes),
                  static_cast<unsigned long long>(st.nvram_words), static_cast<unsigned long long>(st.nvram_lines),
                  static_cast<unsigned long long>(st.wcl_words_full),
                  static_cast<unsigned long long>(st.wcl_words_half),
                  static_cast<unsigned long long>(st.wcl_words_paired),
                  static_cast<unsigned long long>(st.wcl_words_eliminated));
    }
    if (!ok) {
      std::fprintf(stderr, "sw_tpcc: run: %s\n", err.c_str());
      rc = 1;
    }
  }
  if (rc == 0 && do_check) {
    const bool ok = swtpcc::integrity_ok(db, &err) && swtpcc::check(db, &err);
    std::printf("consistency %s\n", ok ? "ok" : "FAILED");
    if (!ok) {
      std::fprintf(stderr, "sw_tpcc: %s\n", err.c_str());
      rc = 1;
    }
  }
  if (sqlite3_close(db) != SQLITE_OK) rc = 1;
  return rc;
}
