// devdax.cc — device-DAX detection from sysfs (devdax.h).
#include "pool/devdax.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <string>

#include "common/error.h"
#include "medium/persistence_domain.h"

namespace softwrap {
namespace {

std::atomic<DevDaxProbe> g_probe{nullptr};

// The first line of `file` as an unsigned number; false if unreadable.
bool read_number(const std::string& file, uint64_t* out) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(line.c_str(), &end, 0);
  if (errno != 0 || end == line.c_str()) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
  if (*end != 0) return false;
  *out = v;
  return true;
}

// realpath() of `p`, or "" if it does not resolve.
std::string resolved(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

}  // namespace

void set_devdax_probe(DevDaxProbe probe) { g_probe.store(probe); }

int probe_devdax(const struct stat& st, const std::string& path, DevDax* out) {
  if (DevDaxProbe p = g_probe.load()) return p(st, path, out);
  if (!S_ISCHR(st.st_mode)) return 0;
  const std::string link = sysfs_root() + "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                           std::to_string(minor(st.st_rdev));
  const std::string dir = resolved(link);
  if (dir.empty()) return 0;  // no sysfs entry: not a device this kernel calls dax
  const std::string subsystem = resolved(dir + "/subsystem");
  if (!ends_with(subsystem, "/dax")) return 0;  // /dev/zero, a tty, ...
  DevDax d;
  d.source = dir;
  if (!read_number(dir + "/size", &d.size)) {
    set_error(SW_EIO, "device DAX '%s': cannot read its size from %s/size", path.c_str(), dir.c_str());
    return -1;
  }
  if (!read_number(dir + "/align", &d.align) && !read_number(dir + "/device/align", &d.align) &&
      !read_number(dir + "/device/dax_region/align", &d.align)) {
    set_error(SW_EIO, "device DAX '%s': cannot read its alignment (%s/align, device/align or device/dax_region/align)",
              path.c_str(), dir.c_str());
    return -1;
  }
  if (d.align < 4096 || (d.align & (d.align - 1)) != 0 || d.size == 0 || d.size % d.align != 0) {
    set_error(SW_EIO, "device DAX '%s': size %" PRIu64 " and alignment %" PRIu64 " from %s make no sense",
              path.c_str(), d.size, d.align, dir.c_str());
    return -1;
  }
  *out = d;
  return 1;
}

}  // namespace softwrap
