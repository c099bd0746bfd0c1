// mp_kill.cc — sw_sqlite_mp_kill: writer and reader processes running
// TPC-C on one SQLite database on the softwrap VFS at its default settings
// (pools shared between processes), killed with SIGKILL at random and
// restarted, every recovered state checked by a fresh process
// (docs/sqlite.md, "Tests").
//
// The supervisor (no --role) loads a small TPC-C database in a child, then
// keeps --writers writer and --readers reader processes running and, at
// random moments (0 to 2 x --interval-ms apart), kills one of them, any
// one, with SIGKILL and starts it again while the others go on.  After
// every --check-every kills, and once more at the end (all workers killed),
// a checker process opens the database and, in one read transaction,
// checks PRAGMA integrity_check, TPC-C consistency conditions 1-4
// (swtpcc::check) and the ledger conditions below, and that every
// acknowledged transaction is there.  Any worker that exits by itself, a
// failed check, or a run that makes no progress fails the run (exit 1; the
// database directory is kept).
//
// Writers run New-Order, Payment and Delivery (BEGIN IMMEDIATE, busy
// timeout 5 s, a transaction that met SQLITE_BUSY is retried, 200 us of
// think time after each commit, so that neither writer starves the other).  Each write
// transaction also inserts one mp_ledger row whose id names the writer, its
// incarnation (restart count) and a sequence number; after its COMMIT
// returned SQLITE_OK the writer appends the id to acks.W (write and
// fdatasync).  Readers run Order-Status and Stock-Level and, inside each
// of their read transactions, check conditions 1-4 and the ledger
// conditions (a reader must never see half a transaction), and that the
// ledger never shrinks between its transactions (never an older state).
//
// Ledger conditions, against the values recorded in mp_meta at load:
//  - New-Orders in the ledger = growth of sum(D_NEXT_O_ID), and each one's
//    order is there with its O_OL_CNT;
//  - Payments in the ledger = new HISTORY rows, and their amounts = growth
//    of sum(W_YTD);
//  - orders delivered by the ledger's Deliveries = growth of the orders
//    with a carrier.
// At the end, with every worker dead, at most one ledger row per writer
// incarnation may be unacknowledged (the commit it was killed after).
//
// --journal wal: the loader sets PRAGMA journal_mode=WAL (kept in the
// database header) and every later connection must find the database in
// WAL mode.  A checkpointer process (--checkpointers, 1) runs PRAGMA
// wal_checkpoint PASSIVE, FULL, RESTART and TRUNCATE in rotation, 0-10 ms
// apart, and is killed like the others.  Readers also read a fingerprint of
// several tables twice inside each read transaction (with the checks and
// a 1 ms pause between): one snapshot must read the same.  The kill events
// vary: besides one worker at a random moment, a kill aimed at a phase
// (each worker publishes its phase in the shared file "phases": a writer's
// transaction or COMMIT, a reader's read, a checkpoint), a worker killed
// and killed again 0-5 ms after its restart (while it opens), and every
// worker at once (then either the checker is the first opener and rebuilds
// the wal-index from the -wal file, or the workers race to it and one is
// killed again 0-3 ms after they started).  The final check also runs a
// TRUNCATE checkpoint and checks again.  The summary counts the processes
// killed by role and phase, the checkpoints and the wal-index recoveries.
// --vfs unix runs the same on stock SQLite's unix VFS (a comparison).
//
// Usage: sw_sqlite_mp_kill [--kills N] [--max-seconds S] [--engine E]
//   [--vfs softwrap|scm|unix] [--journal default|wal] [--checkpointers N]
//   [--writers N] [--readers N] [--interval-ms MS]
//   [--check-every K] [--seed N] [--dir DIR] [--keep] [--items N]
//   [--customers N] [--verbose]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_program.h"
#include "softwrap/sqlite.h"
#include "tpcc.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string role;  // "" (supervisor), load, writer, reader, checkpointer, check
  std::string dir;
  std::string engine;  // "" = the VFS's default
  std::string vfs = "softwrap";
  bool wal = false;     // --journal wal
  int checkpointers = -1;  // -1: 1 with --journal wal, else 0
  int kills = 100;
  double max_seconds = 600;
  int writers = 2, readers = 2;
  int interval_ms = 100;
  int check_every = 1;
  uint64_t seed = 0;
  bool keep = false, verbose = false, final_check = false;
  int items = 1000, customers = 30;
  int id = 0, incarnation = 0;  // workers
  int slot = -1;                // workers: their word in the phase file
};

std::string db_uri(const Options& o) {
  std::string u = "file:" + o.dir + "/mp.db?vfs=" + o.vfs;
  if (!o.engine.empty()) u += "&engine=" + o.engine;
  return u;
}

// Ledger ids: writer, incarnation and sequence number.
constexpr int kIncBits = 24, kSeqBits = 24;
int64_t ledger_id(int writer, int inc, int64_t seq) {
  return (int64_t{writer} << (kIncBits + kSeqBits)) | (int64_t{inc} << kSeqBits) | seq;
}
int64_t incarnation_of(int64_t id) { return id >> kSeqBits; }  // writer and incarnation

[[noreturn]] void die(const char* role, const Options& o, const std::string& msg) {
  std::fprintf(stderr, "sw_sqlite_mp_kill %s %d.%d: %s\n", role, o.id, o.incarnation, msg.c_str());
  std::exit(1);
}

// ------------------------------------------------------------ phases
//
// Every worker publishes what it is doing in one word of the file "phases"
// (shared memory, one word per worker slot), so that the supervisor can
// say where each kill landed and aim some kills at a phase.  The words
// after kMaxSlots count the wal-index recoveries workers and checkers ran
// (SQLITE_NOTICE_RECOVER_WAL in SQLite's log).
enum Phase : int32_t {
  kPhaseOpen = 0,    // started, until its first transaction (WAL: wal-index recovery happens here)
  kPhaseTx,          // writer: BEGIN IMMEDIATE and the transaction's statements
  kPhaseCommit,      // writer: inside COMMIT (WAL: frames appended, the wal-index header)
  kPhaseIdle,        // writer: acknowledging and thinking; checkpointer: sleeping
  kPhaseRead,        // reader: its read transactions
  kPhaseCheckpoint,  // checkpointer: inside PRAGMA wal_checkpoint
  kPhases
};
const char* const kPhaseNames[kPhases] = {"open", "transaction", "commit", "idle", "read", "checkpoint"};
constexpr int kMaxSlots = 64;
constexpr int kRecoveriesWord = kMaxSlots;
// Word kArmBase + slot, set by the supervisor: the writer in that slot
// kills itself with SIGKILL after it next enters COMMIT, 0 to its last
// COMMIT's duration later (a timer whose signal is SIGKILL, so the kill
// lands inside the COMMIT call, which is too short for the supervisor to
// hit from outside on a busy machine).
constexpr int kArmBase = 2 * kMaxSlots;
volatile int32_t* g_phases = nullptr;  // the mapped file, kMaxSlots + 1 words
int g_slot = -1;

volatile int32_t* map_phases(const std::string& dir, bool create) {
  const std::string path = dir + "/phases";
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0644);
  if (fd < 0) return nullptr;
  const size_t len = 4096;
  if (create && ftruncate(fd, static_cast<off_t>(len)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : static_cast<volatile int32_t*>(p);
}

void set_phase(Phase p) {
  if (g_phases != nullptr && g_slot >= 0) __atomic_store_n(&g_phases[g_slot], p, __ATOMIC_RELEASE);
}

// SQLite's log: counts the wal-index recoveries (wal.c logs one for every
// recovery that found frames in the -wal file).
void sqlite_log(void*, int code, const char*) {
  if (code == SQLITE_NOTICE_RECOVER_WAL && g_phases != nullptr) {
    __atomic_add_fetch(&g_phases[kRecoveriesWord], 1, __ATOMIC_RELAXED);
  }
}

// The first value of the first row of `sql` as text ("" if none; *ok false
// on an error, with the message in *msg).
std::string query_text(sqlite3* db, const char* sql, bool* ok, std::string* msg) {
  sqlite3_stmt* s = nullptr;
  std::string out;
  *ok = false;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
    *msg = sqlite3_errmsg(db);
    return out;
  }
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
    *ok = true;
    if (rc == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
  } else {
    *msg = sqlite3_errmsg(db);
  }
  sqlite3_finalize(s);
  return out;
}

// Opens the database, retrying while it is busy (another process holds it
// while it recovers or commits) for up to a minute.  With --journal wal,
// every connection must find the database in WAL mode (set once, at load,
// and kept in the database header): its first read (the wal-index
// recovery, if the index needs one) and then PRAGMA journal_mode.
sqlite3* open_retrying(const Options& o, const char* role, int busy_ms) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  std::string err;
  for (;;) {
    sqlite3* db = swtpcc::open_db(db_uri(o), &err);
    if (db != nullptr) {
      sqlite3_busy_timeout(db, busy_ms);
      if (!o.wal || std::strcmp(role, "load") == 0) return db;
      bool ok = false;
      query_text(db, "SELECT count(*) FROM sqlite_schema", &ok, &err);
      std::string mode;
      if (ok) mode = query_text(db, "PRAGMA journal_mode", &ok, &err);
      if (ok && mode == "wal") return db;
      sqlite3_close(db);
      if (ok) die(role, o, "the database is in journal mode " + mode + ", not wal");
    }
    if (Clock::now() > until || (err.find("locked") == std::string::npos && err.find("busy") == std::string::npos)) {
      die(role, o, "open " + db_uri(o) + ": " + err);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// ---------------------------------------------------------------- checks

// The ledger conditions (see the top of the file): a description of the
// first that fails, or "".  Also the ledger's size in *rows.
std::string ledger_conditions(sqlite3* db, int64_t* rows) {
  static const char* kSql =
      "SELECT (SELECT sum(d_next_o_id) FROM district) - m.next_o_sum, l.new_orders, "
      "(SELECT count(*) FROM history) - m.history_rows, l.payments, "
      "(SELECT sum(w_ytd) FROM warehouse) - m.ytd_sum, l.paid, "
      "(SELECT count(*) FROM orders WHERE o_carrier_id<>0) - m.delivered, l.delivered, "
      "(SELECT count(*) FROM mp_ledger x WHERE kind=0 AND NOT EXISTS (SELECT 1 FROM orders "
      " WHERE o_w_id=x.w AND o_d_id=x.d AND o_id=x.o_id AND o_ol_cnt=x.ol_cnt)), l.n "
      "FROM mp_meta m, (SELECT count(*) AS n, coalesce(sum(kind=0), 0) AS new_orders, "
      " coalesce(sum(kind=1), 0) AS payments, coalesce(sum(CASE kind WHEN 1 THEN amount END), 0) AS paid, "
      " coalesce(sum(CASE kind WHEN 3 THEN delivered END), 0) AS delivered FROM mp_ledger) l";
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, kSql, -1, &s, nullptr) != SQLITE_OK) {
    return std::string("ledger conditions: ") + sqlite3_errmsg(db);
  }
  std::string bad;
  const int rc = sqlite3_step(s);
  if (rc != SQLITE_ROW) {
    bad = std::string("ledger conditions: ") + sqlite3_errmsg(db);
  } else {
    int64_t v[10];
    for (int i = 0; i < 10; ++i) v[i] = sqlite3_column_int64(s, i);
    char buf[256] = "";
    if (v[0] != v[1]) {
      std::snprintf(buf, sizeof buf, "New-Orders: sum(D_NEXT_O_ID) grew by %" PRId64 ", the ledger has %" PRId64,
                    v[0], v[1]);
    } else if (v[2] != v[3]) {
      std::snprintf(buf, sizeof buf, "Payments: %" PRId64 " new HISTORY rows, the ledger has %" PRId64, v[2], v[3]);
    } else if (v[4] != v[5]) {
      std::snprintf(buf, sizeof buf, "Payments: sum(W_YTD) grew by %" PRId64 ", the ledger paid %" PRId64, v[4],
                    v[5]);
    } else if (v[6] != v[7]) {
      std::snprintf(buf, sizeof buf, "Deliveries: %" PRId64 " more orders have a carrier, the ledger delivered %" PRId64,
                    v[6], v[7]);
    } else if (v[8] != 0) {
      std::snprintf(buf, sizeof buf, "%" PRId64 " New-Orders of the ledger have no order with their line count", v[8]);
    }
    bad = buf;
    *rows = v[9];
  }
  sqlite3_finalize(s);
  return bad;
}

// A fingerprint of the database that every write transaction changes and
// that reads many pages of several tables (readers compare two of them
// inside one read transaction).
const char* const kSnapshotSql =
    "SELECT (SELECT count(*) || ':' || coalesce(max(id), 0) || ':' || coalesce(sum(id % 1000003), 0) FROM mp_ledger)"
    " || '/' || (SELECT sum(d_next_o_id) || ':' || sum(d_ytd) FROM district)"
    " || '/' || (SELECT sum(s_quantity) || ':' || sum(s_ytd) || ':' || sum(s_order_cnt) FROM stock)"
    " || '/' || (SELECT sum(c_balance) || ':' || sum(c_delivery_cnt) FROM customer)"
    " || '/' || (SELECT count(*) FROM order_line) || '/' || (SELECT count(*) FROM history)"
    " || '/' || (SELECT count(*) FROM new_order)";

// Conditions 1-4 and the ledger's: "" if they hold.
std::string all_conditions(sqlite3* db, int64_t* rows) {
  std::string err;
  if (!swtpcc::check(db, &err)) return err;
  return ledger_conditions(db, rows);
}

// ---------------------------------------------------------------- roles

int role_load(const Options& o) {
  sqlite3* db = open_retrying(o, "load", 5000);
  if (o.wal) {
    bool ok = false;
    std::string err;
    const std::string mode = query_text(db, "PRAGMA journal_mode=WAL", &ok, &err);
    if (!ok) die("load", o, "PRAGMA journal_mode=WAL: " + err);
    if (mode != "wal") die("load", o, "PRAGMA journal_mode=WAL answered " + mode);
  }
  swtpcc::Config cfg;
  cfg.items = o.items;
  cfg.customers_per_district = o.customers;
  cfg.seed = o.seed;
  std::string err;
  if (!swtpcc::load(db, cfg, &err)) die("load", o, err);
  const char* kLedger =
      "CREATE TABLE mp_ledger(id INTEGER PRIMARY KEY, kind INT, w INT, d INT, o_id INT, ol_cnt INT, amount INT, "
      "delivered INT);"
      "CREATE TABLE mp_meta(next_o_sum INT, history_rows INT, ytd_sum INT, delivered INT);"
      "INSERT INTO mp_meta SELECT (SELECT sum(d_next_o_id) FROM district), (SELECT count(*) FROM history), "
      "(SELECT sum(w_ytd) FROM warehouse), (SELECT count(*) FROM orders WHERE o_carrier_id<>0);";
  char* msg = nullptr;
  if (sqlite3_exec(db, kLedger, nullptr, nullptr, &msg) != SQLITE_OK) die("load", o, msg != nullptr ? msg : "?");
  if (sqlite3_close(db) != SQLITE_OK) die("load", o, "close failed");
  return 0;
}

// Pause after each acknowledged commit (role_writer).
constexpr useconds_t kWriterThinkUs = 200;

int role_writer(const Options& o) {
  const std::string acks = o.dir + "/acks." + std::to_string(o.id);
  const int fd = ::open(acks.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) die("writer", o, "cannot open " + acks);
  sqlite3* db = open_retrying(o, "writer", 5000);
  sqlite3_stmt* ins = nullptr;
  if (sqlite3_prepare_v3(db, "INSERT INTO mp_ledger VALUES(?,?,?,?,?,?,?,?)", -1, SQLITE_PREPARE_PERSISTENT, &ins,
                         nullptr) != SQLITE_OK) {
    die("writer", o, sqlite3_errmsg(db));
  }
  swtpcc::Config cfg;
  cfg.items = o.items;
  cfg.customers_per_district = o.customers;
  cfg.seconds = 1e9;  // until killed
  cfg.seed = o.seed + static_cast<uint64_t>(o.id) * 1000003 + static_cast<uint64_t>(o.incarnation);
  const int mix[swtpcc::kTxTypes] = {45, 43, 0, 12, 0};
  std::copy(mix, mix + swtpcc::kTxTypes, cfg.mix);
  int64_t seq = 0, id = 0;
  // The armed kill (kArmBase): a POSIX timer whose signal is SIGKILL, set
  // when COMMIT begins (the kernel delivers it; no thread of ours needs
  // to be scheduled in time).
  std::mt19937_64 arm_rng(cfg.seed ^ 0x5eed);
  int64_t last_commit_ns = 100000;  // how long its last COMMIT took
  Clock::time_point commit_start;
  timer_t kill_timer{};
  sigevent sev{};
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGKILL;
  if (timer_create(CLOCK_MONOTONIC, &sev, &kill_timer) != 0) die("writer", o, "timer_create failed");
  cfg.before_commit = [&](sqlite3* d, const swtpcc::TxInfo& t, std::string* msg) {
    id = ledger_id(o.id, o.incarnation, ++seq);
    sqlite3_reset(ins);
    const int64_t v[] = {id, t.type, t.w, t.d, t.o_id, t.ol_cnt, t.amount, t.delivered};
    for (int i = 0; i < 8; ++i) sqlite3_bind_int64(ins, i + 1, v[i]);
    const int rc = sqlite3_step(ins);
    if (rc == SQLITE_DONE) {
      set_phase(kPhaseCommit);  // tpcc.cc runs COMMIT next
      commit_start = Clock::now();
      if (g_phases != nullptr && __atomic_load_n(&g_phases[kArmBase + o.slot], __ATOMIC_ACQUIRE) != 0) {
        const int64_t ns = 1 + std::uniform_int_distribution<int64_t>(0, last_commit_ns)(arm_rng);
        itimerspec its{};
        its.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
        its.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
        timer_settime(kill_timer, 0, &its, nullptr);
      }
      return SQLITE_OK;
    }
    *msg = std::string("ledger insert: ") + sqlite3_errmsg(d);
    return rc;
  };
  cfg.after_commit = [&](const swtpcc::TxInfo&) {
    set_phase(kPhaseIdle);
    last_commit_ns = std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - commit_start).count());
    char line[32];
    const int n = std::snprintf(line, sizeof line, "%" PRId64 "\n", id);
    const bool ok = write(fd, line, static_cast<size_t>(n)) == n && fdatasync(fd) == 0;
    // A think time (TPC-C's terminals have one): a writer committing back
    // to back takes RESERVED again at once, and SQLite's busy handler,
    // which sleeps and polls, can then keep the other writer out for a
    // whole run (with stock SQLite too).
    usleep(kWriterThinkUs);
    set_phase(kPhaseTx);
    return ok;
  };
  set_phase(kPhaseTx);
  swtpcc::Result r;
  std::string err;
  if (!swtpcc::run(db, cfg, &r, &err)) die("writer", o, err);
  return 0;
}

int role_reader(const Options& o) {
  const std::string counter = o.dir + "/reads." + std::to_string(o.id) + "." + std::to_string(o.incarnation);
  const int fd = ::open(counter.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("reader", o, "cannot open " + counter);
  sqlite3* db = open_retrying(o, "reader", 5000);
  swtpcc::Config cfg;
  cfg.items = o.items;
  cfg.customers_per_district = o.customers;
  cfg.seconds = 1e9;
  cfg.seed = o.seed + 77 + static_cast<uint64_t>(o.id) * 1000003 + static_cast<uint64_t>(o.incarnation);
  const int mix[swtpcc::kTxTypes] = {0, 0, 50, 0, 50};
  std::copy(mix, mix + swtpcc::kTxTypes, cfg.mix);
  int64_t checked = 0, last_rows = 0;
  set_phase(kPhaseRead);
  cfg.before_commit = [&](sqlite3* d, const swtpcc::TxInfo& t, std::string* msg) {
    int64_t rows = 0;
    // WAL: a read transaction is one snapshot, whatever other processes
    // commit and checkpoint meanwhile: the same reads, before and after
    // the checks (and a pause that lets writers and the checkpointer run),
    // must agree.
    std::string first, bad;
    bool ok = true;
    if (o.wal) first = query_text(d, kSnapshotSql, &ok, &bad);
    if (ok) bad = all_conditions(d, &rows);
    if (ok && bad.empty() && o.wal) {
      usleep(1000);
      const std::string second = query_text(d, kSnapshotSql, &ok, &bad);
      if (ok && second != first) {
        bad = "two reads of one snapshot differ: " + first + " then " + second;
      }
    }
    if (bad.empty() && rows < last_rows) {
      bad = "the ledger went back from " + std::to_string(last_rows) + " to " + std::to_string(rows) + " rows";
    }
    if (!bad.empty()) {
      if (bad.find("locked") != std::string::npos) return SQLITE_BUSY;
      *msg = "inside a read transaction (" + std::string(t.type == swtpcc::kOrderStatus ? "Order-Status" : "Stock-Level") +
             "): " + bad;
      return SQLITE_CORRUPT;
    }
    last_rows = rows;
    char line[24];
    const int n = std::snprintf(line, sizeof line, "%20" PRId64, ++checked);
    return pwrite(fd, line, static_cast<size_t>(n), 0) == n ? SQLITE_OK : SQLITE_IOERR;
  };
  swtpcc::Result r;
  std::string err;
  if (!swtpcc::run(db, cfg, &r, &err)) die("reader", o, err);
  return 0;
}

// Checkpointer (--journal wal): PRAGMA wal_checkpoint in the four modes in
// rotation, 0-10 ms apart.  Its counts (checkpoints per mode, and those
// that could not finish: busy) in ckpts.ID.INCARNATION.
int role_checkpointer(const Options& o) {
  const std::string counter = o.dir + "/ckpts." + std::to_string(o.id) + "." + std::to_string(o.incarnation);
  const int fd = ::open(counter.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("checkpointer", o, "cannot open " + counter);
  sqlite3* db = open_retrying(o, "checkpointer", 1000);
  static const char* const kModes[4] = {"PASSIVE", "FULL", "RESTART", "TRUNCATE"};
  sqlite3_stmt* st[4] = {};
  for (int m = 0; m < 4; ++m) {
    const std::string sql = std::string("PRAGMA wal_checkpoint(") + kModes[m] + ")";
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st[m], nullptr) != SQLITE_OK) die("checkpointer", o, sqlite3_errmsg(db));
  }
  std::mt19937_64 rng(o.seed + 555 + static_cast<uint64_t>(o.id) * 1000003 + static_cast<uint64_t>(o.incarnation));
  int64_t done[4] = {}, busy = 0;
  for (int64_t i = 0;; ++i) {
    const int m = static_cast<int>(i % 4);
    set_phase(kPhaseCheckpoint);
    const int rc = sqlite3_step(st[m]);
    if (rc == SQLITE_ROW) {
      const int64_t b = sqlite3_column_int64(st[m], 0), log = sqlite3_column_int64(st[m], 1),
                    ck = sqlite3_column_int64(st[m], 2);
      // Busy before it began (another connection held WAL_CKPT): -1, -1.
      if (b == 0 && (log < 0 || ck < 0)) {
        sqlite3_reset(st[m]);
        bool jok = false;
        std::string jerr;
        const std::string mode = query_text(db, "PRAGMA journal_mode", &jok, &jerr);
        die("checkpointer", o, std::string(kModes[m]) + ": the connection is not in WAL mode (PRAGMA wal_checkpoint "
                                   "answered 0, " + std::to_string(log) + ", " + std::to_string(ck) +
                                   "; PRAGMA journal_mode answers " + (jok ? mode : "error: " + jerr) + ")");
      }
      if (ck > log) {
        die("checkpointer", o, std::string(kModes[m]) + ": " + std::to_string(ck) + " of " + std::to_string(log) +
                                   " frames checkpointed");
      }
      // FULL, RESTART and TRUNCATE that were not busy checkpointed every frame.
      if (m != 0 && b == 0 && ck != log) {
        die("checkpointer", o, std::string(kModes[m]) + " not busy, but " + std::to_string(ck) + " of " +
                                   std::to_string(log) + " frames checkpointed");
      }
      if (m == 3 && b == 0 && log != 0) die("checkpointer", o, "TRUNCATE left " + std::to_string(log) + " frames");
      (b == 0 ? done[m] : busy)++;
    } else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      ++busy;
    } else {
      die("checkpointer", o, std::string(kModes[m]) + ": " + sqlite3_errmsg(db));
    }
    sqlite3_reset(st[m]);
    set_phase(kPhaseIdle);
    char line[128];
    const int n = std::snprintf(line, sizeof line, "%20" PRId64 " %20" PRId64 " %20" PRId64 " %20" PRId64 " %20" PRId64,
                                done[0], done[1], done[2], done[3], busy);
    if (pwrite(fd, line, static_cast<size_t>(n), 0) != n) die("checkpointer", o, "cannot write " + counter);
    usleep(static_cast<useconds_t>(std::uniform_int_distribution<int>(0, 10000)(rng)));
  }
}

// Every acknowledged id in the files acks.*, read before the check's
// transaction starts (so each was committed before it).
std::set<int64_t> read_acks(const std::string& dir) {
  std::set<int64_t> ids;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("acks.", 0) != 0) continue;
    std::ifstream in(e.path());
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = 0;
    for (size_t nl; (nl = all.find('\n', at)) != std::string::npos; at = nl + 1) {  // whole lines only
      ids.insert(std::strtoll(all.c_str() + at, nullptr, 10));
    }
  }
  return ids;
}

int role_check(const Options& o) {
  const std::set<int64_t> acked = read_acks(o.dir);
  sqlite3* db = open_retrying(o, "check", 30000);
  auto fail = [&](const std::string& what) {
    std::printf("check FAILED: %s\n", what.c_str());
    std::fflush(stdout);
    std::exit(1);
  };
  int64_t rows = 0, unacked = 0;
  int64_t kinds[swtpcc::kTxTypes] = {};
  // One read transaction: integrity, conditions, every acknowledged id.
  auto check_state = [&] {
    char* msg = nullptr;
    if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, &msg) != SQLITE_OK) fail(msg != nullptr ? msg : "BEGIN");
    std::string err;
    if (!swtpcc::integrity_ok(db, &err)) fail(err);
    if (const std::string bad = all_conditions(db, &rows); !bad.empty()) fail(bad);
    // Every acknowledged id is in the ledger; at the end, every ledger row
    // not acknowledged is the last commit of a writer incarnation (at most one each).
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT id, kind FROM mp_ledger", -1, &s, nullptr) != SQLITE_OK) fail(sqlite3_errmsg(db));
    std::set<int64_t> present;
    std::map<int64_t, int> unacked_per_incarnation;
    std::fill(kinds, kinds + swtpcc::kTxTypes, 0);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      const int64_t id = sqlite3_column_int64(s, 0);
      present.insert(id);
      if (acked.count(id) != 0) {
        kinds[std::clamp<int64_t>(sqlite3_column_int64(s, 1), 0, swtpcc::kTxTypes - 1)]++;
      } else {
        unacked_per_incarnation[incarnation_of(id)]++;
      }
    }
    if (rc != SQLITE_DONE) fail(std::string("reading the ledger: ") + sqlite3_errmsg(db));
    sqlite3_finalize(s);
    int64_t lost = 0, first_lost = 0;
    for (const int64_t id : acked) {
      if (present.count(id) == 0 && lost++ == 0) first_lost = id;
    }
    if (lost != 0) {
      fail(std::to_string(lost) + " acknowledged transactions are not in the database (first: writer " +
           std::to_string(first_lost >> (kIncBits + kSeqBits)) + ", incarnation " +
           std::to_string((first_lost >> kSeqBits) & ((1 << kIncBits) - 1)) + ", transaction " +
           std::to_string(first_lost & ((1 << kSeqBits) - 1)) + ")");
    }
    unacked = 0;
    for (const auto& [inc, n] : unacked_per_incarnation) {
      unacked += n;
      if (o.final_check && n > 1) {
        fail(std::to_string(n) + " committed transactions of writer incarnation " + std::to_string(inc) +
             " were never acknowledged (at most one may be: the one it was killed after)");
      }
    }
    if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, &msg) != SQLITE_OK) fail(msg != nullptr ? msg : "COMMIT");
  };
  check_state();
  if (o.wal && o.final_check) {
    // WAL, at the end (every worker dead): once more after a TRUNCATE
    // checkpoint has moved every frame into the database.
    sqlite3_stmt* ck = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &ck, nullptr) != SQLITE_OK ||
        sqlite3_step(ck) != SQLITE_ROW) {
      fail(std::string("PRAGMA wal_checkpoint(TRUNCATE): ") + sqlite3_errmsg(db));
    }
    if (sqlite3_column_int64(ck, 0) != 0 || sqlite3_column_int64(ck, 1) != 0) {
      fail("PRAGMA wal_checkpoint(TRUNCATE) with no other process: busy " + std::to_string(sqlite3_column_int64(ck, 0)) +
           ", " + std::to_string(sqlite3_column_int64(ck, 1)) + " frames left");
    }
    sqlite3_finalize(ck);
    check_state();
  }
  if (sqlite3_close(db) != SQLITE_OK) fail("close");
  std::printf("check ok acked %zu ledger %" PRId64 " unacked %" PRId64 " new_order %" PRId64 " payment %" PRId64
              " delivery %" PRId64 "\n",
              acked.size(), rows, unacked, kinds[swtpcc::kNewOrder], kinds[swtpcc::kPayment],
              kinds[swtpcc::kDelivery]);
  return 0;
}

// ---------------------------------------------------------------- supervisor

enum Role { kWriter = 0, kReader, kCheckpointer, kRoles };
const char* const kRoleNames[kRoles] = {"writer", "reader", "checkpointer"};

struct Worker {
  Role role;
  int id;
  int slot;  // its word in the phase file
  int incarnation = 0;
  pid_t pid = -1;
  bool writer() const { return role == kWriter; }
  const char* name() const { return kRoleNames[role]; }
};

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::vector<std::string> common_args(const Options& o) {
  std::vector<std::string> a = {self_exe(), "--dir", o.dir, "--vfs", o.vfs, "--items", std::to_string(o.items),
                                "--customers", std::to_string(o.customers), "--seed", std::to_string(o.seed)};
  if (!o.engine.empty()) a.insert(a.end(), {"--engine", o.engine});
  if (o.wal) a.insert(a.end(), {"--journal", "wal"});
  return a;
}

pid_t spawn(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

void start(const Options& o, Worker* w) {
  auto args = common_args(o);
  args.insert(args.end(), {"--role", w->name(), "--id", std::to_string(w->id), "--incarnation",
                           std::to_string(w->incarnation), "--slot", std::to_string(w->slot)});
  if (g_phases != nullptr) __atomic_store_n(&g_phases[w->slot], kPhaseOpen, __ATOMIC_RELEASE);
  w->pid = spawn(args);
}

// Runs the checker; its one line of output in *line.  True if it passed.
bool run_check(const Options& o, bool final_check, std::string* line) {
  auto args = common_args(o);
  args.insert(args.end(), {"--role", "check"});
  if (final_check) args.emplace_back("--final");
  std::string out;
  const int rc = softwrap::sqlite_test::run_program(args, "", &out);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  *line = out;
  return rc == 0 && out.rfind("check ok", 0) == 0;
}

int64_t field(const std::string& line, const std::string& key) {
  std::istringstream in(line);
  std::string k;
  while (in >> k) {
    if (k == key) {
      int64_t v = 0;
      in >> v;
      return v;
    }
  }
  return -1;
}

int supervise(Options o) {
  if (o.seed == 0) o.seed = static_cast<uint64_t>(std::random_device{}()) | 1;
  bool own_dir = false;
  if (o.dir.empty()) {
    o.dir = "/dev/shm/sw_mp_kill." + std::to_string(getpid());
    own_dir = true;
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) {
    std::fprintf(stderr, "sw_sqlite_mp_kill: cannot create %s: %s\n", o.dir.c_str(), ec.message().c_str());
    return 2;
  }
  if (self_exe().empty()) {
    std::fprintf(stderr, "sw_sqlite_mp_kill: cannot find its own executable\n");
    return 2;
  }
  setenv("SOFTWRAP_MEDIUM", std::getenv("SOFTWRAP_MEDIUM") != nullptr ? std::getenv("SOFTWRAP_MEDIUM") : "x86", 1);
  g_phases = map_phases(o.dir, true);
  if (g_phases == nullptr) {
    std::fprintf(stderr, "sw_sqlite_mp_kill: cannot create %s/phases\n", o.dir.c_str());
    return 2;
  }
  std::printf("sw_sqlite_mp_kill: %s, engine %s, journal %s, %d writers, %d readers, %d checkpointers, %d kills, "
              "seed %" PRIu64 ", medium %s\n",
              db_uri(o).c_str(), o.engine.empty() ? "(default)" : o.engine.c_str(), o.wal ? "wal" : "(default)",
              o.writers, o.readers, o.checkpointers, o.kills, o.seed, std::getenv("SOFTWRAP_MEDIUM"));
  std::fflush(stdout);
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::mt19937_64 rng(o.seed);

  std::vector<Worker> workers;
  bool failed = false;
  std::string why;
  auto stop_all = [&] {
    for (Worker& w : workers) {
      if (w.pid > 0) {
        kill(w.pid, SIGKILL);
        waitpid(w.pid, nullptr, 0);
        w.pid = -1;
      }
    }
  };

  {
    auto args = common_args(o);
    args.insert(args.end(), {"--role", "load"});
    std::string out;
    if (softwrap::sqlite_test::run_program(args, "", &out) != 0) {
      std::fprintf(stderr, "sw_sqlite_mp_kill: loading failed: %s\n", out.c_str());
      return 1;
    }
  }
  const double load_s = seconds();
  int checks = 0, kills = 0;
  // Processes killed, by role and by the phase they were in; kills in the
  // reopen after every worker died (wal-index recovery) counted apart.
  int64_t killed[kRoles][kPhases] = {}, killed_reopen[kRoles] = {};
  int kill_all_events = 0;
  std::string line;
  if (!run_check(o, false, &line)) {
    failed = true;
    why = "the check after loading: " + line;
  } else {
    ++checks;
  }
  for (int i = 0; i < o.writers; ++i) workers.push_back(Worker{kWriter, i + 1, static_cast<int>(workers.size())});
  for (int i = 0; i < o.readers; ++i) workers.push_back(Worker{kReader, i + 1, static_cast<int>(workers.size())});
  for (int i = 0; i < o.checkpointers; ++i) {
    workers.push_back(Worker{kCheckpointer, i + 1, static_cast<int>(workers.size())});
  }
  for (Worker& w : workers) {
    start(o, &w);
    if (w.pid < 0) {
      failed = true;
      why = "cannot start a worker";
    }
  }
  // A worker that ended by itself (anything but our SIGKILL) fails the run.
  auto reap_unexpected = [&]() -> bool {
    for (Worker& w : workers) {
      int status = 0;
      if (w.pid > 0 && waitpid(w.pid, &status, WNOHANG) == w.pid) {
        w.pid = -1;
        why = std::string(w.name()) + " " + std::to_string(w.id) + " (incarnation " + std::to_string(w.incarnation) +
              ") " +
              (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                 : "died of signal " + std::to_string(WTERMSIG(status))) +
              " before it was killed";
        return true;
      }
    }
    return false;
  };
  while (!failed && kills < o.kills) {
    if (seconds() > o.max_seconds) {
      failed = true;
      why = "--max-seconds passed after " + std::to_string(kills) + " kills";
      break;
    }
    const auto until = Clock::now() + std::chrono::microseconds(std::uniform_int_distribution<int64_t>(
                                          0, int64_t{2000} * o.interval_ms)(rng));
    while (!failed && Clock::now() < until) {
      if (reap_unexpected()) failed = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (failed) break;
    // Kills v (its phase recorded; `reopen`: in the reopen after every
    // worker died) and, unless `restart` is false, starts it again.
    auto kill_one = [&](Worker& v, bool reopen, bool restart) -> bool {
      const int32_t ph = std::clamp<int32_t>(__atomic_load_n(&g_phases[v.slot], __ATOMIC_ACQUIRE), 0, kPhases - 1);
      kill(v.pid, SIGKILL);
      int status = 0;
      waitpid(v.pid, &status, 0);
      if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
        failed = true;
        why = std::string(v.name()) + " " + std::to_string(v.id) + " (incarnation " + std::to_string(v.incarnation) +
              ") ended by itself before the kill (status " + std::to_string(status) + ")";
        v.pid = -1;
        return false;
      }
      v.pid = -1;
      (reopen && ph == kPhaseOpen ? killed_reopen[v.role] : killed[v.role][ph])++;
      v.incarnation++;
      if (!restart) return true;
      start(o, &v);
      if (v.pid < 0) {
        failed = true;
        why = "cannot restart a worker";
        return false;
      }
      return true;
    };
    auto pick = [&]() -> Worker& { return workers[std::uniform_int_distribution<size_t>(0, workers.size() - 1)(rng)]; };
    auto pause_us = [&](int64_t max_us) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int64_t>(0, max_us)(rng)));
    };
    Worker* victim = &pick();
    const int kind = o.wal ? std::uniform_int_distribution<int>(0, 99)(rng) : 99;
    if (kind < 10) {
      // Every worker at once: the next opener finds the wal-index stale and
      // rebuilds it from the -wal file.  Either the checker is that opener
      // (the workers start after the check), or the workers race to it and
      // one of them is killed again 0-3 ms after they started.
      ++kill_all_events;
      const bool check_first = std::uniform_int_distribution<int>(0, 1)(rng) == 0;
      for (Worker& w : workers) {
        if (!kill_one(w, false, false)) break;
      }
      if (failed) break;
      if (check_first) {
        if (!run_check(o, false, &line)) {
          failed = true;
          why = "the check after kill " + std::to_string(kills + 1) + " (every worker, the checker first): " + line;
          break;
        }
        ++checks;
      }
      for (Worker& w : workers) {
        start(o, &w);
        if (w.pid < 0) {
          failed = true;
          why = "cannot restart a worker";
        }
      }
      if (failed) break;
      if (!check_first) {
        pause_us(3000);
        if (!kill_one(pick(), true, true)) break;
      }
    } else if (kind < 25 && victim->role == kWriter) {
      // Inside COMMIT: the writer arms its own SIGKILL (kArmBase) and dies
      // within about one COMMIT's duration of entering COMMIT; kill_one
      // then reaps it (or kills it after a second).
      __atomic_store_n(&g_phases[kArmBase + victim->slot], 1, __ATOMIC_RELEASE);
      const auto give_up = Clock::now() + std::chrono::seconds(1);
      for (;;) {
        siginfo_t info{};
        if (waitid(P_PID, static_cast<id_t>(victim->pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            info.si_pid != 0 || Clock::now() > give_up) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      __atomic_store_n(&g_phases[kArmBase + victim->slot], 0, __ATOMIC_RELEASE);
      if (!kill_one(*victim, false, true)) break;
    } else if (kind < 45) {
      // Aimed at a phase: wait (up to 200 ms) until the victim is in it.
      Phase target = kPhaseRead;
      if (victim->role == kWriter) target = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? kPhaseTx : kPhaseCommit;
      if (victim->role == kCheckpointer) target = kPhaseCheckpoint;
      const auto give_up = Clock::now() + std::chrono::milliseconds(200);
      while (__atomic_load_n(&g_phases[victim->slot], __ATOMIC_ACQUIRE) != target && Clock::now() < give_up) {
      }
      if (!kill_one(*victim, false, true)) break;
    } else if (kind < 65) {
      // Killed, restarted, and killed again 0-5 ms later, while it opens.
      if (!kill_one(*victim, false, true)) break;
      pause_us(5000);
      if (!kill_one(*victim, false, true)) break;
    } else {
      if (!kill_one(*victim, false, true)) break;
    }
    ++kills;
    Worker& v = *victim;
    if (kills % o.check_every == 0) {
      if (!run_check(o, false, &line)) {
        failed = true;
        why = "the check after kill " + std::to_string(kills) + ": " + line;
        break;
      }
      ++checks;
      if (o.verbose) {
        std::printf("kill %d (%s %d): %s (%.1f s)\n", kills, v.name(), v.id, line.c_str(), seconds());
        std::fflush(stdout);
      }
    }
  }
  if (!failed && reap_unexpected()) failed = true;
  stop_all();
  if (!failed) {
    if (!run_check(o, true, &line)) {
      failed = true;
      why = "the final check: " + line;
    } else {
      ++checks;
    }
  }
  // Reader transactions checked, from the readers' counter files.
  int64_t reads = 0;
  std::map<int, int64_t> reads_by;
  for (const auto& e : fs::directory_iterator(o.dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("reads.", 0) != 0) continue;
    std::ifstream in(e.path());
    int64_t v = 0;
    in >> v;
    reads += v;
    reads_by[std::atoi(n.c_str() + 6)] += v;
  }
  // Checkpoints, from the checkpointers' counter files: per mode, and busy.
  int64_t ckpts[5] = {};
  for (const auto& e : fs::directory_iterator(o.dir, ec)) {
    if (e.path().filename().string().rfind("ckpts.", 0) != 0) continue;
    std::ifstream in(e.path());
    for (int64_t& c : ckpts) {
      int64_t v = 0;
      in >> v;
      c += v;
    }
  }
  const int64_t acked = field(line, "acked");
  if (!failed) {
    // Progress: every writer acknowledged something, every reader checked.
    std::set<int64_t> acks = read_acks(o.dir);
    for (int i = 1; i <= o.writers; ++i) {
      const bool some = acks.lower_bound(ledger_id(i, 0, 0)) != acks.lower_bound(ledger_id(i + 1, 0, 0));
      if (!some) {
        failed = true;
        why = "writer " + std::to_string(i) + " acknowledged no transaction";
      }
    }
    for (int i = 1; i <= o.readers; ++i) {
      if (reads_by[i] == 0) {
        failed = true;
        why = "reader " + std::to_string(i) + " checked no transaction";
      }
    }
    if (o.checkpointers > 0 && ckpts[0] + ckpts[1] + ckpts[2] + ckpts[3] == 0) {
      failed = true;
      why = "no checkpoint completed";
    }
  }
  int64_t by_role[kRoles] = {};
  for (int r = 0; r < kRoles; ++r) {
    by_role[r] = killed_reopen[r];
    for (int64_t n : killed[r]) by_role[r] += n;
  }
  std::string ckpt_text;
  if (o.checkpointers > 0) ckpt_text = ", checkpointers " + std::to_string(by_role[kCheckpointer]);
  std::printf("kills %d (writers %" PRId64 ", readers %" PRId64 "%s), checks passed %d, transactions acknowledged %" PRId64
              " (new_order %" PRId64 ", payment %" PRId64 ", delivery %" PRId64 "), committed but not acknowledged %" PRId64
              ", reader transactions checked %" PRId64 ", load %.1f s, total %.1f s\n",
              kills, by_role[kWriter], by_role[kReader], ckpt_text.c_str(), checks, acked, field(line, "new_order"),
              field(line, "payment"), field(line, "delivery"), field(line, "unacked"), reads, load_s, seconds());
  if (o.wal) {
    // Where the kills landed, and what the WAL machinery did meanwhile.
    std::printf("processes killed by phase (kill events: %d of every worker at once):\n", kill_all_events);
    for (int r = 0; r < kRoles; ++r) {
      std::string row;
      for (int p = 0; p < kPhases; ++p) {
        if (killed[r][p] != 0) row += " " + std::string(kPhaseNames[p]) + " " + std::to_string(killed[r][p]);
      }
      if (killed_reopen[r] != 0) row += " reopen-after-all-died " + std::to_string(killed_reopen[r]);
      std::printf("  %-12s %" PRId64 ":%s\n", kRoleNames[r], by_role[r], row.c_str());
    }
    std::printf("checkpoints completed: passive %" PRId64 ", full %" PRId64 ", restart %" PRId64 ", truncate %" PRId64
                ", busy %" PRId64 "; wal-index recoveries that found frames %d\n",
                ckpts[0], ckpts[1], ckpts[2], ckpts[3], ckpts[4],
                __atomic_load_n(&g_phases[kRecoveriesWord], __ATOMIC_RELAXED));
  }
  if (failed) {
    std::printf("FAILED: %s\ndatabase kept in %s\n", why.c_str(), o.dir.c_str());
    return 1;
  }
  std::printf("ok\n");
  if (own_dir && !o.keep) {
    // The wal-index (the VFS names it in /dev/shm after the pool file's
    // device and inode) if a kill left it behind.
    struct stat sb {};
    if (o.wal && stat((o.dir + "/mp.db").c_str(), &sb) == 0) {
      char tag[64];
      std::snprintf(tag, sizeof tag, "-%llx-%llx-", static_cast<unsigned long long>(sb.st_dev),
                    static_cast<unsigned long long>(sb.st_ino));
      for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("softwrap-", 0) == 0 && n.find(tag) != std::string::npos && n.ends_with(".wal-index")) {
          fs::remove(e.path(), ec);
        }
      }
    }
    fs::remove_all(o.dir, ec);
  }
  return 0;
}

void usage() {
  std::fprintf(stderr,
               "usage: sw_sqlite_mp_kill [--kills N (100)] [--max-seconds S (600)] [--engine NAME] [--vfs softwrap|scm|unix]\n"
               "         [--writers N (2)] [--readers N (2)] [--interval-ms MS (100): kills 0 to 2 MS apart]\n"
               "         [--check-every K (1)] [--seed N] [--dir DIR] [--keep] [--items N (1000)]\n"
               "         [--customers N (30)] [--verbose] [--journal default|wal]\n"
               "         [--checkpointers N (1 with --journal wal, else 0)]\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--role") o.role = val();
    else if (a == "--dir") o.dir = val();
    else if (a == "--engine") o.engine = val();
    else if (a == "--vfs") o.vfs = val();
    else if (a == "--journal") {
      const std::string j = val();
      if (j != "wal" && j != "default") {
        usage();
        return 2;
      }
      o.wal = j == "wal";
    } else if (a == "--checkpointers") o.checkpointers = std::atoi(val().c_str());
    else if (a == "--slot") o.slot = std::atoi(val().c_str());
    else if (a == "--kills") o.kills = std::atoi(val().c_str());
    else if (a == "--max-seconds") o.max_seconds = std::atof(val().c_str());
    else if (a == "--writers") o.writers = std::atoi(val().c_str());
    else if (a == "--readers") o.readers = std::atoi(val().c_str());
    else if (a == "--interval-ms") o.interval_ms = std::atoi(val().c_str());
    else if (a == "--check-every") o.check_every = std::atoi(val().c_str());
    else if (a == "--seed") o.seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--items") o.items = std::atoi(val().c_str());
    else if (a == "--customers") o.customers = std::atoi(val().c_str());
    else if (a == "--id") o.id = std::atoi(val().c_str());
    else if (a == "--incarnation") o.incarnation = std::atoi(val().c_str());
    else if (a == "--keep") o.keep = true;
    else if (a == "--verbose") o.verbose = true;
    else if (a == "--final") o.final_check = true;
    else {
      usage();
      return 2;
    }
  }
  if (o.kills < 0 || o.writers < 1 || o.readers < 0 || o.interval_ms < 0 || o.check_every < 1 || o.items < 1 ||
      o.customers < 1 || o.writers >= 255) {
    usage();
    return 2;
  }
  if (o.checkpointers < 0) o.checkpointers = o.wal ? 1 : 0;
  if (o.checkpointers > 0 && !o.wal) {
    std::fprintf(stderr, "sw_sqlite_mp_kill: --checkpointers needs --journal wal\n");
    return 2;
  }
  if (o.writers + o.readers + o.checkpointers > kMaxSlots) {
    usage();
    return 2;
  }
  if (o.role.empty()) return supervise(o);
  // Workers and checkers: the phase file (the supervisor made it), and
  // SQLite's log for the wal-index recoveries.
  g_phases = map_phases(o.dir, false);
  g_slot = o.slot;
  sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, nullptr);
  if (sw_sqlite_register(0) != 0) {
    std::fprintf(stderr, "sw_sqlite_mp_kill: cannot register the softwrap VFSes\n");
    return 1;
  }
  if (o.role == "load") return role_load(o);
  if (o.role == "writer") return role_writer(o);
  if (o.role == "reader") return role_reader(o);
  if (o.role == "checkpointer") return role_checkpointer(o);
  if (o.role == "check") return role_check(o);
  usage();
  return 2;
}
