// crash_workload.cc — SQLite on the softwrap VFS under the crash simulator.
//
// Approach.  The simulated pool (8 MiB, in memory) is attached to the VFS
// (vfs_attach.h), so SQLite runs unchanged on it: the VFS opens a wrap at a
// transaction's first write and closes it at the commit, i.e. one COMMIT is
// one wrap.  The driver therefore runs with external wraps: it only marks
// the transaction's boundaries and takes the golden states around it.
//
// The database: one table of accounts (id, owner, balance, note blob), an
// index on owner and one on (balance, id), 40 rows at setup, 1 KiB pages
// (so a few dozen rows make a tree of several levels and a transaction
// touches several pages) and a 10-page cache (so a large transaction
// spills pages into its wrap before it commits).  Each run is a seeded
// sequence of transactions of eight kinds: a single INSERT, a two-UPDATE
// transfer, a DELETE, a multi-row UPDATE through an index, a batch of
// inserts, deletes and an update in one transaction, a batch large enough
// to spill before its COMMIT, a small ROLLBACK, and a ROLLBACK of a
// transaction large enough to spill (both spills checked: the VFS has a
// wrap open before COMMIT/ROLLBACK).  The first eight transactions of a run
// are the eight kinds in a seeded order, the rest are drawn at random.
//
// Two checks per crash image:
//   * bytes: after each commit the workload owns exactly the bytes that
//     make up the database file — the pool's file directory, the file's
//     block table and its blocks up to the file size — and the number of
//     allocations it holds, so the simulator's oracle demands that those
//     bytes equal the state before or after the interrupted commit (after
//     a ROLLBACK that wrote nothing the driver checks they are unchanged;
//     after one that spilled, only reused free pages may differ, see
//     rollback_difference);
//   * SQL (Workload::check_image): the recovered image, opened as a pool,
//     is attached to the VFS, the database is opened read-only through it,
//     PRAGMA integrity_check must say ok and the table must equal, row for
//     row, the committed contents of the golden state the bytes matched.
// The expected contents come from a model of the table kept in C++ (a map
// updated alongside each statement), never from SQLite; after every
// transaction the live database is checked against the model too.
//
// One run at a time per process: the model and the contents per golden id
// live in this file (Simulator::run calls setup, run and then the checks in
// order), as the VFS's registry is process-wide anyway.
#include "crash_workload.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "vfs_attach.h"

namespace softwrap::crashsim {
namespace {

constexpr char kRunPath[] = "/softwrap-crashsim/run.db";      // the workload's pool
constexpr char kImagePath[] = "/softwrap-crashsim/image.db";  // a crash image's pool
constexpr int kInitialRows = 40;
constexpr int kMinRows = 24;  // deletes stop here
constexpr const char* kOwners[] = {"ada", "bob", "cyd", "dee", "eve", "fay"};

std::string uri(const char* path) { return std::string("file:") + path + "?vfs=softwrap&pool=" + path; }

// ------------------------------------------------------------------ model

struct Row {
  std::string owner;
  int64_t balance;
  std::string note;  // blob bytes
  bool operator==(const Row& o) const { return owner == o.owner && balance == o.balance && note == o.note; }
};
using Table = std::map<int64_t, Row>;

struct RunState {
  Table table;  // committed contents
  int64_t next_id = 1;
  std::map<uint32_t, Table> by_golden;  // golden id -> committed contents
  bool own_bytes = true;                 // false: the SQL-only control variant
};
RunState g_run;

std::string random_note(Rng& rng, size_t max) {
  std::string s(rng.below(max + 1), '\0');
  for (char& c : s) c = static_cast<char>(rng.next());
  return s;
}

Row random_row(Rng& rng, size_t max_note) {
  return Row{kOwners[rng.below(std::size(kOwners))], static_cast<int64_t>(rng.below(10000)),
             random_note(rng, max_note)};
}

int64_t pick_id(const Table& t, Rng& rng) {
  auto it = t.begin();
  std::advance(it, static_cast<long>(rng.below(t.size())));
  return it->first;
}

// ------------------------------------------------------------- SQL helpers

// A bound value: an integer, a text or a blob.
struct Arg {
  enum Kind { kInt, kText, kBlob } kind;
  int64_t i;
  std::string s;
};
Arg I(int64_t v) { return {Arg::kInt, v, {}}; }
Arg T(const std::string& s) { return {Arg::kText, 0, s}; }
Arg B(const std::string& s) { return {Arg::kBlob, 0, s}; }

// Runs one statement to completion; "" or what failed.
std::string sql(sqlite3* db, const char* text, const std::vector<Arg>& args = {}) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, text, -1, &st, nullptr) != SQLITE_OK) {
    return std::string("prepare \"") + text + "\": " + sqlite3_errmsg(db);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const int k = static_cast<int>(i) + 1;
    const Arg& a = args[i];
    if (a.kind == Arg::kInt) sqlite3_bind_int64(st, k, a.i);
    if (a.kind == Arg::kText) sqlite3_bind_text(st, k, a.s.data(), static_cast<int>(a.s.size()), SQLITE_TRANSIENT);
    if (a.kind == Arg::kBlob) sqlite3_bind_blob(st, k, a.s.data(), static_cast<int>(a.s.size()), SQLITE_TRANSIENT);
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
  }
  std::string err = rc == SQLITE_DONE ? "" : std::string("\"") + text + "\": " + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return err;
}

// PRAGMA integrity_check's answer ("ok" or the problems found).
std::string integrity(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) != SQLITE_OK) return sqlite3_errmsg(db);
  std::string out;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!out.empty()) out += "; ";
    std::string line = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    std::replace(line.begin(), line.end(), '\n', ' ');
    out += line;
  }
  if (rc != SQLITE_DONE) out += std::string(out.empty() ? "" : "; ") + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return out;
}

std::string read_table(sqlite3* db, Table* out) {
  out->clear();
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT id, owner, balance, note FROM acct ORDER BY id", -1, &st, nullptr) != SQLITE_OK) {
    return std::string("reading the table: ") + sqlite3_errmsg(db);
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* owner = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    const auto* note = static_cast<const char*>(sqlite3_column_blob(st, 3));
    (*out)[sqlite3_column_int64(st, 0)] =
        Row{owner ? owner : "", sqlite3_column_int64(st, 2),
            std::string(note ? note : "", static_cast<size_t>(sqlite3_column_bytes(st, 3)))};
  }
  std::string err = rc == SQLITE_DONE ? "" : std::string("reading the table: ") + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return err;
}

// integrity_check is ok and the table equals `want`; "" or why not.
std::string verify(sqlite3* db, const Table& want) {
  if (const std::string ic = integrity(db); ic != "ok") return "PRAGMA integrity_check: " + ic;
  Table got;
  if (std::string err = read_table(db, &got); !err.empty()) return err;
  if (got == want) return "";
  std::string why = "the table holds " + std::to_string(got.size()) + " rows, the committed state " +
                    std::to_string(want.size());
  for (auto g = got.cbegin(), w = want.cbegin(); g != got.cend() || w != want.cend();) {
    if (g != got.end() && w != want.end() && g->first == w->first) {
      if (!(g->second == w->second)) return why + "; row " + std::to_string(g->first) + " differs";
      ++g, ++w;
    } else if (w == want.end() || (g != got.end() && g->first < w->first)) {
      return why + "; row " + std::to_string(g->first) + " should not be there";
    } else {
      return why + "; row " + std::to_string(w->first) + " is missing";
    }
  }
  return why;
}

sqlite3* open_db(const char* path, int flags, std::string* err) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri(path).c_str(), &db, flags | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    *err = std::string("opening the database through the VFS: ") + (db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return nullptr;
  }
  return db;
}

// ------------------------------------------------------------ the workload

// Owns the bytes of the database file; returns the allocations it holds.
uint64_t own_db(Driver& d) {
  sqlite_vfs::FileLayout l;
  if (!sqlite_vfs::file_layout(d.pool(), "db", &l)) {
    d.fail("the pool holds no database file");
    return 0;
  }
  d.disown_all();
  if (g_run.own_bytes) {
    for (const auto& [addr, n] : l.extents) d.own(addr, n);
  }
  return l.allocations;
}

std::string insert(sqlite3* db, Table* t, int64_t id, const Row& r) {
  (*t)[id] = r;
  return sql(db, "INSERT INTO acct(id, owner, balance, note) VALUES(?, ?, ?, ?)",
             {I(id), T(r.owner), I(r.balance), B(r.note)});
}

std::string erase(sqlite3* db, Table* t, int64_t id) {
  t->erase(id);
  return sql(db, "DELETE FROM acct WHERE id = ?", {I(id)});
}

void setup_sqlite(std::vector<Driver*>& dv, Rng& rng, bool own_bytes) {
  Driver& d = *dv[0];
  g_run = RunState{};
  g_run.own_bytes = own_bytes;
  if (sqlite_vfs::attach_pool(kRunPath, d.pool()) != SQLITE_OK) return d.fail("attaching the pool to the VFS");
  std::string err;
  if (sqlite3* db = open_db(kRunPath, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &err)) {
    err = sql(db, "PRAGMA page_size=1024");
    if (err.empty()) {
      err = sql(db,
                "CREATE TABLE acct(id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL, "
                "note BLOB)");
    }
    if (err.empty()) err = sql(db, "CREATE INDEX acct_owner ON acct(owner)");
    if (err.empty()) err = sql(db, "CREATE INDEX acct_balance ON acct(balance, id)");
    if (err.empty()) err = sql(db, "BEGIN");
    for (int i = 0; i < kInitialRows && err.empty(); ++i) {
      err = insert(db, &g_run.table, g_run.next_id++, random_row(rng, 200));
    }
    if (err.empty()) err = sql(db, "COMMIT");
    if (err.empty()) err = verify(db, g_run.table);
    sqlite3_close(db);
  }
  if (sqlite_vfs::detach_pool(kRunPath) != SQLITE_OK && err.empty()) err = "detaching the pool from the VFS";
  if (!err.empty()) return d.fail("setup: " + err);
  own_db(d);
}

// SQLite journals each page before it first changes it — except freelist
// leaf pages it reuses, whose old content nothing reads (btree.c asks the
// pager for them without content).  So a ROLLBACK after a spill restores
// every page in use but may leave a reused free page with what the spilled
// transaction wrote there.  "" if that is all that differs between the
// database file `before` the transaction and `now`.
uint32_t be(const std::string& f, size_t at, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | static_cast<unsigned char>(f[at + static_cast<size_t>(i)]);
  return v;
}

std::string rollback_difference(const std::string& before, const std::string& now) {
  if (before.size() != now.size()) {
    return "ROLLBACK left the file at " + std::to_string(now.size()) + " bytes, was " + std::to_string(before.size());
  }
  if (before.size() < 100) return before == now ? "" : "ROLLBACK changed the database header";
  const uint32_t ps = be(before, 16, 2) == 1 ? 65536 : be(before, 16, 2);
  const size_t pages = before.size() / ps;
  std::vector<bool> free_leaf(pages + 1);
  size_t trunks = 0;
  for (uint32_t trunk = be(before, 32, 4); trunk != 0; trunk = be(before, (trunk - 1) * size_t{ps}, 4)) {
    const size_t at = (trunk - 1) * size_t{ps};
    if (trunk > pages || ++trunks > pages || at + 8 + 4 * size_t{be(before, at + 4, 4)} > before.size()) {
      return "the freelist of the database before the transaction is damaged";
    }
    for (uint32_t i = 0, n = be(before, at + 4, 4); i < n; ++i) {
      const uint32_t leaf = be(before, at + 8 + 4 * size_t{i}, 4);
      if (leaf != 0 && leaf <= pages) free_leaf[leaf] = true;
    }
  }
  for (size_t pg = 1; pg <= pages; ++pg) {
    const size_t at = (pg - 1) * ps;
    if (!free_leaf[pg] && std::memcmp(before.data() + at, now.data() + at, ps) != 0) {
      return "ROLLBACK left page " + std::to_string(pg) + " changed, which is in use";
    }
  }
  return "";
}

enum Kind { kInsert, kTransfer, kDelete, kRaise, kBatch, kSpillCommit, kRollback, kSpillRollback, kKinds };

// Runs one transaction of kind k and applies it to *t (for a ROLLBACK: does
// not).  *spilled: the VFS had a wrap open before COMMIT or ROLLBACK, i.e.
// SQLite wrote pages before the end of the transaction.
std::string transaction(sqlite3* db, sw_pool* p, Kind k, Rng& rng, Table* t, bool* spilled) {
  std::string err;
  auto add = [&](size_t note) {
    if (err.empty()) err = insert(db, t, g_run.next_id++, random_row(rng, note));
  };
  auto del = [&] {
    if (err.empty() && t->size() > static_cast<size_t>(kMinRows)) err = erase(db, t, pick_id(*t, rng));
  };
  *spilled = false;
  switch (k) {
    case kInsert:
      add(300);
      break;
    case kTransfer: {  // two UPDATEs in one transaction
      const int64_t a = pick_id(*t, rng), b = pick_id(*t, rng);
      const auto amt = static_cast<int64_t>(1 + rng.below(500));
      err = sql(db, "BEGIN");
      if (err.empty()) err = sql(db, "UPDATE acct SET balance = balance - ? WHERE id = ?", {I(amt), I(a)});
      (*t)[a].balance -= amt;
      if (err.empty()) err = sql(db, "UPDATE acct SET balance = balance + ? WHERE id = ?", {I(amt), I(b)});
      (*t)[b].balance += amt;
      if (err.empty()) err = sql(db, "COMMIT");
      break;
    }
    case kDelete:
      del();
      break;
    case kRaise: {  // several rows through the owner index; their balance index entries move
      const std::string owner = kOwners[rng.below(std::size(kOwners))];
      const auto amt = static_cast<int64_t>(rng.below(2000)) - 1000;
      err = sql(db, "UPDATE acct SET balance = balance + ? WHERE owner = ?", {I(amt), T(owner)});
      for (auto& [id, r] : *t) {
        if (r.owner == owner) r.balance += amt;
      }
      break;
    }
    case kBatch: {
      err = sql(db, "BEGIN");
      for (uint64_t n = 2 + rng.below(3); n-- > 0;) add(400);
      for (uint64_t n = 1 + rng.below(2); n-- > 0;) del();
      const int64_t id = pick_id(*t, rng);
      const std::string note = random_note(rng, 600);
      if (err.empty()) err = sql(db, "UPDATE acct SET note = ? WHERE id = ?", {B(note), I(id)});
      (*t)[id].note = note;
      if (err.empty()) err = sql(db, "COMMIT");
      break;
    }
    case kSpillCommit: {
      // More new pages than the 10-page cache holds: SQLite writes some of
      // them into the open wrap before COMMIT, and COMMIT writes the rest
      // (and pages written before, again).
      err = sql(db, "BEGIN");
      for (int n = 0; n < 24; ++n) add(700);
      for (int n = 0; n < 20; ++n) del();
      *spilled = sw_wrap_depth(p) > 0;
      if (err.empty()) err = sql(db, "COMMIT");
      break;
    }
    case kRollback:
    case kSpillRollback: {
      Table scratch = *t;  // the statements' effects, thrown away
      t = &scratch;
      err = sql(db, "BEGIN");
      if (k == kRollback) {
        add(200);
        const int64_t id = pick_id(*t, rng);
        if (err.empty()) err = sql(db, "UPDATE acct SET balance = 0 WHERE id = ?", {I(id)});
        del();
      } else {
        // More dirty pages than the 10-page cache holds: SQLite writes some
        // of them to the database file, into the open wrap, before ROLLBACK.
        for (int n = 0; n < 16; ++n) add(700);
        if (err.empty()) {
          err = sql(db, "UPDATE acct SET note = zeroblob(300) WHERE id IN (SELECT id FROM acct LIMIT 20)");
        }
      }
      *spilled = sw_wrap_depth(p) > 0;
      if (err.empty()) err = sql(db, "ROLLBACK");
      break;
    }
    case kKinds:
      break;
  }
  return err;
}

void run_sqlite(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  sw_pool* p = d.pool();
  d.set_external_wraps(true);
  if (sqlite_vfs::attach_pool(kRunPath, p) != SQLITE_OK) return d.fail("attaching the pool to the VFS");
  std::string err;
  sqlite3* db = open_db(kRunPath, SQLITE_OPEN_READWRITE, &err);
  if (db != nullptr) err = sql(db, "PRAGMA cache_size=10");
  if (err.empty()) err = sql(db, "PRAGMA cache_spill=10");  // below the VFS's 16 MiB
  if (err.empty()) err = verify(db, g_run.table);
  g_run.by_golden[d.state()] = g_run.table;
  sqlite_vfs::FileLayout l;
  if (err.empty() && !sqlite_vfs::file_layout(p, "db", &l)) err = "the pool holds no database file";
  const uint64_t others = d.live() - l.allocations;
  // Every kind once, in a seeded order; then at random.
  std::vector<Kind> first;
  for (int k = 0; k < kKinds; ++k) {
    first.insert(first.begin() + static_cast<long>(rng.below(first.size() + 1)), Kind(k));
  }
  for (uint32_t w = 0; w < size && err.empty(); ++w) {
    const Kind k = w < first.size() ? first[w] : Kind(rng.below(kKinds));
    Table next = g_run.table;
    bool spilled = false;
    std::string file_before;
    const bool rollback = k == kRollback || k == kSpillRollback;
    if (rollback && !sqlite_vfs::read_file(p, "db", &file_before)) {
      err = "reading the database file";
      break;
    }
    d.open();
    g_run.by_golden[d.state()] = g_run.table;
    err = transaction(db, p, k, rng, &next, &spilled);
    if (err.empty() && sw_wrap_depth(p) != 0) err = "a wrap is still open after the transaction";
    if (err.empty() && (k == kSpillCommit || k == kSpillRollback) && !spilled) {
      err = "the large transaction did not spill before its end";
    }
    if (!err.empty()) break;
    if (rollback && !spilled) {
      d.abort();  // nothing reached the pool: checks that the owned bytes are as before
    } else if (rollback) {
      // Spilled pages went into the VFS's wrap and the ROLLBACK wrote the
      // originals back into it, then committed it: an ordinary wrap, whose
      // state after may differ from the state before in reused free pages.
      // (A small transaction spills too once the tree is deep enough.)
      std::string file_now;
      if (!sqlite_vfs::read_file(p, "db", &file_now)) err = "reading the database file";
      if (err.empty()) err = rollback_difference(file_before, file_now);
      if (!err.empty()) break;
      d.set_live(others + own_db(d));
      d.close();
    } else {
      d.set_live(others + own_db(d));
      d.close();
      g_run.table = std::move(next);
    }
    err = verify(db, g_run.table);
    g_run.by_golden[d.state()] = g_run.table;
  }
  if (!err.empty()) d.fail("sqlite: " + err);
  sqlite3_close(db);
  if (sqlite_vfs::detach_pool(kRunPath) != SQLITE_OK) d.fail("detaching the pool from the VFS");
}

const Table* contents(uint32_t golden) {
  const auto it = g_run.by_golden.find(golden);
  return it == g_run.by_golden.end() ? nullptr : &it->second;
}

uint64_t g_image_checks = 0;

// The SQL check of one crash image: integrity_check is ok and the table
// holds the contents before or after the interrupted transaction — and,
// when the workload owns the file's bytes, exactly those of the state the
// bytes matched.
std::string check_sqlite_image(sw_pool* p, const std::vector<ImageState>& owners) {
  ++g_image_checks;
  const ImageState& s = owners.at(0);
  const Table* before = contents(s.before);
  const Table* after = contents(s.after);
  const Table* matched = contents(s.matched);
  if (!before || !after || !matched) {
    return "no table contents recorded for golden state " + std::to_string(s.before) + ", " +
           std::to_string(s.after) + " or " + std::to_string(s.matched);
  }
  if (sqlite_vfs::attach_pool(kImagePath, p) != SQLITE_OK) return "attaching the image to the VFS failed";
  std::string why;
  if (sqlite3* db = open_db(kImagePath, SQLITE_OPEN_READONLY, &why)) {
    if (g_run.own_bytes) {
      why = verify(db, *matched);
    } else {
      why = verify(db, *before);
      if (!why.empty() && verify(db, *after).empty()) why.clear();
      if (!why.empty()) why += " (compared with the state before the transaction; the state after differs too)";
    }
    sqlite3_close(db);
  }
  if (sqlite_vfs::detach_pool(kImagePath) != SQLITE_OK && why.empty()) why = "detaching the image from the VFS failed";
  return why;
}

void setup_sqlite_bytes(std::vector<Driver*>& dv, Rng& rng) { setup_sqlite(dv, rng, true); }
void setup_sqlite_sql_only(std::vector<Driver*>& dv, Rng& rng) { setup_sqlite(dv, rng, false); }

// The SQLite workloads differ only in name, setup and pool flags: 64-entry
// alias tables retired from 1/4, 4 KiB shadow pages, 8 tables, one owner.
Workload sqlite_variant(const char* name, const char* what, void (*setup)(std::vector<Driver*>&, Rng&),
                        uint32_t flags) {
  return Workload{name, what, 64, 4, 4096, 8, 1, setup, run_sqlite, check_sqlite_image, -1, flags};
}

}  // namespace

// With SW_CONFIG_WCL, as the VFS opens its pools by default (URI wcl=1).
const Workload& sqlite_workload() {
  static const Workload w = sqlite_variant(
      "sqlite",
      "SQLite on the softwrap VFS: 1 table, 2 indexes, INSERT/UPDATE/DELETE transactions, ROLLBACKs (one "
      "spilled); integrity_check and contents per image",
      setup_sqlite_bytes, SW_CONFIG_WCL);
  return w;
}

const Workload& sqlite_whole_pages_workload() {
  static const Workload w = sqlite_variant("sqlite-whole-pages",
                                           "the sqlite workload on a pool without write-combined logging (URI "
                                           "wcl=0): SQLite's page writes reach the log whole",
                                           setup_sqlite_bytes, 0);
  return w;
}

uint64_t sqlite_image_checks() { return g_image_checks; }

const Workload& sqlite_sql_only_workload() {
  static const Workload w = sqlite_variant(
      "sqlite-sql-only", "the sqlite workload checked by SQL alone (owns no bytes): a control of the SQL check",
      setup_sqlite_sql_only, SW_CONFIG_WCL);
  return w;
}

}  // namespace softwrap::crashsim
