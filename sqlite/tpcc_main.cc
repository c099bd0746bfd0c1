// tpcc_main.cc — sw_tpcc: load, run and check TPC-C on SQLite.
//
// Any VFS works: the softwrap ones are registered at start, so
// "file:/dev/shm/t.db?vfs=softwrap" and plain paths (unix VFS) are both
// accepted.  Options select the phases; the default is all three.  Output
// is one "key value" line per measure so that scripts can parse it; on a
// softwrap pool the run's pool counters follow (log bytes, NVRAM writes,
// write-combined logging).  --readers N runs N reader connections beside
// the writer during --run (threads, or processes with --reader-procs; each
// opens --db and runs the --pragma statements; tpcc.h, "Readers"), and
// --writer-mix write leaves the read-only types out of the writer's mix.
//
// --stop-in-commit N (crash tests, sqlite/tpcc_test.cc): in the N-th
// New-Order's COMMIT of --run the process stops itself (SIGSTOP) after
// SQLite wrote the district's page and before it writes the next one, so
// that the parent can kill it at a moment known to be inside a commit, with
// the new D_NEXT_O_ID written and the new order not.  SQLite writes a
// commit's pages in page-number order.  New-Order changes no page below
// the district table's root but page 1 (the warehouse's pages, the only
// ones between, it only reads), and the pages it inserts the order into
// were all allocated after the schema, so they come later.  With one
// warehouse the ten districts are the root page alone.  The main
// database's xWrite is intercepted through a copy of its file's method
// table; only the writer thread writes (no readers with this option).
#include <signal.h>

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
               "               [--readers N [--reader-procs]] [--writer-mix standard|write]\n"
               "               [--stop-in-commit N]\n"
               "Without --load/--run/--check: all three.  --pragma runs after open (e.g.\n"
               "'PRAGMA journal_mode=WAL'), on every connection.  --readers N: N connections run\n"
               "Order-Status and Stock-Level beside the writer during --run (threads; separate\n"
               "processes with --reader-procs).  --writer-mix write: the writer runs New-Order,\n"
               "Payment and Delivery only (45:43:4); standard (the default): the whole mix.\n"
               "--stop-in-commit N: SIGSTOP inside the N-th New-Order's COMMIT, after the\n"
               "district's page is written and before the order's (for kill tests).\n");
}

// --stop-in-commit (see the top of the file).  Written by the writer
// thread alone: the hooks around its COMMITs and its xWrite calls.
struct StopInCommit {
  uint64_t at = 0;                  // the New-Order to stop in (1: the first); 0: off
  uint64_t new_orders = 0;          // New-Orders that reached their COMMIT
  bool armed = false;               // inside that COMMIT
  bool district_written = false;    // ... and the district's page is written
  sqlite3_int64 page_size = 0;
  sqlite3_int64 district_root = 0;  // the district table's (only) page
  const sqlite3_io_methods* real = nullptr;
  sqlite3_io_methods methods{};     // *real with xWrite below
};
StopInCommit g_stop;

int stop_in_commit_write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 off) {
  if (g_stop.armed) {
    const sqlite3_int64 page = off / g_stop.page_size + 1;
    if (page == g_stop.district_root) {
      g_stop.district_written = true;
    } else if (page > g_stop.district_root && g_stop.district_written) {
      g_stop.armed = false;
      std::fflush(stdout);
      raise(SIGSTOP);  // the parent kills it here; continued, it finishes the commit
    }
  }
  return g_stop.real->xWrite(f, buf, amt, off);
}

sqlite3_int64 int_of(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  sqlite3_int64 v = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

// Arms --stop-in-commit on db's main database: its file's xWrite and
// cfg's hooks.  False (with *err) if the database is not loaded.
bool install_stop_in_commit(sqlite3* db, swtpcc::Config* cfg, std::string* err) {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == nullptr ||
      file->pMethods == nullptr) {
    *err = "no main database file";
    return false;
  }
  g_stop.page_size = int_of(db, "PRAGMA page_size");
  g_stop.district_root = int_of(db, "SELECT rootpage FROM sqlite_schema WHERE type='table' AND name='district'");
  if (g_stop.page_size <= 0 || g_stop.district_root <= 1) {
    *err = "no district table (load first)";
    return false;
  }
  // A table leaf (0x0d) holds all districts; under an interior root their
  // rows would be on pages the load allocated among the other tables'.
  unsigned char kind = 0;
  if (file->pMethods->xRead(file, &kind, 1, (g_stop.district_root - 1) * g_stop.page_size) != SQLITE_OK ||
      kind != 0x0d) {
    *err = "the district table is more than its root page (one warehouse only)";
    return false;
  }
  g_stop.real = file->pMethods;
  g_stop.methods = *file->pMethods;
  g_stop.methods.xWrite = stop_in_commit_write;
  file->pMethods = &g_stop.methods;
  cfg->before_commit = [](sqlite3*, const swtpcc::TxInfo& t, std::string*) {
    if (t.type == swtpcc::kNewOrder && ++g_stop.new_orders == g_stop.at) {
      g_stop.armed = true;
      g_stop.district_written = false;
    }
    return SQLITE_OK;
  };
  // A COMMIT that did not stop where it should have is an error, not a
  // run that ends by itself (which a kill test would take for "no damage").
  cfg->after_commit = [](const swtpcc::TxInfo&) {
    if (!g_stop.armed) return true;
    std::fprintf(stderr, "sw_tpcc: --stop-in-commit: the COMMIT wrote no page after the district's\n");
    return false;
  };
  return true;
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
    else if (a == "--readers") cfg.readers = std::atoi(val());
    else if (a == "--reader-procs") cfg.reader_processes = true;
    else if (a == "--stop-in-commit") g_stop.at = std::strtoull(val(), nullptr, 10);
    else if (a == "--writer-mix") {
      const std::string m = val();
      if (m == "write") {
        cfg.mix[swtpcc::kOrderStatus] = cfg.mix[swtpcc::kStockLevel] = 0;
      } else if (m != "standard") {
        usage();
        return 2;
      }
    } else {
      usage();
      return 2;
    }
  }
  if (uri.empty() || cfg.warehouses < 1 || cfg.items < 1 || cfg.customers_per_district < 1 ||
      cfg.load_batch_rows < 1 || cfg.readers < 0 || (g_stop.at > 0 && cfg.readers > 0)) {
    usage();
    return 2;
  }
  if (!do_load && !do_run && !do_check) do_load = do_run = do_check = true;
  cfg.reader_uri = uri;
  cfg.reader_pragmas = pragmas;
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
    if (g_stop.at > 0 && !install_stop_in_commit(db, &cfg, &err)) {
      std::fprintf(stderr, "sw_tpcc: --stop-in-commit: %s\n", err.c_str());
      sqlite3_close(db);
      return 1;
    }
    std::string journal_mode = "?";
    if (sqlite3_stmt* jm = nullptr;
        sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &jm, nullptr) == SQLITE_OK) {
      if (sqlite3_step(jm) == SQLITE_ROW && sqlite3_column_text(jm, 0) != nullptr) {
        journal_mode = reinterpret_cast<const char*>(sqlite3_column_text(jm, 0));
      }
      sqlite3_finalize(jm);
    }
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
    // The writer's rate and the readers' (beside it, over the same window).
    std::printf("journal_mode %s\nreaders %d\nreader_procs %d\nwriter_tps %.1f\nread_tx %llu\n"
                "read_order_status %llu\nread_stock_level %llu\nread_tps %.1f\nreader_busy %llu\n",
                journal_mode.c_str(), cfg.readers, cfg.reader_processes ? 1 : 0, r.writer_tps,
                static_cast<unsigned long long>(r.read_tx),
                static_cast<unsigned long long>(r.read_committed[swtpcc::kOrderStatus]),
                static_cast<unsigned long long>(r.read_committed[swtpcc::kStockLevel]), r.read_tps,
                static_cast<unsigned long long>(r.read_busy));
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
