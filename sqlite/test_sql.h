// test_sql.h — the SQLite tests' one-liners: run a statement, read the
// first value of one, a series of integers in plain SQL.
#ifndef SOFTWRAP_SQLITE_TEST_SQL_H_
#define SOFTWRAP_SQLITE_TEST_SQL_H_

#include <sqlite3.h>

#include <string>

namespace softwrap::sqlite_test {

inline int exec(sqlite3* db, const std::string& sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }

// The first column of the first row of `sql` ("" if it returns no row,
// "NULL" for NULL), or "ERR " and SQLite's message.
inline std::string one(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return std::string("ERR ") + sqlite3_errmsg(db);
  std::string out;
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    const auto* t = sqlite3_column_text(s, 0);
    out = t != nullptr ? reinterpret_cast<const char*>(t) : "NULL";
  } else if (rc != SQLITE_DONE) {
    out = std::string("ERR ") + sqlite3_errmsg(db);
  }
  sqlite3_finalize(s);
  return out;
}

// "(SELECT value FROM 1..n)" without the shell's generate_series.
inline std::string series(int n) {
  return "(WITH RECURSIVE s(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM s WHERE value < " +
         std::to_string(n) + ") SELECT value FROM s)";
}

}  // namespace softwrap::sqlite_test

#endif  // SOFTWRAP_SQLITE_TEST_SQL_H_
