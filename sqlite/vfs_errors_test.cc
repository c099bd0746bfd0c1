// vfs_errors_test.cc — the "softwrap" VFS answers as stock SQLite does
// where SQLite defines the answer (docs/sqlite.md, "Result codes and
// messages"): every row of that table is driven through stock's "unix" VFS
// and through ours in this process, on paths of the same shape, and the
// result code, extended result code and message must be the same at the
// step where stock fails (the open, or the first write).  Conditions only
// softwrap has get their closest standard code and a detailed message;
// sw_sqlite_errmsg gives softwrap's reason where the message is SQLite's.
//
// The rows that need another user (no permission) or a full file system
// run in a child process (this binary again, one test) that mounts a small
// tmpfs in a mount namespace of its own (a user namespace too when not
// root) and then, if root, drops to user "nobody"; where it cannot mount,
// the full-disk row does not run and the test prints so.
#include <gtest/gtest.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "softwrap/softwrap.h"
#include "run_program.h"
#include "softwrap/sqlite.h"

namespace {

namespace fs = std::filesystem;
using softwrap::sqlite_test::run_program;

// What a program meets: the open's codes and message and, if it opened,
// those of its first write and of a read.
struct Outcome {
  int open_rc = -1, open_ext = -1;
  std::string open_msg;
  int write_rc = -1, write_ext = -1;
  std::string write_msg;
  int read_rc = -1;
  std::string detail;  // sw_sqlite_errmsg (ours only)
};

std::string show(const Outcome& o) {
  return "open " + std::to_string(o.open_rc) + "/" + std::to_string(o.open_ext) + " \"" + o.open_msg + "\", write " +
         std::to_string(o.write_rc) + "/" + std::to_string(o.write_ext) + " \"" + o.write_msg + "\", read " +
         std::to_string(o.read_rc);
}

int exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

Outcome attempt(const std::string& path, const char* vfs, int flags) {
  Outcome o;
  sqlite3* db = nullptr;
  o.open_rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs);
  if (db != nullptr) {
    o.open_ext = sqlite3_extended_errcode(db);
    o.open_msg = sqlite3_errmsg(db);
    if (std::string(vfs) == "softwrap") o.detail = sw_sqlite_errmsg(db, nullptr);
  }
  if (o.open_rc == SQLITE_OK) {
    o.write_rc = exec(db, "CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES(1)");
    o.write_ext = sqlite3_extended_errcode(db);
    o.write_msg = sqlite3_errmsg(db);
    if (o.write_rc != SQLITE_OK && std::string(vfs) == "softwrap") o.detail = sw_sqlite_errmsg(db, nullptr);
    o.read_rc = exec(db, "SELECT count(*) FROM sqlite_master");
  }
  sqlite3_close(db);
  return o;
}

void expect_same(const Outcome& stock, const Outcome& ours, const std::string& row) {
  EXPECT_EQ(stock.open_rc, ours.open_rc) << row << "\n  stock: " << show(stock) << "\n  ours:  " << show(ours);
  EXPECT_EQ(stock.open_ext, ours.open_ext) << row;
  EXPECT_EQ(stock.open_msg, ours.open_msg) << row;
  EXPECT_EQ(stock.write_rc, ours.write_rc) << row << "\n  stock: " << show(stock) << "\n  ours:  " << show(ours);
  EXPECT_EQ(stock.write_ext, ours.write_ext) << row;
  EXPECT_EQ(stock.write_msg, ours.write_msg) << row;
  EXPECT_EQ(stock.read_rc, ours.read_rc) << row;
}

constexpr int kRwCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

class VfsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SOFTWRAP_MEDIUM", "x86", 1);
    setenv("SOFTWRAP_SQLITE_POOL_SIZE", "16M", 1);
    unsetenv("SOFTWRAP_ENGINE");
    unsetenv("SOFTWRAP_SQLITE_POOL");
    ASSERT_EQ(sw_sqlite_register(0), SQLITE_OK);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = "/dev/shm/swsqlite_errors_" + std::to_string(getpid()) + "_" + name;
    fs::remove_all(dir_);
    for (const char* v : {"unix", "softwrap"}) fs::create_directories(dir_ + "/" + v);
  }
  void TearDown() override {
    std::error_code ec;  // (the child, as "nobody", may not remove what root made)
    fs::remove_all(dir_, ec);
  }
  // The same relative path under each VFS's own directory.
  std::string at(const char* vfs, const std::string& rel) const { return dir_ + "/" + vfs + "/" + rel; }

  // Runs the row through both VFSes: prepare(dir of the VFS) makes the
  // condition, then both open `rel` with `flags`.
  template <class Prepare>
  std::pair<Outcome, Outcome> both(const std::string& rel, int flags, Prepare prepare) {
    prepare(dir_ + "/unix", "unix");
    prepare(dir_ + "/softwrap", "softwrap");
    return {attempt(at("unix", rel), "unix", flags), attempt(at("softwrap", rel), "softwrap", flags)};
  }

  std::string dir_;
};

void nothing(const std::string&, const char*) {}

TEST_F(VfsErrors, ADirectory) {
  auto [stock, ours] = both("isdir", kRwCreate, [](const std::string& d, const char*) {
    fs::create_directories(d + "/isdir");
  });
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  EXPECT_EQ(stock.open_msg, "unable to open database file");
  expect_same(stock, ours, "a directory");
  // SQLite's message is SQLite's; softwrap's reason is one call away.
  EXPECT_NE(ours.detail.find("Is a directory"), std::string::npos) << ours.detail;
}

TEST_F(VfsErrors, AMissingFileWithoutCreate) {
  auto [stock, ours] = both("missing.db", SQLITE_OPEN_READWRITE, nothing);
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  expect_same(stock, ours, "a missing file without SQLITE_OPEN_CREATE");
  EXPECT_NE(ours.detail.find("no SQLITE_OPEN_CREATE"), std::string::npos) << ours.detail;
  EXPECT_FALSE(fs::exists(at("softwrap", "missing.db")));
}

TEST_F(VfsErrors, AMissingDirectoryOnThePath) {
  auto [stock, ours] = both("nodir/x.db", kRwCreate, nothing);
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  expect_same(stock, ours, "a missing directory on the path");
  EXPECT_NE(ours.detail.find("No such file or directory"), std::string::npos) << ours.detail;
}

TEST_F(VfsErrors, AFileWhereADirectoryShouldBe) {
  auto [stock, ours] = both("afile/x.db", kRwCreate, [](const std::string& d, const char*) {
    std::ofstream(d + "/afile") << "x";
  });
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  expect_same(stock, ours, "a file where a directory should be");
  EXPECT_NE(ours.detail.find("Not a directory"), std::string::npos) << ours.detail;
}

TEST_F(VfsErrors, AFileNameTooLong) {
  const std::string name(300, 'n');
  auto [stock, ours] = both(name, kRwCreate, nothing);
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  expect_same(stock, ours, "a file name longer than NAME_MAX");
  EXPECT_NE(ours.detail.find("File name too long"), std::string::npos) << ours.detail;
}

TEST_F(VfsErrors, APathTooLong) {
  std::string rel;
  while (rel.size() < 1100) rel += "dd/";
  rel += "x.db";
  auto [stock, ours] = both(rel, kRwCreate, nothing);
  EXPECT_EQ(stock.open_rc, SQLITE_CANTOPEN) << show(stock);
  expect_same(stock, ours, "a path longer than the VFS's mxPathname");
}

TEST_F(VfsErrors, AnOrdinaryDatabaseStillWorks) {
  auto [stock, ours] = both("ok.db", kRwCreate, nothing);
  EXPECT_EQ(stock.open_rc, SQLITE_OK);
  EXPECT_EQ(stock.write_rc, SQLITE_OK);
  expect_same(stock, ours, "an ordinary database");
  EXPECT_EQ(ours.detail, "");
}

// Conditions only softwrap has: the closest standard code, and the detail
// in sqlite3_errmsg itself.
TEST_F(VfsErrors, SoftwrapOnlyConditionsKeepTheirDetail) {
  // A file that is not a pool: a stock SQLite database, and text.
  ASSERT_EQ(attempt(at("unix", "stock.db"), "unix", kRwCreate).write_rc, SQLITE_OK);
  std::ofstream(at("softwrap", "text.db")) << "not a database, not a pool\n";
  for (const std::string& path : {at("unix", "stock.db"), at("softwrap", "text.db")}) {
    const Outcome o = attempt(path, "softwrap", kRwCreate);
    EXPECT_EQ(o.open_rc, SQLITE_NOTADB) << path << ": " << show(o);
    EXPECT_NE(o.open_msg.find("not a softwrap pool"), std::string::npos) << path << ": " << o.open_msg;
  }
  // A pool whose header fails its checksum.
  ASSERT_EQ(attempt(at("softwrap", "bad.db"), "softwrap", kRwCreate).write_rc, SQLITE_OK);
  {
    std::fstream f(at("softwrap", "bad.db"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x5a');
  }
  const Outcome bad = attempt(at("softwrap", "bad.db"), "softwrap", kRwCreate);
  EXPECT_TRUE(bad.open_rc == SQLITE_CORRUPT || bad.open_rc == SQLITE_NOTADB) << show(bad);
  EXPECT_NE(bad.open_msg.find("softwrap vfs: cannot open pool"), std::string::npos) << bad.open_msg;
  // A URI value the VFS does not understand.
  const Outcome uri = attempt("file:" + at("softwrap", "u.db") + "?engine=UNDO", "softwrap", kRwCreate | SQLITE_OPEN_URI);
  EXPECT_EQ(uri.open_rc, SQLITE_ERROR) << show(uri);
  EXPECT_NE(uri.open_msg.find("engine=UNDO is not an engine"), std::string::npos) << uri.open_msg;
  EXPECT_FALSE(fs::exists(at("softwrap", "u.db")));
}

// Python's sqlite3 module (Debian's python3) with the extension as the
// default VFS: the cases CPython's test_sqlite3 matches on, and ordinary use
// (sqlite/python_check.py).
TEST(VfsErrorsPython, TheSqlite3ModuleSeesSqlitesAnswers) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  setenv("SOFTWRAP_MEDIUM", "x86", 1);
  const std::string module = fs::path(SW_SQLITE_MODULE).replace_extension("").string();
  std::string text;
  EXPECT_EQ(run_program({"/usr/bin/python3", SW_PYTHON_CHECK, module}, "", &text), 0) << text;
  EXPECT_NE(text.find("python check passed"), std::string::npos) << text;
}

// ------------------------------------------------- another user, full disk

bool child() { return std::getenv("SW_VFS_ERRORS_CHILD") != nullptr; }

// Run by the child only (the parent's test below spawns it).
TEST_F(VfsErrors, ChildFullDiskAndAnotherUser) {
  if (!child()) GTEST_SKIP() << "run in a child process by AsAnotherUserAndOnAFullDisk";
  // A full file system: a 512 KiB tmpfs in a mount namespace of our own,
  // filled up; a new database on it opens, and its first write fails.
  const std::string mnt = dir_ + "/mnt";
  fs::create_directories(mnt);
  const int ns = geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS;
  if (unshare(ns) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=512k") != 0) {
    std::printf("SW_CHILD_NO_FULL_DISK: unshare/mount: %s\n", std::strerror(errno));
  } else {
    {
      std::ofstream fill(mnt + "/fill", std::ios::binary);
      const std::string block(4096, 'f');
      for (int i = 0; i < 1024 && fill; ++i) fill.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    const Outcome stock = attempt(mnt + "/unix.db", "unix", kRwCreate);
    const Outcome ours = attempt(mnt + "/softwrap.db", "softwrap", kRwCreate);
    EXPECT_EQ(stock.write_rc, SQLITE_FULL) << show(stock);
    expect_same(stock, ours, "a full disk");
    EXPECT_NE(ours.detail.find("cannot create pool"), std::string::npos) << ours.detail;
    umount(mnt.c_str());
    std::printf("SW_CHILD_FULL_DISK_DONE\n");
  }

  // Its own directory goes now, while it may still remove it: as "nobody"
  // it could not, and every run would leave one in /dev/shm.
  std::error_code ec;
  fs::remove_all(dir_, ec);

  // Another user: files this process may not open.
  if (geteuid() == 0) {
    ASSERT_EQ(setuid(65534), 0) << "setuid(nobody): " << std::strerror(errno);
  }
  // (Made by the parent, as root or as the test's user: see below.)
  const std::string root = std::getenv("SW_VFS_ERRORS_CHILD");
  const Outcome s0 = attempt(root + "/unix/noperm.db", "unix", kRwCreate);
  const Outcome o0 = attempt(root + "/softwrap/noperm.db", "softwrap", kRwCreate);
  EXPECT_EQ(s0.open_rc, SQLITE_CANTOPEN) << show(s0);
  expect_same(s0, o0, "no permission");
  // A read-only file opened for writing: it opens read-only, reads work,
  // the first write is SQLite's SQLITE_READONLY.
  const Outcome sr = attempt(root + "/unix/readonly.db", "unix", kRwCreate);
  const Outcome orr = attempt(root + "/softwrap/readonly.db", "softwrap", kRwCreate);
  EXPECT_EQ(sr.open_rc, SQLITE_OK) << show(sr);
  EXPECT_EQ(sr.write_rc, SQLITE_READONLY) << show(sr);
  expect_same(sr, orr, "a read-only file opened for writing");
  const Outcome s1 = attempt(root + "/unix/lockeddir/x.db", "unix", kRwCreate);
  const Outcome o1 = attempt(root + "/softwrap/lockeddir/x.db", "softwrap", kRwCreate);
  EXPECT_EQ(s1.open_rc, SQLITE_CANTOPEN) << show(s1);
  expect_same(s1, o1, "a directory the user may not write");
}

TEST_F(VfsErrors, AsAnotherUserAndOnAFullDisk) {
  if (child()) GTEST_SKIP() << "the parent's test";
  // The files of the "another user" rows: a database of each kind with
  // no permissions at all, and a directory nobody else may write.
  for (const char* v : {"unix", "softwrap"}) {
    ASSERT_EQ(attempt(at(v, "noperm.db"), v, kRwCreate).write_rc, SQLITE_OK) << v;
    fs::permissions(at(v, "noperm.db"), fs::perms::none);
    ASSERT_EQ(attempt(at(v, "readonly.db"), v, kRwCreate).write_rc, SQLITE_OK) << v;
    fs::permissions(at(v, "readonly.db"), fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::create_directories(at(v, "lockeddir"));
    fs::permissions(at(v, "lockeddir"), fs::perms::owner_read | fs::perms::owner_exec);
  }
  fs::permissions(dir_, fs::perms::all);
  for (const char* v : {"unix", "softwrap"}) fs::permissions(dir_ + "/" + v, fs::perms::all);
  setenv("SW_VFS_ERRORS_CHILD", dir_.c_str(), 1);
  std::string text;
  const int status =
      run_program({"/proc/self/exe", "--gtest_filter=VfsErrors.ChildFullDiskAndAnotherUser"}, "", &text);
  unsetenv("SW_VFS_ERRORS_CHILD");
  for (const char* v : {"unix", "softwrap"}) fs::permissions(at(v, "noperm.db"), fs::perms::owner_all);
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("[  PASSED  ] 1 test"), std::string::npos) << text;
  // The full-disk row needs a mount namespace; say so where there is none.
  if (text.find("SW_CHILD_FULL_DISK_DONE") == std::string::npos) {
    std::printf("note: the full-disk row did not run here: %s\n", text.substr(0, 300).c_str());
  }
}

}  // namespace
