// Detection of the persistence domain from fake sysfs trees, one per layout
// a pool's file can sit on, and the SOFTWRAP_PERSISTENCE override.
#include "medium/persistence_domain.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace softwrap {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sw_sysfs_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::unsetenv("SOFTWRAP_PERSISTENCE");
    ::unsetenv("SOFTWRAP_SYSFS_ROOT");
  }
  void TearDown() override {
    ::unsetenv("SOFTWRAP_PERSISTENCE");
    ::unsetenv("SOFTWRAP_SYSFS_ROOT");
    std::error_code ec;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }
  // Creates root/sys/devices/<dev> and links root/sys/dev/<kind>/<num> to it
  // with a relative link, as the kernel does.
  void device(const std::string& kind, const std::string& num, const std::string& dev) {
    fs::create_directories(root_ + "/sys/devices/" + dev);
    fs::create_directories(root_ + "/sys/dev/" + kind);
    fs::create_directory_symlink("../../devices/" + dev, root_ + "/sys/dev/" + kind + "/" + num);
  }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ + "/sys/devices/" + rel) << text;
  }
  std::string path(const std::string& rel) const { return root_ + "/sys/devices/" + rel; }
  std::string root_;
};

constexpr const char* kNdRegion = "platform/e820_pmem/ndbus0/region0";

TEST_F(FakeSysfs, FsdaxOnPmemNamespace) {
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  write(std::string(kNdRegion) + "/persistence_domain", "memory_controller\n");
  const DomainReport r = detect_persistence_domain(false, 259, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kMemoryController);
  EXPECT_EQ(fs::canonical(r.source), fs::canonical(path(std::string(kNdRegion) + "/persistence_domain")));
}

TEST_F(FakeSysfs, FsdaxOnPartitionOfPmemNamespace) {
  device("block", "259:1", std::string(kNdRegion) + "/namespace0.0/block/pmem0/pmem0p1");
  write(std::string(kNdRegion) + "/persistence_domain", "cpu_cache\n");
  const DomainReport r = detect_persistence_domain(false, 259, 1, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kCpuCache);
  EXPECT_NE(r.source.find("region0/persistence_domain"), std::string::npos) << r.source;
}

TEST_F(FakeSysfs, DeviceDax) {
  const std::string region = "platform/e820_pmem/ndbus0/region1";
  device("char", "252:0", region + "/dax1.0/dax/dax1.0");
  write(region + "/persistence_domain", "cpu_cache");
  // A block device with the same numbers must not be confused with it.
  const DomainReport blk = detect_persistence_domain(false, 252, 0, root_);
  EXPECT_EQ(blk.domain, PersistenceDomain::kUnknown);
  const DomainReport r = detect_persistence_domain(true, 252, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kCpuCache);
  EXPECT_NE(r.source.find("region1/persistence_domain"), std::string::npos) << r.source;
}

TEST_F(FakeSysfs, CxlRegion) {
  // A CXL pmem region: the nd region the kernel makes below the cxl region.
  const std::string nd = "platform/ACPI0017:00/root0/decoder0.0/region0/pmem_region0/ndbus1/region2";
  device("block", "259:5", nd + "/namespace2.0/block/pmem2");
  device("char", "251:3", nd + "/dax2.0/dax/dax2.0");
  write(nd + "/persistence_domain", "cpu_cache\n");
  for (const bool is_char : {false, true}) {
    const DomainReport r = detect_persistence_domain(is_char, is_char ? 251 : 259, is_char ? 3 : 5, root_);
    EXPECT_EQ(r.domain, PersistenceDomain::kCpuCache);
    EXPECT_NE(r.source.find("ndbus1/region2/persistence_domain"), std::string::npos) << r.source;
  }
}

TEST_F(FakeSysfs, NearestRegionWins) {
  // The walk stops at the nearest persistence_domain, not a farther one.
  const std::string nd = "platform/outer/ndbus0/region3";
  device("block", "259:7", nd + "/namespace3.0/block/pmem3");
  write(nd + "/persistence_domain", "memory_controller");
  write("platform/outer/persistence_domain", "cpu_cache");
  EXPECT_EQ(detect_persistence_domain(false, 259, 7, root_).domain, PersistenceDomain::kMemoryController);
}

TEST_F(FakeSysfs, NoRegion) {
  device("block", "7:0", "virtual/block/loop0");
  const DomainReport r = detect_persistence_domain(false, 7, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_EQ(r.source, "not found");
  EXPECT_NE(r.detail.find("no nd region"), std::string::npos) << r.detail;
}

TEST_F(FakeSysfs, NoSysfsEntry) {
  const DomainReport r = detect_persistence_domain(false, 8, 1, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_EQ(r.source, "not found");
  EXPECT_NE(r.detail.find("no sysfs entry"), std::string::npos) << r.detail;
}

TEST_F(FakeSysfs, MissingFileIsNotReadable) {
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  fs::create_symlink("gone", path(std::string(kNdRegion) + "/persistence_domain"));
  const DomainReport r = detect_persistence_domain(false, 259, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_EQ(r.source, "not found");
  EXPECT_NE(r.detail.find("unreadable"), std::string::npos) << r.detail;
}

TEST_F(FakeSysfs, DirectoryIsNotReadable) {
  // A persistence_domain that cannot be read (here a directory: read fails
  // with EISDIR, as root too) is not readable, not an empty value.
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  fs::create_directory(path(std::string(kNdRegion) + "/persistence_domain"));
  const DomainReport r = detect_persistence_domain(false, 259, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_NE(r.detail.find("unreadable"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("directory"), std::string::npos) << r.detail;
}

TEST_F(FakeSysfs, PermissionDeniedIsNotReadable) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: file permissions do not stop reads";
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  write(std::string(kNdRegion) + "/persistence_domain", "cpu_cache\n");
  ASSERT_EQ(::chmod(path(std::string(kNdRegion) + "/persistence_domain").c_str(), 0), 0);
  const DomainReport r = detect_persistence_domain(false, 259, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_NE(r.detail.find("unreadable"), std::string::npos) << r.detail;
}

TEST_F(FakeSysfs, UnknownValueIsNotReadable) {
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  write(std::string(kNdRegion) + "/persistence_domain", "volatile\n");
  const DomainReport r = detect_persistence_domain(false, 259, 0, root_);
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_EQ(r.source, "not found");
  EXPECT_NE(r.detail.find("unrecognised value 'volatile'"), std::string::npos) << r.detail;
}

// The 4.16 kernel's form: every flag of the region, space-separated.
TEST_F(FakeSysfs, OldKernelsListOfFlags) {
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  struct Case { const char* text; PersistenceDomain want; };
  for (const Case c : {Case{"cpu_cache memory_controller\n", PersistenceDomain::kCpuCache},
                       Case{"memory_controller cpu_cache\n", PersistenceDomain::kCpuCache},
                       Case{"memory_controller \n", PersistenceDomain::kMemoryController},
                       Case{"cpu_cache volatile\n", PersistenceDomain::kUnknown}}) {
    SCOPED_TRACE(c.text);
    write(std::string(kNdRegion) + "/persistence_domain", c.text);
    EXPECT_EQ(detect_persistence_domain(false, 259, 0, root_).domain, c.want);
  }
}

TEST_F(FakeSysfs, EmptyValueIsNotReadable) {
  device("block", "259:0", std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  write(std::string(kNdRegion) + "/persistence_domain", "");
  EXPECT_EQ(detect_persistence_domain(false, 259, 0, root_).domain, PersistenceDomain::kUnknown);
}

TEST_F(FakeSysfs, OpenFileThroughRootVariable) {
  // A real file's st_dev, found in a fake tree named by SOFTWRAP_SYSFS_ROOT.
  const std::string file = root_ + "/pool";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  const std::string num = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  device("block", num, std::string(kNdRegion) + "/namespace0.0/block/pmem0");
  write(std::string(kNdRegion) + "/persistence_domain", "cpu_cache\n");
  ASSERT_EQ(::setenv("SOFTWRAP_SYSFS_ROOT", (root_ + "/").c_str(), 1), 0);
  EXPECT_EQ(sysfs_root(), root_);
  DomainReport r;
  std::string err;
  ASSERT_TRUE(resolve_persistence_domain(fd, &r, &err)) << err;
  EXPECT_EQ(r.domain, PersistenceDomain::kCpuCache);
  EXPECT_EQ(r.source.rfind(root_, 0), 0u) << r.source;  // the root prefixes the path
  ::close(fd);
}

TEST(PersistenceOverride, EachValue) {
  struct Case { const char* v; PersistenceOverride want; };
  for (const Case c : {Case{nullptr, PersistenceOverride::kAuto}, Case{"", PersistenceOverride::kAuto},
                       Case{"auto", PersistenceOverride::kAuto},
                       Case{"cpu-cache", PersistenceOverride::kCpuCache},
                       Case{"memory-controller", PersistenceOverride::kMemoryController},
                       Case{"none", PersistenceOverride::kNone}}) {
    PersistenceOverride got = PersistenceOverride::kNone;
    std::string err;
    EXPECT_TRUE(parse_persistence_override(c.v, &got, &err)) << (c.v ? c.v : "(null)");
    EXPECT_EQ(got, c.want) << (c.v ? c.v : "(null)");
  }
}

TEST(PersistenceOverride, BadValueNamesItAndTheChoices) {
  for (const char* bad : {"cpu_cache", "eadr", "CPU-CACHE", "auto "}) {
    PersistenceOverride got;
    std::string err;
    EXPECT_FALSE(parse_persistence_override(bad, &got, &err)) << bad;
    EXPECT_NE(err.find(std::string("'") + bad + "'"), std::string::npos) << err;
    EXPECT_NE(err.find("auto, cpu-cache, memory-controller, none"), std::string::npos) << err;
  }
}

TEST(PersistenceOverride, ResolveAppliesEnvironment) {
  const int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  struct Case { const char* v; PersistenceDomain want; };
  for (const Case c : {Case{"cpu-cache", PersistenceDomain::kCpuCache},
                       Case{"memory-controller", PersistenceDomain::kMemoryController},
                       Case{"none", PersistenceDomain::kNone}}) {
    ASSERT_EQ(::setenv("SOFTWRAP_PERSISTENCE", c.v, 1), 0);
    DomainReport r;
    std::string err;
    ASSERT_TRUE(resolve_persistence_domain(fd, &r, &err)) << err;
    EXPECT_EQ(r.domain, c.want) << c.v;
    EXPECT_EQ(r.source, "SOFTWRAP_PERSISTENCE");
  }
  ASSERT_EQ(::setenv("SOFTWRAP_PERSISTENCE", "bogus", 1), 0);
  DomainReport r;
  std::string err;
  EXPECT_FALSE(resolve_persistence_domain(fd, &r, &err));
  EXPECT_NE(err.find("'bogus'"), std::string::npos) << err;
  // auto: detection; /dev/null (a char device with no nd region) is not found.
  ASSERT_EQ(::setenv("SOFTWRAP_PERSISTENCE", "auto", 1), 0);
  ASSERT_TRUE(resolve_persistence_domain(fd, &r, &err)) << err;
  EXPECT_EQ(r.domain, PersistenceDomain::kUnknown);
  EXPECT_EQ(r.source, "not found");
  ::unsetenv("SOFTWRAP_PERSISTENCE");
  ::close(fd);
}

TEST(PersistenceDomainName, Names) {
  EXPECT_STREQ(persistence_domain_name(PersistenceDomain::kUnknown), "unknown");
  EXPECT_STREQ(persistence_domain_name(PersistenceDomain::kMemoryController), "memory-controller");
  EXPECT_STREQ(persistence_domain_name(PersistenceDomain::kCpuCache), "cpu-cache");
  EXPECT_STREQ(persistence_domain_name(PersistenceDomain::kNone), "none");
}

}  // namespace
}  // namespace softwrap
