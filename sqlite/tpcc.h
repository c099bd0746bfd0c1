// tpcc.h — a TPC-C driver for SQLite (docs/sqlite.md).
//
// One connection, one terminal: the nine tables of TPC-C 5.11, a loader
// that follows the specification's population rules with a scaled-down item
// count and customers per district, the five transactions drawn from the
// standard mix (New-Order 45 %, Payment 43 %, Order-Status, Delivery and
// Stock-Level 4 % each; 1 % of New-Orders roll back on an unused item id),
// and consistency conditions 1-4 as a checker.  Money is kept in integer
// cents so that condition 1 is an exact comparison.  When `commit_log` is
// set, every New-Order whose COMMIT returned appends "w d o_id ol_cnt" to
// that file with one write(2) (crash tests check none is lost).  The mix's
// weights and two hooks around each COMMIT let a program run only some
// transaction types and add its own statements and bookkeeping to them
// (sqlite/mp_kill.cc: a ledger row in each write transaction, checks inside
// each read transaction, an acknowledgement after each COMMIT).
//
// Readers (Config::readers, sw_tpcc --readers N): run() can also run N
// reader connections beside its writer, each opening `reader_uri` itself
// and running `reader_pragmas` (so that a journal mode applies to all),
// as threads of this process or as forked processes (`reader_processes`;
// fork after load, each child opens its own connection and reports back
// through a pipe).  Each reader loops over TPC-C's two read-only types,
// Order-Status and Stock-Level (50/50), each in BEGIN ... COMMIT, so each
// reads one snapshot; SQLITE_BUSY is retried and counted.  Writer and
// readers open and prepare first and then start at one common instant, and
// all stop at its end (or when the writer reaches max_transactions), so
// their rates are over the same window.  The hooks and the commit log are
// the writer's alone.
#ifndef SOFTWRAP_SQLITE_TPCC_H_
#define SOFTWRAP_SQLITE_TPCC_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <string>

namespace swtpcc {

enum TxType { kNewOrder = 0, kPayment, kOrderStatus, kDelivery, kStockLevel, kTxTypes };

// What a transaction did, given to the hooks below.
struct TxInfo {
  TxType type;
  int64_t w = 0, d = 0;          // its warehouse and district (Delivery: d 0)
  int64_t o_id = 0, ol_cnt = 0;  // New-Order: the order and its lines
  int64_t amount = 0;            // Payment: cents
  int64_t delivered = 0;         // Delivery: orders delivered (0 to 10)
};

struct Config {
  int warehouses = 1;
  int items = 100000;                    // spec: 100000
  int customers_per_district = 3000;     // spec: 3000 (also initial orders)
  double seconds = 10;                   // run duration
  uint64_t max_transactions = 0;         // stop after this many (0: no limit)
  uint64_t seed = 42;
  int load_batch_rows = 500;             // rows per loader transaction
  std::string commit_log;                // see above
  // Relative weights of the types in run()'s mix (TxType order); the
  // default is the standard mix.  A zero weight leaves the type out.
  int mix[kTxTypes] = {45, 43, 4, 4, 4};
  // Called inside each transaction just before its COMMIT, on its
  // connection (it may run statements there): anything but SQLITE_OK
  // aborts the transaction with that code and *msg (SQLITE_BUSY: retried,
  // else run() stops with the message).
  std::function<int(sqlite3*, const TxInfo&, std::string* msg)> before_commit;
  // Called after COMMIT returned SQLITE_OK; false stops run() with an error.
  std::function<bool(const TxInfo&)> after_commit;
  // Readers beside the writer during run() (see above); 0: none.
  int readers = 0;
  bool reader_processes = false;  // forked processes instead of threads
  std::string reader_uri;         // each reader opens it (open_db)
  std::string reader_pragmas;     // ... and then runs these statements
};

struct Result {
  uint64_t committed[kTxTypes] = {};
  uint64_t rolled_back = 0;  // New-Orders with an unused item (by design)
  uint64_t busy = 0;         // transactions retried after SQLITE_BUSY
  double seconds = 0;
  double tpmC = 0;           // New-Orders committed per minute
  double tps = 0;            // all transactions committed per second
  double writer_tps = 0;     // the same: the writer's committed transactions per second
  // The readers' read-only transactions (Config::readers; zero without).
  uint64_t read_committed[kTxTypes] = {};  // Order-Status and Stock-Level
  uint64_t read_tx = 0;      // their sum
  uint64_t read_busy = 0;    // reader transactions retried after SQLITE_BUSY
  double read_tps = 0;       // the readers' rates (committed per second) summed
};

// Opens `uri` (SQLITE_OPEN_URI) read-write, creating it; busy timeout 5 s.
sqlite3* open_db(const std::string& uri, std::string* err);
// Creates the tables and loads them.
bool load(sqlite3* db, const Config& cfg, std::string* err);
// Runs the mix for cfg.seconds (or cfg.max_transactions), with
// cfg.readers readers beside it.
bool run(sqlite3* db, const Config& cfg, Result* out, std::string* err);
// Consistency conditions 1-4; false (with a description) if one fails.
bool check(sqlite3* db, std::string* err);
// PRAGMA integrity_check == "ok".
bool integrity_ok(sqlite3* db, std::string* err);

}  // namespace swtpcc

#endif  // SOFTWRAP_SQLITE_TPCC_H_
