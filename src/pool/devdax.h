// devdax.h — device-DAX character devices (/dev/daxX.Y) as pool files.
//
// A device-DAX namespace (NVDIMM, or a CXL pmem region) appears as a
// character device with no file system: it is mapped whole or in pieces of
// its alignment, never read or written with read()/write(), never resized,
// and its size and alignment are read from sysfs:
//   /sys/dev/char/MAJ:MIN           -> the dax device's directory
//   .../subsystem                   -> .../class/dax or .../bus/dax (what makes it device DAX)
//   .../size                        bytes
//   .../align, else .../device/align, else .../device/dax_region/align
//                                   bytes: mappings start and end on it
// (under SOFTWRAP_SYSFS_ROOT, as the persistence domain's detection).  A
// pool on one fills it (or the size asked for, up to it), does not grow,
// and is created over an existing pool only with SW_CONFIG_OVERWRITE.
#ifndef SOFTWRAP_POOL_DEVDAX_H_
#define SOFTWRAP_POOL_DEVDAX_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace softwrap {

struct DevDax {
  uint64_t size = 0;    // bytes the device holds
  uint64_t align = 0;   // mapping alignment, a power of two >= 4096
  std::string source;   // the sysfs directory read
};

// 1: `st` (of `path`) is a device-DAX character device, *out filled;
// 0: it is not (a regular file, another character device); -1: it is one
// but its size or alignment cannot be read or makes no sense (thread
// error set: SW_EIO).
int probe_devdax(const struct stat& st, const std::string& path, DevDax* out);

// Tests: a probe that stands in for the sysfs one, for every path (so that
// a regular file can play a device up to and including the mapping);
// nullptr restores the real one.
using DevDaxProbe = int (*)(const struct stat& st, const std::string& path, DevDax* out);
void set_devdax_probe(DevDaxProbe probe);

}  // namespace softwrap

#endif  // SOFTWRAP_POOL_DEVDAX_H_
