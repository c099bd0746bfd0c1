// tpcc.cc — TPC-C schema, loader, the five transactions and consistency
// conditions 1-4 over one SQLite connection (see tpcc.h).
//
// Statements are prepared once and cached by the address of their SQL text.
// Errors inside a transaction are thrown as DbError; the driver rolls back
// and retries a transaction that met SQLITE_BUSY, and gives up on anything
// else.  Random choices follow clause 2 (NURand for customer and item ids,
// last names from the ten syllables, 1 % remote order lines and 15 % remote
// payments when there is more than one warehouse).  Readers beside the
// writer (Config::readers) are threads or forked processes that meet the
// writer at a rendezvous and start at one instant (run_with_threads,
// run_with_processes).
#include "tpcc.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace swtpcc {
namespace {

constexpr int kDistricts = 10;

struct DbError {
  int rc;
  std::string msg;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr);
    if (rc != SQLITE_OK) throw DbError{rc, std::string(sqlite3_errmsg(db)) + " in: " + sql};
  }
  ~Stmt() { sqlite3_finalize(s_); }
  void bind_all(int) {}
  template <class... A>
  void bind_all(int i, int64_t v, A... rest) {
    sqlite3_bind_int64(s_, i, v);
    bind_all(i + 1, rest...);
  }
  template <class... A>
  void bind_all(int i, int v, A... rest) {
    sqlite3_bind_int64(s_, i, v);
    bind_all(i + 1, rest...);
  }
  template <class... A>
  void bind_all(int i, const std::string& v, A... rest) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    bind_all(i + 1, rest...);
  }
  // Next row: true, done: false, error: throws.
  bool row() {
    const int rc = sqlite3_step(s_);
    open_ = rc != SQLITE_DONE;  // at a row, or failed (reset it)
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw DbError{rc, sqlite3_errmsg(db_)};
  }
  void done() {
    while (row()) {
    }
  }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  bool null(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string text(int c) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return t != nullptr ? std::string(t) : std::string();
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    open_ = false;
  }
  // Stepped and not run to its end (nor reset): it may keep the
  // connection's read transaction.
  bool open() const { return open_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  bool open_ = false;
};

void exec(sqlite3* db, const char* sql) {
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    DbError e{rc, msg != nullptr ? msg : sqlite3_errstr(rc)};
    sqlite3_free(msg);
    throw e;
  }
}

const char* kSchema = R"(
CREATE TABLE warehouse(w_id INT PRIMARY KEY, w_name TEXT, w_street_1 TEXT, w_street_2 TEXT,
  w_city TEXT, w_state TEXT, w_zip TEXT, w_tax INT, w_ytd INT);
CREATE TABLE district(d_id INT, d_w_id INT, d_name TEXT, d_street_1 TEXT, d_street_2 TEXT,
  d_city TEXT, d_state TEXT, d_zip TEXT, d_tax INT, d_ytd INT, d_next_o_id INT,
  PRIMARY KEY(d_w_id, d_id));
CREATE TABLE customer(c_id INT, c_d_id INT, c_w_id INT, c_first TEXT, c_middle TEXT, c_last TEXT,
  c_street_1 TEXT, c_street_2 TEXT, c_city TEXT, c_state TEXT, c_zip TEXT, c_phone TEXT,
  c_since INT, c_credit TEXT, c_credit_lim INT, c_discount INT, c_balance INT,
  c_ytd_payment INT, c_payment_cnt INT, c_delivery_cnt INT, c_data TEXT,
  PRIMARY KEY(c_w_id, c_d_id, c_id));
CREATE INDEX customer_name ON customer(c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history(h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT,
  h_date INT, h_amount INT, h_data TEXT);
CREATE TABLE new_order(no_o_id INT, no_d_id INT, no_w_id INT, PRIMARY KEY(no_w_id, no_d_id, no_o_id));
CREATE TABLE orders(o_id INT, o_d_id INT, o_w_id INT, o_c_id INT, o_entry_d INT,
  o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY(o_w_id, o_d_id, o_id));
CREATE INDEX orders_customer ON orders(o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE order_line(ol_o_id INT, ol_d_id INT, ol_w_id INT, ol_number INT, ol_i_id INT,
  ol_supply_w_id INT, ol_delivery_d INT, ol_quantity INT, ol_amount INT, ol_dist_info TEXT,
  PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE item(i_id INT PRIMARY KEY, i_im_id INT, i_name TEXT, i_price INT, i_data TEXT);
CREATE TABLE stock(s_i_id INT, s_w_id INT, s_quantity INT, s_dist_01 TEXT, s_dist_02 TEXT,
  s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT, s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT,
  s_dist_09 TEXT, s_dist_10 TEXT, s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data TEXT,
  PRIMARY KEY(s_w_id, s_i_id));
)";

class Driver {
 public:
  Driver(sqlite3* db, const Config& cfg) : db_(db), cfg_(cfg), rng_(cfg.seed) {
    c_load_ = static_cast<int>(rand(0, 255));
    c_run_ = static_cast<int>(rand(0, 255));
    c_id_ = static_cast<int>(rand(0, 1023));
    c_item_ = static_cast<int>(rand(0, 8191));
    for (int d = 1; d <= kDistricts; ++d) {
      char buf[160];
      snprintf(buf, sizeof buf,
               "SELECT s_quantity, s_dist_%02d, s_data, s_ytd, s_order_cnt, s_remote_cnt FROM stock "
               "WHERE s_w_id=? AND s_i_id=?",
               d);
      stock_sql_[d] = buf;
    }
  }

  void load();
  void new_order(Result* r);
  void payment();
  void order_status();
  void delivery();
  void stock_level();

  int log_fd = -1;

  // Resets the statements left open.  A statement that returned a row and
  // was not run to its end keeps the connection's read transaction, and
  // with it the SHARED lock, past COMMIT or ROLLBACK: another process could
  // then never commit (its EXCLUSIVE lock waits for this one to leave).
  void reset_statements() {
    for (auto& entry : cache_) {
      if (entry.second->open()) entry.second->reset();
    }
  }

 private:
  // COMMIT with Config's hooks around it.
  void commit(const TxInfo& t) {
    if (cfg_.before_commit) {
      std::string msg;
      if (const int rc = cfg_.before_commit(db_, t, &msg); rc != SQLITE_OK) throw DbError{rc, msg};
    }
    reset_statements();
    exec(db_, "COMMIT");
    if (cfg_.after_commit && !cfg_.after_commit(t)) throw DbError{SQLITE_ERROR, "after_commit failed"};
  }
  template <class... A>
  Stmt& q(const char* sql, A... args) {
    auto& s = cache_[sql];
    if (!s) s = std::make_unique<Stmt>(db_, sql);
    s->reset();
    s->bind_all(1, args...);
    return *s;
  }
  int64_t rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  int64_t nurand(int64_t a, int64_t x, int64_t y, int c) { return (((rand(0, a) | rand(x, y)) + c) % (y - x + 1)) + x; }
  std::string astr(int lo, int hi) {
    std::string s(static_cast<size_t>(rand(lo, hi)), 'a');
    for (char& ch : s) ch = static_cast<char>('a' + rand(0, 25));
    return s;
  }
  std::string nstr(int n) {
    std::string s(static_cast<size_t>(n), '0');
    for (char& ch : s) ch = static_cast<char>('0' + rand(0, 9));
    return s;
  }
  std::string data_str() {
    std::string s = astr(26, 50);
    if (rand(1, 10) == 1) s.replace(static_cast<size_t>(rand(0, static_cast<int64_t>(s.size()) - 8)), 8, "ORIGINAL");
    return s;
  }
  static std::string last_name(int64_t n) {
    static const char* syl[] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"};
    return std::string(syl[n / 100]) + syl[(n / 10) % 10] + syl[n % 10];
  }
  int name_range() const { return std::min(cfg_.customers_per_district, 1000) - 1; }
  int64_t pick_customer() { return nurand(1023, 1, cfg_.customers_per_district, c_id_); }
  int64_t other_warehouse(int64_t w) {
    if (cfg_.warehouses == 1) return w;
    int64_t o = rand(1, cfg_.warehouses - 1);
    return o >= w ? o + 1 : o;
  }
  // Customer id chosen by last name (60 %) or id; 0 if no such name.
  int64_t customer_by_name_or_id(int64_t w, int64_t d) {
    if (rand(1, 100) > 60) return pick_customer();
    const std::string last = last_name(nurand(255, 0, name_range(), c_run_));
    auto& s = q("SELECT c_id FROM customer WHERE c_w_id=? AND c_d_id=? AND c_last=? ORDER BY c_first", w, d, last);
    std::vector<int64_t> ids;
    while (s.row()) ids.push_back(s.i64(0));
    if (ids.empty()) return pick_customer();
    return ids[(ids.size() + 1) / 2 - 1];
  }
  void batch_row() {
    if (++rows_ % cfg_.load_batch_rows == 0) {
      exec(db_, "COMMIT");
      exec(db_, "BEGIN");
    }
  }

  sqlite3* db_;
  Config cfg_;
  std::mt19937_64 rng_;
  int c_load_, c_run_, c_id_, c_item_;
  uint64_t rows_ = 0;
  std::string stock_sql_[kDistricts + 1];
  std::map<const char*, std::unique_ptr<Stmt>> cache_;
};

void Driver::load() {
  exec(db_, kSchema);
  exec(db_, "BEGIN");
  const int64_t now = time(nullptr);
  for (int i = 1; i <= cfg_.items; ++i) {
    q("INSERT INTO item VALUES(?,?,?,?,?)", i, rand(1, 10000), astr(14, 24), rand(100, 10000), data_str()).done();
    batch_row();
  }
  const int C = cfg_.customers_per_district;
  for (int w = 1; w <= cfg_.warehouses; ++w) {
    q("INSERT INTO warehouse VALUES(?,?,?,?,?,?,?,?,?)", w, astr(6, 10), astr(10, 20), astr(10, 20), astr(10, 20),
      astr(2, 2), nstr(4) + "11111", rand(0, 2000), int64_t{30000} * 100 * kDistricts)
        .done();
    for (int i = 1; i <= cfg_.items; ++i) {
      auto& s = q("INSERT INTO stock VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,0,0,0,?)", i, w, rand(10, 100), astr(24, 24),
                  astr(24, 24), astr(24, 24), astr(24, 24), astr(24, 24), astr(24, 24), astr(24, 24), astr(24, 24),
                  astr(24, 24), astr(24, 24), data_str());
      s.done();
      batch_row();
    }
    for (int d = 1; d <= kDistricts; ++d) {
      q("INSERT INTO district VALUES(?,?,?,?,?,?,?,?,?,?,?)", d, w, astr(6, 10), astr(10, 20), astr(10, 20),
        astr(10, 20), astr(2, 2), nstr(4) + "11111", rand(0, 2000), int64_t{30000} * 100, C + 1)
          .done();
      for (int c = 1; c <= C; ++c) {
        const int64_t ln = c <= 1000 ? c - 1 : nurand(255, 0, 999, c_load_);
        q("INSERT INTO customer VALUES(?,?,?,?,'OE',?,?,?,?,?,?,?,?,?,5000000,?,-1000,1000,1,0,?)", c, d, w,
          astr(8, 16), last_name(ln), astr(10, 20), astr(10, 20), astr(10, 20), astr(2, 2), nstr(4) + "11111",
          nstr(16), now, std::string(rand(1, 10) == 1 ? "BC" : "GC"), rand(0, 5000), astr(300, 500))
            .done();
        q("INSERT INTO history VALUES(?,?,?,?,?,?,1000,?)", c, d, w, d, w, now, astr(12, 24)).done();
        batch_row();
      }
      // Orders for a random permutation of customers; the last 30 % are new.
      std::vector<int> perm(static_cast<size_t>(C));
      for (int i = 0; i < C; ++i) perm[static_cast<size_t>(i)] = i + 1;
      std::shuffle(perm.begin(), perm.end(), rng_);
      const int first_new = C - C * 3 / 10 + 1;
      for (int o = 1; o <= C; ++o) {
        const bool delivered = o < first_new;
        const int64_t ol_cnt = rand(5, 15);
        q("INSERT INTO orders VALUES(?,?,?,?,?,?,?,1)", o, d, w, perm[static_cast<size_t>(o - 1)], now,
          delivered ? rand(1, 10) : int64_t{0}, ol_cnt)
            .done();
        for (int64_t l = 1; l <= ol_cnt; ++l) {
          q("INSERT INTO order_line VALUES(?,?,?,?,?,?,?,5,?,?)", o, d, w, l, rand(1, cfg_.items), w,
            delivered ? now : int64_t{0}, delivered ? int64_t{0} : rand(1, 999999), astr(24, 24))
              .done();
        }
        if (!delivered) q("INSERT INTO new_order VALUES(?,?,?)", o, d, w).done();
        batch_row();
      }
    }
  }
  exec(db_, "COMMIT");
}

struct UnusedItem {};

void Driver::new_order(Result* r) {
  const int64_t w = rand(1, cfg_.warehouses), d = rand(1, kDistricts), c = pick_customer();
  const int64_t ol_cnt = rand(5, 15);
  const bool rollback = rand(1, 100) == 1;
  struct Line {
    int64_t i, sw, qty;
  };
  std::vector<Line> lines;
  bool all_local = true;
  for (int64_t l = 1; l <= ol_cnt; ++l) {
    Line ln{nurand(8191, 1, cfg_.items, c_item_), w, rand(1, 10)};
    if (rollback && l == ol_cnt) ln.i = cfg_.items + 1;
    if (cfg_.warehouses > 1 && rand(1, 100) == 1) {
      ln.sw = other_warehouse(w);
      all_local = false;
    }
    lines.push_back(ln);
  }
  exec(db_, "BEGIN IMMEDIATE");
  auto& ws = q("SELECT w_tax FROM warehouse WHERE w_id=?", w);
  if (!ws.row()) throw DbError{SQLITE_CORRUPT, "no warehouse"};
  const int64_t w_tax = ws.i64(0);
  auto& ds = q("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id=? AND d_id=?", w, d);
  if (!ds.row()) throw DbError{SQLITE_CORRUPT, "no district"};
  const int64_t d_tax = ds.i64(0), o_id = ds.i64(1);
  q("UPDATE district SET d_next_o_id=? WHERE d_w_id=? AND d_id=?", o_id + 1, w, d).done();
  auto& cs = q("SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?", w, d, c);
  if (!cs.row()) throw DbError{SQLITE_CORRUPT, "no customer"};
  const int64_t disc = cs.i64(0);
  const int64_t now = time(nullptr);
  q("INSERT INTO orders VALUES(?,?,?,?,?,0,?,?)", o_id, d, w, c, now, ol_cnt, int64_t{all_local}).done();
  q("INSERT INTO new_order VALUES(?,?,?)", o_id, d, w).done();
  int64_t total = 0;
  for (size_t l = 0; l < lines.size(); ++l) {
    const Line& ln = lines[l];
    auto& is = q("SELECT i_price, i_name, i_data FROM item WHERE i_id=?", ln.i);
    if (!is.row()) throw UnusedItem{};
    const int64_t price = is.i64(0);
    auto& ss = q(stock_sql_[d].c_str(), ln.sw, ln.i);
    if (!ss.row()) throw DbError{SQLITE_CORRUPT, "no stock"};
    int64_t sq = ss.i64(0);
    const std::string dist = ss.text(1);
    sq = sq >= ln.qty + 10 ? sq - ln.qty : sq - ln.qty + 91;
    q("UPDATE stock SET s_quantity=?, s_ytd=s_ytd+?, s_order_cnt=s_order_cnt+1, s_remote_cnt=s_remote_cnt+? "
      "WHERE s_w_id=? AND s_i_id=?",
      sq, ln.qty, int64_t{ln.sw != w}, ln.sw, ln.i)
        .done();
    const int64_t amount = ln.qty * price;
    total += amount;
    q("INSERT INTO order_line VALUES(?,?,?,?,?,?,0,?,?,?)", o_id, d, w, static_cast<int64_t>(l + 1), ln.i, ln.sw,
      ln.qty, amount, dist)
        .done();
  }
  (void)(total * (10000 - disc) * (10000 + w_tax + d_tax));  // the displayed total
  TxInfo info{kNewOrder, w, d};
  info.o_id = o_id;
  info.ol_cnt = ol_cnt;
  commit(info);
  r->committed[kNewOrder]++;
  if (log_fd >= 0) {
    char buf[96];
    const int n = snprintf(buf, sizeof buf, "%lld %lld %lld %lld\n", static_cast<long long>(w),
                           static_cast<long long>(d), static_cast<long long>(o_id), static_cast<long long>(ol_cnt));
    if (write(log_fd, buf, static_cast<size_t>(n)) != n) throw DbError{SQLITE_IOERR, "commit log write failed"};
  }
}

void Driver::payment() {
  const int64_t w = rand(1, cfg_.warehouses), d = rand(1, kDistricts);
  int64_t cw = w, cd = d;
  if (cfg_.warehouses > 1 && rand(1, 100) > 85) {
    cw = other_warehouse(w);
    cd = rand(1, kDistricts);
  }
  const int64_t amount = rand(100, 500000);
  exec(db_, "BEGIN IMMEDIATE");
  const int64_t c = customer_by_name_or_id(cw, cd);
  q("UPDATE warehouse SET w_ytd=w_ytd+? WHERE w_id=?", amount, w).done();
  q("UPDATE district SET d_ytd=d_ytd+? WHERE d_w_id=? AND d_id=?", amount, w, d).done();
  auto& cs = q("SELECT c_credit FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?", cw, cd, c);
  if (!cs.row()) throw DbError{SQLITE_CORRUPT, "no customer"};
  const bool bad_credit = cs.text(0) == "BC";
  q("UPDATE customer SET c_balance=c_balance-?, c_ytd_payment=c_ytd_payment+?, c_payment_cnt=c_payment_cnt+1 "
    "WHERE c_w_id=? AND c_d_id=? AND c_id=?",
    amount, amount, cw, cd, c)
      .done();
  if (bad_credit) {
    char info[128];
    snprintf(info, sizeof info, "%lld %lld %lld %lld %lld %lld|", static_cast<long long>(c),
             static_cast<long long>(cd), static_cast<long long>(cw), static_cast<long long>(d),
             static_cast<long long>(w), static_cast<long long>(amount));
    q("UPDATE customer SET c_data=substr(? || c_data, 1, 500) WHERE c_w_id=? AND c_d_id=? AND c_id=?",
      std::string(info), cw, cd, c)
        .done();
  }
  q("INSERT INTO history VALUES(?,?,?,?,?,?,?,?)", c, cd, cw, d, w, static_cast<int64_t>(time(nullptr)), amount,
    astr(12, 24))
      .done();
  TxInfo info{kPayment, w, d};
  info.amount = amount;
  commit(info);
}

void Driver::order_status() {
  const int64_t w = rand(1, cfg_.warehouses), d = rand(1, kDistricts);
  exec(db_, "BEGIN");
  const int64_t c = customer_by_name_or_id(w, d);
  auto& cs = q("SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id=? AND c_d_id=? AND c_id=?",
               w, d, c);
  cs.done();
  auto& os = q("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id=? AND o_d_id=? AND o_c_id=? "
               "ORDER BY o_id DESC LIMIT 1",
               w, d, c);
  if (os.row()) {
    const int64_t o = os.i64(0);
    q("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
      "WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?",
      w, d, o)
        .done();
  }
  commit(TxInfo{kOrderStatus, w, d});
}

void Driver::delivery() {
  const int64_t w = rand(1, cfg_.warehouses), carrier = rand(1, 10);
  const int64_t now = time(nullptr);
  TxInfo info{kDelivery, w, 0};
  exec(db_, "BEGIN IMMEDIATE");
  for (int64_t d = 1; d <= kDistricts; ++d) {
    auto& ns = q("SELECT min(no_o_id) FROM new_order WHERE no_w_id=? AND no_d_id=?", w, d);
    if (!ns.row() || ns.null(0)) continue;
    const int64_t o = ns.i64(0);
    q("DELETE FROM new_order WHERE no_w_id=? AND no_d_id=? AND no_o_id=?", w, d, o).done();
    auto& os = q("SELECT o_c_id FROM orders WHERE o_w_id=? AND o_d_id=? AND o_id=?", w, d, o);
    if (!os.row()) throw DbError{SQLITE_CORRUPT, "new order without order"};
    const int64_t c = os.i64(0);
    q("UPDATE orders SET o_carrier_id=? WHERE o_w_id=? AND o_d_id=? AND o_id=?", carrier, w, d, o).done();
    q("UPDATE order_line SET ol_delivery_d=? WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?", now, w, d, o).done();
    auto& ss = q("SELECT coalesce(sum(ol_amount),0) FROM order_line WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id=?", w,
                 d, o);
    ss.row();
    const int64_t sum = ss.i64(0);
    q("UPDATE customer SET c_balance=c_balance+?, c_delivery_cnt=c_delivery_cnt+1 "
      "WHERE c_w_id=? AND c_d_id=? AND c_id=?",
      sum, w, d, c)
        .done();
    info.delivered++;
  }
  commit(info);
}

void Driver::stock_level() {
  const int64_t w = rand(1, cfg_.warehouses), d = rand(1, kDistricts), threshold = rand(10, 20);
  exec(db_, "BEGIN");
  auto& ds = q("SELECT d_next_o_id FROM district WHERE d_w_id=? AND d_id=?", w, d);
  if (!ds.row()) throw DbError{SQLITE_CORRUPT, "no district"};
  const int64_t next = ds.i64(0);
  q("SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id=? AND ol_d_id=? AND ol_o_id>=? AND "
    "ol_o_id<? AND s_w_id=? AND s_i_id=ol_i_id AND s_quantity<?",
    w, d, next - 20, next, w, threshold)
      .done();
  commit(TxInfo{kStockLevel, w, d});
}

std::string describe(const DbError& e) { return std::string(sqlite3_errstr(e.rc)) + ": " + e.msg; }

}  // namespace

sqlite3* open_db(const std::string& uri, std::string* err) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    *err = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

bool load(sqlite3* db, const Config& cfg, std::string* err) {
  try {
    Driver(db, cfg).load();
    return true;
  } catch (const DbError& e) {
    *err = "load: " + describe(e);
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  }
}

namespace {

using Clock = std::chrono::steady_clock;

// The mix on one connection from `start` (slept until) for cfg.seconds, or
// cfg.max_transactions, or until *stop is set.  cfg.seed is used as is.
bool run_loop(sqlite3* db, const Config& cfg, Clock::time_point start, const std::atomic<int>* stop, Result* out,
              std::string* err) {
  Driver drv(db, cfg);
  if (!cfg.commit_log.empty()) {
    drv.log_fd = ::open(cfg.commit_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (drv.log_fd < 0) {
      *err = "cannot open " + cfg.commit_log;
      return false;
    }
  }
  std::mt19937_64 mix(cfg.seed);
  *out = Result{};
  int64_t weights = 0;
  for (const int w : cfg.mix) weights += std::max(w, 0);
  if (weights == 0) {
    if (drv.log_fd >= 0) ::close(drv.log_fd);
    *err = "the mix has no transaction type";
    return false;
  }
  std::this_thread::sleep_until(start);
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  uint64_t n = 0;
  bool ok = true;
  while (elapsed() < cfg.seconds && (cfg.max_transactions == 0 || n < cfg.max_transactions) &&
         (stop == nullptr || stop->load(std::memory_order_relaxed) == 0)) {
    // The standard mix draws 1..100: New-Order up to 45, Payment up to 88, ...
    int64_t r = std::uniform_int_distribution<int64_t>(1, weights)(mix);
    TxType t = kNewOrder;
    while (r > std::max(cfg.mix[t], 0)) {
      r -= std::max(cfg.mix[t], 0);
      t = static_cast<TxType>(t + 1);
    }
    try {
      switch (t) {
        case kNewOrder: drv.new_order(out); break;
        case kPayment: drv.payment(); break;
        case kOrderStatus: drv.order_status(); break;
        case kDelivery: drv.delivery(); break;
        default: drv.stock_level(); break;
      }
      if (t != kNewOrder) out->committed[t]++;
      ++n;
    } catch (const UnusedItem&) {
      drv.reset_statements();
      exec(db, "ROLLBACK");
      out->rolled_back++;
      ++n;
    } catch (const DbError& e) {
      drv.reset_statements();
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      if (e.rc == SQLITE_BUSY || e.rc == SQLITE_LOCKED) {
        out->busy++;
        continue;
      }
      *err = describe(e);
      ok = false;
      break;
    }
  }
  if (drv.log_fd >= 0) ::close(drv.log_fd);
  out->seconds = elapsed();
  uint64_t total = 0;
  for (uint64_t v : out->committed) total += v;
  out->tpmC = out->seconds > 0 ? 60.0 * static_cast<double>(out->committed[kNewOrder]) / out->seconds : 0;
  out->tps = out->seconds > 0 ? static_cast<double>(total) / out->seconds : 0;
  out->writer_tps = out->tps;
  return ok;
}

// What the writer and its readers share: in this process's memory for
// threads, in an anonymous shared mapping for processes.
struct Rendezvous {
  std::atomic<int> ready{0};     // readers opened (or failed to)
  std::atomic<int> failed{0};    // readers that could not open
  std::atomic<int64_t> start{0}; // the common start (steady clock, ns); 0: not yet
  std::atomic<int> stop{0};      // the writer has finished
};

int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
Clock::time_point from_ns(int64_t ns) { return Clock::time_point(std::chrono::nanoseconds(ns)); }

Config reader_config(const Config& cfg, int index, uint64_t base_seed) {
  Config c = cfg;
  const int mix[kTxTypes] = {0, 0, 1, 0, 1};  // Order-Status and Stock-Level, 50/50
  std::copy(mix, mix + kTxTypes, c.mix);
  c.before_commit = nullptr;
  c.after_commit = nullptr;
  c.commit_log.clear();
  c.max_transactions = 0;
  c.readers = 0;
  c.seed = base_seed + 1000003 * static_cast<uint64_t>(index + 1);
  return c;
}

// One reader: opens its connection, says it is ready, waits for the start
// and runs its loop.  False with *err on an error (the rendezvous is told
// of a failed open, so that nobody waits for this reader).
bool reader(const Config& rc, Rendezvous* rv, Result* out, std::string* err) {
  sqlite3* db = open_db(rc.reader_uri, err);
  if (db != nullptr && !rc.reader_pragmas.empty() &&
      sqlite3_exec(db, rc.reader_pragmas.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    *err = rc.reader_pragmas + ": " + sqlite3_errmsg(db);
    sqlite3_close(db);
    db = nullptr;
  }
  if (db == nullptr) {
    rv->failed.fetch_add(1);
    rv->ready.fetch_add(1);
    return false;
  }
  rv->ready.fetch_add(1);
  int64_t start;
  while ((start = rv->start.load()) == 0 && rv->stop.load() == 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  bool ok = true;
  if (start != 0) {
    ok = run_loop(db, rc, from_ns(start), &rv->stop, out, err);
    if (!ok) *err = "reader: " + *err;
  }
  if (sqlite3_close(db) != SQLITE_OK) {
    if (ok) *err = "reader: close failed";
    ok = false;
  }
  return ok;
}

void add_reader(const Result& r, Result* out) {
  out->read_committed[kOrderStatus] += r.committed[kOrderStatus];
  out->read_committed[kStockLevel] += r.committed[kStockLevel];
  out->read_tx += r.committed[kOrderStatus] + r.committed[kStockLevel];
  out->read_busy += r.busy;
  out->read_tps += r.tps;
}

// Waits (up to 60 s) until every reader has opened; false if one failed.
bool wait_ready(Rendezvous* rv, int readers, const std::function<bool()>& alive, std::string* err) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (rv->ready.load() < readers) {
    if (!alive() || Clock::now() > deadline) {
      *err = "a reader did not start";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (rv->failed.load() != 0) {
    *err = "a reader could not open its connection";
    return false;
  }
  return true;
}

// The writer's own error first, then the first reader's, then why the
// run never started.
bool outcome(bool started, bool writer_ok, const std::string& werr, const std::string& rerr, std::string* err) {
  if (started && !writer_ok) *err = werr;
  else if (!rerr.empty()) *err = rerr;
  else if (!started) *err = werr;
  else return true;
  return false;
}

bool run_with_threads(sqlite3* db, const Config& wc, uint64_t base_seed, Result* out, std::string* err) {
  const int n = wc.readers;
  Rendezvous rv;
  std::vector<Result> results(static_cast<size_t>(n));
  std::vector<std::string> errs(static_cast<size_t>(n));
  std::vector<char> oks(static_cast<size_t>(n), 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      const size_t k = static_cast<size_t>(i);
      oks[k] = reader(reader_config(wc, i, base_seed), &rv, &results[k], &errs[k]);
    });
  }
  std::string werr, rerr;
  bool started = false, writer_ok = false;
  if (wait_ready(&rv, n, [] { return true; }, &werr)) {
    const auto start = Clock::now() + std::chrono::milliseconds(5);
    rv.start.store(to_ns(start));
    started = true;
    writer_ok = run_loop(db, wc, start, nullptr, out, &werr);
  }
  rv.stop.store(1);
  for (auto& t : threads) t.join();
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    add_reader(results[k], out);
    if (!oks[k] && rerr.empty()) rerr = errs[k];
  }
  return outcome(started, writer_ok, werr, rerr, err);
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}

bool run_with_processes(sqlite3* db, const Config& wc, uint64_t base_seed, Result* out, std::string* err) {
  const int n = wc.readers;
  void* mem = mmap(nullptr, sizeof(Rendezvous), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    *err = "mmap failed";
    return false;
  }
  auto* rv = new (mem) Rendezvous;
  struct Child {
    pid_t pid = -1;
    int fd = -1;  // its results
  };
  std::vector<Child> kids;
  std::fflush(nullptr);
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) {
    int p[2];
    if (pipe(p) != 0) {
      *err = "pipe failed";
      ok = false;
      break;
    }
    const pid_t pid = fork();
    if (pid == 0) {
      // The child: its own connection (never the parent's), its results
      // as one line "ok OS SL BUSY SECONDS" or "error MESSAGE" on the pipe.
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the writer
      ::close(p[0]);
      for (const Child& k : kids) ::close(k.fd);
      Result r;
      std::string e;
      const bool rok = reader(reader_config(wc, i, base_seed), rv, &r, &e);
      char line[160];
      std::string msg;
      if (rok) {
        snprintf(line, sizeof line, "ok %llu %llu %llu %.6f\n",
                 static_cast<unsigned long long>(r.committed[kOrderStatus]),
                 static_cast<unsigned long long>(r.committed[kStockLevel]),
                 static_cast<unsigned long long>(r.busy), r.seconds);
        msg = line;
      } else {
        msg = "error " + e + "\n";
      }
      const bool wrote = write_all(p[1], msg);
      _exit(rok && wrote ? 0 : 1);
    }
    ::close(p[1]);
    if (pid < 0) {
      ::close(p[0]);
      *err = "fork failed";
      ok = false;
      break;
    }
    kids.push_back({pid, p[0]});
  }
  std::string werr, rerr;
  bool started = false, writer_ok = false;
  if (!ok) {
    werr = *err;
  } else if (wait_ready(
                 rv, n,
                 [&] {
                   for (const Child& k : kids) {
                     if (waitpid(k.pid, nullptr, WNOHANG) != 0) return false;  // ended (or gone) before its start
                   }
                   return true;
                 },
                 &werr)) {
    const auto start = Clock::now() + std::chrono::milliseconds(5);
    rv->start.store(to_ns(start));
    started = true;
    writer_ok = run_loop(db, wc, start, nullptr, out, &werr);
  }
  rv->stop.store(1);
  for (const Child& k : kids) {
    std::string text;
    char buf[512];
    for (;;) {
      const ssize_t r = ::read(k.fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      text.append(buf, static_cast<size_t>(r));
    }
    ::close(k.fd);
    int status = 0;
    while (waitpid(k.pid, &status, 0) < 0 && errno == EINTR) {
    }
    unsigned long long os = 0, sl = 0, busy = 0;
    double secs = 0;
    if (std::sscanf(text.c_str(), "ok %llu %llu %llu %lf", &os, &sl, &busy, &secs) == 4) {
      Result r;
      r.committed[kOrderStatus] = os;
      r.committed[kStockLevel] = sl;
      r.busy = busy;
      r.seconds = secs;
      r.tps = secs > 0 ? static_cast<double>(os + sl) / secs : 0;
      add_reader(r, out);
    } else if (rerr.empty()) {
      rerr = text.rfind("error ", 0) == 0 ? text.substr(6)
                                          : "a reader process failed (status " + std::to_string(status) + ")";
      while (!rerr.empty() && rerr.back() == '\n') rerr.pop_back();
    }
  }
  rv->~Rendezvous();
  munmap(mem, sizeof(Rendezvous));
  return outcome(started, writer_ok, werr, rerr, err);
}

}  // namespace

bool run(sqlite3* db, const Config& cfg, Result* out, std::string* err) {
  Config c = cfg;
  c.seed = cfg.seed * 7919 + static_cast<uint64_t>(getpid());
  *out = Result{};
  if (cfg.readers <= 0) return run_loop(db, c, Clock::now(), nullptr, out, err);
  if (cfg.reader_uri.empty()) {
    *err = "readers need reader_uri";
    return false;
  }
  Result w;
  const bool ok = cfg.reader_processes ? run_with_processes(db, c, c.seed, &w, err)
                                       : run_with_threads(db, c, c.seed, &w, err);
  *out = w;
  return ok;
}

namespace {
// Runs `sql`; every row it returns is a violation described by its columns.
bool no_rows(sqlite3* db, const char* what, const char* sql, std::string* err) {
  try {
    Stmt s(db, sql);
    if (s.row()) {
      *err = std::string(what) + " fails (w d ...):";
      for (int i = 0; i < 4; ++i) {
        *err += ' ';
        *err += s.text(i);  // (not " " + s.text(i): GCC 12 warns about it, -Wrestrict, a false positive)
      }
      return false;
    }
    return true;
  } catch (const DbError& e) {
    *err = std::string(what) + ": " + describe(e);
    return false;
  }
}
}  // namespace

bool check(sqlite3* db, std::string* err) {
  return no_rows(db, "condition 1 (W_YTD = sum(D_YTD))",
                 "SELECT w_id, w_ytd, s, 0 FROM warehouse, (SELECT d_w_id, sum(d_ytd) AS s FROM district "
                 "GROUP BY d_w_id) WHERE d_w_id=w_id AND w_ytd<>s",
                 err) &&
         no_rows(db, "condition 2 (D_NEXT_O_ID-1 = max(O_ID) = max(NO_O_ID))",
                 "SELECT d_w_id, d_id, d_next_o_id, mo FROM district, (SELECT o_w_id, o_d_id, max(o_id) AS mo "
                 "FROM orders GROUP BY o_w_id, o_d_id) WHERE o_w_id=d_w_id AND o_d_id=d_id AND "
                 "(d_next_o_id-1<>mo OR coalesce((SELECT max(no_o_id) FROM new_order WHERE no_w_id=d_w_id "
                 "AND no_d_id=d_id), mo)<>mo)",
                 err) &&
         no_rows(db, "condition 3 (max(NO_O_ID)-min(NO_O_ID)+1 = count(NO))",
                 "SELECT no_w_id, no_d_id, max(no_o_id)-min(no_o_id)+1, count(*) FROM new_order "
                 "GROUP BY no_w_id, no_d_id HAVING max(no_o_id)-min(no_o_id)+1<>count(*)",
                 err) &&
         no_rows(db, "condition 4 (sum(O_OL_CNT) = count(ORDER_LINE))",
                 "SELECT a.w, a.d, a.s, b.n FROM (SELECT o_w_id AS w, o_d_id AS d, sum(o_ol_cnt) AS s FROM orders "
                 "GROUP BY 1,2) a LEFT JOIN (SELECT ol_w_id AS w, ol_d_id AS d, count(*) AS n FROM order_line "
                 "GROUP BY 1,2) b ON a.w=b.w AND a.d=b.d WHERE b.n IS NULL OR a.s<>b.n",
                 err);
}

bool integrity_ok(sqlite3* db, std::string* err) {
  try {
    Stmt s(db, "PRAGMA integrity_check");
    std::string res;
    while (s.row()) res += s.text(0) + "\n";
    if (res == "ok\n") return true;
    *err = "integrity_check: " + res;
    return false;
  } catch (const DbError& e) {
    *err = "integrity_check: " + describe(e);
    return false;
  }
}

}  // namespace swtpcc
