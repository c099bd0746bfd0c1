// persistence_domain.h: finding the nd region behind a pool file and reading
// what it says about its persistence domain.
#include "medium/persistence_domain.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace softwrap {

const char* persistence_domain_name(PersistenceDomain d) {
  switch (d) {
    case PersistenceDomain::kMemoryController: return "memory-controller";
    case PersistenceDomain::kCpuCache: return "cpu-cache";
    case PersistenceDomain::kNone: return "none";
    case PersistenceDomain::kUnknown: break;
  }
  return "unknown";
}

bool parse_persistence_override(const char* value, PersistenceOverride* out, std::string* err) {
  if (value == nullptr || *value == '\0' || std::strcmp(value, "auto") == 0) {
    *out = PersistenceOverride::kAuto;
  } else if (std::strcmp(value, "cpu-cache") == 0) {
    *out = PersistenceOverride::kCpuCache;
  } else if (std::strcmp(value, "memory-controller") == 0) {
    *out = PersistenceOverride::kMemoryController;
  } else if (std::strcmp(value, "none") == 0) {
    *out = PersistenceOverride::kNone;
  } else {
    *err = std::string("SOFTWRAP_PERSISTENCE='") + value +
           "' is not one of auto, cpu-cache, memory-controller, none";
    return false;
  }
  return true;
}

std::string sysfs_root() {
  const char* r = std::getenv("SOFTWRAP_SYSFS_ROOT");
  std::string s = r != nullptr ? r : "";
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

namespace {

// Reads the first line of path.  0 on success, else an errno (a directory
// or other file that cannot be read is an error, not an empty value).
int read_line(const std::string& path, std::string* line) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  const int e = errno;
  ::close(fd);
  if (n < 0) return e;
  line->assign(buf, static_cast<size_t>(n));
  if (const size_t nl = line->find('\n'); nl != std::string::npos) line->resize(nl);
  while (!line->empty() && line->back() == ' ') line->pop_back();
  return 0;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

DomainReport detect_persistence_domain(bool is_char, unsigned major_no, unsigned minor_no,
                                       const std::string& root) {
  DomainReport r;
  const std::string link = root + (is_char ? "/sys/dev/char/" : "/sys/dev/block/") +
                           std::to_string(major_no) + ":" + std::to_string(minor_no);
  char buf[PATH_MAX];
  if (::realpath(link.c_str(), buf) == nullptr) {
    r.detail = "no sysfs entry " + link;
    return r;
  }
  // The tree's own root, resolved, bounds the walk up.
  std::string top = "/";
  if (!root.empty()) {
    char rb[PATH_MAX];
    if (::realpath(root.c_str(), rb) != nullptr) top = rb;
  }
  std::string dir = buf;
  while (dir.size() > top.size() && dir.compare(0, top.size(), top) == 0) {
    const std::string file = dir + "/persistence_domain";
    if (exists(file)) {
      std::string v;
      if (const int e = read_line(file, &v); e != 0) {
        r.detail = "unreadable: " + file + ": " + std::strerror(e);
        return r;
      }
      // One word on current kernels; the first kernels to have the file
      // (4.16) listed every flag, space-separated ("cpu_cache
      // memory_controller"): the caches are persistent if they are named.
      bool cache = false, memctrl = false, other = false;
      for (size_t at = 0; at < v.size();) {
        const size_t end = std::min(v.find(' ', at), v.size());
        const std::string w = v.substr(at, end - at);
        if (w == "cpu_cache") {
          cache = true;
        } else if (w == "memory_controller") {
          memctrl = true;
        } else if (!w.empty()) {
          other = true;
        }
        at = end + 1;
      }
      if (cache && !other) {
        r.domain = PersistenceDomain::kCpuCache;
      } else if (memctrl && !other) {
        r.domain = PersistenceDomain::kMemoryController;
      } else {
        r.detail = "unrecognised value '" + v + "' in " + file;
        return r;
      }
      r.source = file;
      return r;
    }
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    dir.resize(slash);
  }
  r.detail = "no nd region above " + link;
  return r;
}

DomainReport detect_persistence_domain_fd(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    DomainReport r;
    r.detail = std::string("fstat: ") + std::strerror(errno);
    return r;
  }
  if (S_ISCHR(st.st_mode)) {
    return detect_persistence_domain(true, major(st.st_rdev), minor(st.st_rdev), sysfs_root());
  }
  return detect_persistence_domain(false, major(st.st_dev), minor(st.st_dev), sysfs_root());
}

bool resolve_persistence_domain(int fd, DomainReport* out, std::string* err) {
  PersistenceOverride ov;
  if (!parse_persistence_override(std::getenv("SOFTWRAP_PERSISTENCE"), &ov, err)) return false;
  if (ov != PersistenceOverride::kAuto) {
    *out = DomainReport();
    out->source = "SOFTWRAP_PERSISTENCE";
    out->domain = ov == PersistenceOverride::kCpuCache           ? PersistenceDomain::kCpuCache
                  : ov == PersistenceOverride::kMemoryController ? PersistenceDomain::kMemoryController
                                                                 : PersistenceDomain::kNone;
    return true;
  }
  if (fd < 0) {
    *out = DomainReport();
    out->detail = "no file (attached memory)";
    return true;
  }
  *out = detect_persistence_domain_fd(fd);
  return true;
}

}  // namespace softwrap
