// devdax_test.cc — device-DAX pools (devdax.h): detection from a fake
// sysfs tree (every layout the kernel has: the alignment in the device's
// directory, in device/, in device/dax_region/; no dax subsystem; no
// entry; unreadable or senseless values), a regular file playing a device
// through the probe's test double (create over old bytes, no growth, no
// truncation, an existing pool refused without SW_CONFIG_OVERWRITE,
// reopen, read-only refused), and a real device when one is named.
#include "pool/devdax.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "softwrap/softwrap.h"

namespace softwrap {
namespace {

namespace fs = std::filesystem;

class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/sw_devdax_sysfs_XXXXXX";
    root_ = mkdtemp(tmpl);
    setenv("SOFTWRAP_SYSFS_ROOT", root_.c_str(), 1);
  }
  ~FakeSysfs() {
    unsetenv("SOFTWRAP_SYSFS_ROOT");
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  // /sys/dev/char/MAJ:MIN -> a device directory `rel` (under sys/devices)
  // with subsystem -> sys/class/<subsystem>.
  std::string device(unsigned maj, unsigned min, const std::string& rel, const std::string& subsystem) {
    const std::string dir = root_ + "/sys/devices/" + rel;
    fs::create_directories(dir);
    fs::create_directories(root_ + "/sys/class/" + subsystem);
    fs::create_directory_symlink(root_ + "/sys/class/" + subsystem, dir + "/subsystem");
    fs::create_directories(root_ + "/sys/dev/char");
    fs::create_directory_symlink(dir, root_ + "/sys/dev/char/" + std::to_string(maj) + ":" + std::to_string(min));
    return dir;
  }
  static void put(const std::string& file, const std::string& text) {
    fs::create_directories(fs::path(file).parent_path());
    std::ofstream(file) << text;
  }

 private:
  std::string root_;
};

struct stat stat_of(const char* path) {
  struct stat st{};
  EXPECT_EQ(::stat(path, &st), 0) << path;
  return st;
}

// /dev/zero is a character device that is no dax device: it stands in for
// one here (its numbers are what the fake tree describes).
TEST(DevDaxProbeTest, EveryLayoutOfSysfs) {
  const struct stat zero = stat_of("/dev/zero");
  ASSERT_TRUE(S_ISCHR(zero.st_mode));
  const unsigned maj = major(zero.st_rdev), min = minor(zero.st_rdev);
  struct Case {
    const char* name;
    const char* align_file;  // relative to the device directory, or nullptr
    const char* align;
    const char* size;
    const char* subsystem;
    int want;
    uint64_t want_align;
  };
  const Case cases[] = {
      {"align in the device's directory (5.x kernels)", "align", "2097152\n", "1073741824\n", "dax", 1, 2u << 20},
      {"align in device/ (older kernels)", "device/align", "4096\n", "16777216\n", "dax", 1, 4096},
      {"align in the dax region", "device/dax_region/align", "1073741824\n", "2147483648\n", "dax", 1, 1u << 30},
      {"not the dax subsystem (/dev/zero's own: mem)", "align", "4096\n", "16777216\n", "mem", 0, 0},
      {"no alignment anywhere", nullptr, "", "16777216\n", "dax", -1, 0},
      {"size unreadable", "align", "4096\n", nullptr, "dax", -1, 0},
      {"alignment not a power of two", "align", "3000\n", "16777216\n", "dax", -1, 0},
      {"size not a multiple of the alignment", "align", "2097152\n", "3145728\n", "dax", -1, 0},
      {"size not a number", "align", "4096\n", "lots\n", "dax", -1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeSysfs t;
    const std::string dir = t.device(maj, min, "platform/e820_pmem/ndbus0/region0/dax0.0/dax0.0", c.subsystem);
    if (c.align_file) FakeSysfs::put(dir + "/" + c.align_file, c.align);
    if (c.size) FakeSysfs::put(dir + "/size", c.size);
    DevDax d;
    const int r = probe_devdax(zero, "/dev/zero", &d);
    EXPECT_EQ(r, c.want);
    if (r == 1) {
      EXPECT_EQ(d.align, c.want_align);
      EXPECT_EQ(d.size, std::stoull(c.size));
      EXPECT_EQ(d.source.rfind("/dax0.0"), d.source.size() - 7) << d.source;
    }
    if (r < 0) {
      EXPECT_NE(std::strstr(last_error_message(), "device DAX '/dev/zero'"), nullptr) << last_error_message();
    }
  }
  {
    SCOPED_TRACE("a CXL region's dax device");
    FakeSysfs t;
    const std::string dir = t.device(maj, min, "platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0", "dax");
    FakeSysfs::put(dir + "/align", "2097152\n");
    FakeSysfs::put(dir + "/size", "268435456\n");
    DevDax d;
    EXPECT_EQ(probe_devdax(zero, "/dev/zero", &d), 1);
    EXPECT_EQ(d.size, 256u << 20);
  }
  {
    SCOPED_TRACE("no sysfs entry for the device");
    FakeSysfs t;
    DevDax d;
    EXPECT_EQ(probe_devdax(zero, "/dev/zero", &d), 0);
  }
  {
    SCOPED_TRACE("a regular file");
    FakeSysfs t;
    const struct stat self = stat_of("/proc/self/exe");
    DevDax d;
    EXPECT_EQ(probe_devdax(self, "/proc/self/exe", &d), 0);
  }
}

// A regular file plays a device of kDevSize bytes aligned to 2 MiB (the
// probe's double): everything but the kernel's own dax driver.
constexpr uint64_t kDevSize = 48ull << 20;
std::string g_fake;
uint64_t g_align = 2ull << 20;

int fake_probe(const struct stat& st, const std::string& path, DevDax* out) {
  if (path != g_fake || !S_ISREG(st.st_mode)) return 0;
  out->size = kDevSize;
  out->align = g_align;
  out->source = "test double";
  return 1;
}

class FakeDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake = "/dev/shm/sw_fake_dax_" + std::to_string(getpid());
    // The device's old bytes: not zeros, and the size never changes.
    std::vector<char> junk(1 << 20, static_cast<char>(0xAB));
    std::ofstream out(g_fake, std::ios::binary);
    for (uint64_t i = 0; i < kDevSize; i += junk.size()) out.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    out.close();
    set_devdax_probe(fake_probe);
  }
  void TearDown() override {
    set_devdax_probe(nullptr);
    g_align = 2ull << 20;
    fs::remove(g_fake);
  }
  static uint64_t file_size() { return fs::file_size(g_fake); }
  static void zero_first_page() {
    const int fd = ::open(g_fake.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    static const char zeros[4096] = {};
    ASSERT_EQ(pwrite(fd, zeros, sizeof zeros, 0), static_cast<ssize_t>(sizeof zeros));
    ::close(fd);
  }
};

TEST_F(FakeDeviceTest, CreateFillsTheDeviceReopensAndNeverResizesIt) {
  sw_config cfg{};
  // Another program's data in the first page: not taken without
  // SW_CONFIG_OVERWRITE, and left as it was.
  EXPECT_EQ(sw_pool_create(g_fake.c_str(), 0, &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EEXIST);
  EXPECT_NE(std::strstr(sw_errormsg(), "is not empty"), nullptr) << sw_errormsg();
  {
    std::ifstream in(g_fake, std::ios::binary);
    char c = 0;
    in.read(&c, 1);
    EXPECT_EQ(c, static_cast<char>(0xAB));
  }
  zero_first_page();  // a new or zeroed device (its heap still holds old bytes)
  sw_pool* p = sw_pool_create(g_fake.c_str(), 0, &cfg);  // 0: the whole device
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_size(p), kDevSize);
  EXPECT_EQ(sw_pool_max_size(p), kDevSize);  // it does not grow
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_EQ(pi.synchronous, 1);
  EXPECT_STREQ(pi.medium, "x86");  // no page cache to msync
  auto* words = static_cast<uint64_t*>(sw_pool_root(p, 64));
  ASSERT_NE(words, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(p), 0);
  for (int i = 0; i < 8; ++i) sw_store64(p, &words[i], 1000 + i);
  ASSERT_EQ(sw_wrap_close(p), 0);
  // The heap held 0xAB: zeroed allocations must still be zero.
  auto* z = static_cast<unsigned char*>(sw_pzalloc(p, 100000));
  ASSERT_NE(z, nullptr) << sw_errormsg();
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(z[i], 0) << i;
  // Growth is refused with a clear error, not a resized device.
  EXPECT_EQ(sw_pmalloc(p, kDevSize), nullptr);
  EXPECT_EQ(sw_errno(), SW_ENOSPC);
  ASSERT_EQ(sw_pool_close(p), 0);
  EXPECT_EQ(file_size(), kDevSize);

  p = sw_pool_open(g_fake.c_str(), &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  words = static_cast<uint64_t*>(sw_pool_root(p, 64));
  ASSERT_NE(words, nullptr);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(sw_load64(p, &words[i]), uint64_t(1000 + i));
  ASSERT_EQ(sw_pool_close(p), 0);
  EXPECT_EQ(file_size(), kDevSize);
}

// Every alignment the kernel offers: the header and PoolMeta are read at
// open through a mapping of whole units, the pool mapped in them.
TEST_F(FakeDeviceTest, EveryAlignmentOpens) {
  for (uint64_t align : {uint64_t{4096}, uint64_t{2} << 20, uint64_t{16} << 20}) {
    SCOPED_TRACE(align);
    g_align = align;
    sw_config cfg{};
    cfg.flags = SW_CONFIG_OVERWRITE;
    sw_pool* p = sw_pool_create(g_fake.c_str(), 9u << 20, &cfg);  // not a multiple of 2 MiB
    ASSERT_NE(p, nullptr) << sw_errormsg();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(sw_pool_base(p)) % align, 0u);
    auto* w = static_cast<uint64_t*>(sw_pool_root(p, 8));
    ASSERT_EQ(sw_wrap_open(p), 0);
    sw_store64(p, w, align);
    ASSERT_EQ(sw_wrap_close(p), 0);
    ASSERT_EQ(sw_pool_close(p), 0);
    cfg.flags = 0;
    p = sw_pool_open(g_fake.c_str(), &cfg);
    ASSERT_NE(p, nullptr) << sw_errormsg();
    EXPECT_EQ(sw_load64(p, static_cast<uint64_t*>(sw_pool_root(p, 8))), align);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(sw_pool_base(p)) % align, 0u);
    ASSERT_EQ(sw_pool_close(p), 0);
  }
}

TEST_F(FakeDeviceTest, AnExistingPoolIsReplacedOnlyWithOverwrite) {
  sw_config cfg{};
  zero_first_page();
  sw_pool* p = sw_pool_create(g_fake.c_str(), 16u << 20, &cfg);  // less than the device
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_size(p), 16u << 20);
  auto* w = static_cast<uint64_t*>(sw_pool_root(p, 8));
  ASSERT_EQ(sw_wrap_open(p), 0);
  sw_store64(p, w, 77);
  ASSERT_EQ(sw_wrap_close(p), 0);
  ASSERT_EQ(sw_pool_close(p), 0);

  EXPECT_EQ(sw_pool_create(g_fake.c_str(), 0, &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EEXIST);
  EXPECT_NE(std::strstr(sw_errormsg(), "already holds a softwrap pool"), nullptr) << sw_errormsg();
  ASSERT_TRUE(fs::exists(g_fake));  // a device is never unlinked
  p = sw_pool_open(g_fake.c_str(), &cfg);
  ASSERT_NE(p, nullptr) << "the old pool must be intact: " << sw_errormsg();
  EXPECT_EQ(sw_load64(p, static_cast<uint64_t*>(sw_pool_root(p, 8))), 77u);
  ASSERT_EQ(sw_pool_close(p), 0);
  EXPECT_EQ(file_size(), kDevSize);  // a pool smaller than its device: no tail trimmed

  cfg.flags = SW_CONFIG_OVERWRITE;
  p = sw_pool_create(g_fake.c_str(), 0, &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_size(p), kDevSize);
  EXPECT_EQ(sw_load64(p, static_cast<uint64_t*>(sw_pool_root(p, 8))), 0u);  // a new, empty root
  ASSERT_EQ(sw_pool_close(p), 0);
}

TEST_F(FakeDeviceTest, MisuseIsRefusedWithAClearError) {
  sw_config cfg{};
  EXPECT_EQ(sw_pool_create(g_fake.c_str(), kDevSize + (2u << 20), &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_ENOSPC);
  EXPECT_NE(std::strstr(sw_errormsg(), "holds"), nullptr) << sw_errormsg();
  cfg.max_size = SW_POOL_SIZE_UNLIMITED;
  EXPECT_EQ(sw_pool_create(g_fake.c_str(), 16u << 20, &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_NE(std::strstr(sw_errormsg(), "does not grow"), nullptr) << sw_errormsg();
  cfg.max_size = 0;
  // The old bytes are no pool: open says so.
  EXPECT_EQ(sw_pool_open(g_fake.c_str(), &cfg), nullptr);
  EXPECT_NE(sw_errno(), 0);
  ASSERT_TRUE(fs::exists(g_fake));
  EXPECT_EQ(file_size(), kDevSize);
  cfg.flags = SW_CONFIG_OVERWRITE;
  sw_pool* p = sw_pool_create(g_fake.c_str(), 0, &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_pool_close(p), 0);
  cfg.flags = SW_CONFIG_READONLY;
  EXPECT_EQ(sw_pool_open(g_fake.c_str(), &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
  EXPECT_NE(std::strstr(sw_errormsg(), "copy-on-write"), nullptr) << sw_errormsg();
  cfg.flags = 0;
  cfg.max_size = 64u << 20;
  EXPECT_EQ(sw_pool_open(g_fake.c_str(), &cfg), nullptr);
  EXPECT_EQ(sw_errno(), SW_EINVAL);
}

// The real probe on a real character device: /dev/zero, described as a
// device DAX by a fake sysfs tree.  Its shared mapping is memory that
// lives as long as the mapping, so the pool works until it is closed and
// a reopen finds no pool: the whole path up to and including the mmap.
TEST(CharDeviceTest, APoolOnACharacterDeviceUpToTheMapping) {
  const struct stat zero = stat_of("/dev/zero");
  FakeSysfs t;
  const std::string dir = t.device(major(zero.st_rdev), minor(zero.st_rdev), "virtual/dax/dax9.0", "dax");
  FakeSysfs::put(dir + "/size", "33554432\n");
  FakeSysfs::put(dir + "/align", "2097152\n");
  sw_config cfg{};
  sw_pool* p = sw_pool_create("/dev/zero", 0, &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_pool_size(p), 32u << 20);
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_EQ(pi.synchronous, 1);
  auto* w = static_cast<uint64_t*>(sw_pool_root(p, 8));
  ASSERT_NE(w, nullptr) << sw_errormsg();
  ASSERT_EQ(sw_wrap_open(p), 0);
  sw_store64(p, w, 5);
  ASSERT_EQ(sw_wrap_close(p), 0);
  EXPECT_EQ(sw_load64(p, w), 5u);
  ASSERT_EQ(sw_pool_close(p), 0);
  EXPECT_EQ(sw_pool_open("/dev/zero", &cfg), nullptr);  // zeros: no pool
  EXPECT_EQ(sw_errno(), SW_EFOREIGN) << sw_errormsg();
  EXPECT_TRUE(fs::exists("/dev/zero"));
}

// A real device: only when named (its contents are destroyed).
TEST(RealDeviceDaxTest, CreateStoreReopen) {
  const char* dev = getenv("SOFTWRAP_TEST_DAX_DEVICE");
  if (dev == nullptr || *dev == 0) {
    GTEST_SKIP() << "no device DAX named: set SOFTWRAP_TEST_DAX_DEVICE=/dev/daxX.Y to run this test on one (its "
                    "contents are destroyed)";
  }
  sw_config cfg{};
  cfg.flags = SW_CONFIG_OVERWRITE;
  sw_pool* p = sw_pool_create(dev, 0, &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  sw_pool_platform_info pi{};
  ASSERT_EQ(sw_pool_platform(p, &pi), 0);
  EXPECT_EQ(pi.synchronous, 1);
  auto* w = static_cast<uint64_t*>(sw_pool_root(p, 8));
  ASSERT_EQ(sw_wrap_open(p), 0);
  sw_store64(p, w, 4242);
  ASSERT_EQ(sw_wrap_close(p), 0);
  ASSERT_EQ(sw_pool_close(p), 0);
  cfg.flags = 0;
  p = sw_pool_open(dev, &cfg);
  ASSERT_NE(p, nullptr) << sw_errormsg();
  EXPECT_EQ(sw_load64(p, static_cast<uint64_t*>(sw_pool_root(p, 8))), 4242u);
  ASSERT_EQ(sw_pool_close(p), 0);
}

}  // namespace
}  // namespace softwrap
