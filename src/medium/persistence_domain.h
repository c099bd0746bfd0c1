// persistence_domain: what the platform promises about how far persistence
// reaches (docs/media.md, "Persistence domains"), read once at pool open.
//
// Linux reports it per nd region: regionN/persistence_domain holds
// "cpu_cache" (eADR, CXL global persistent flush: caches are persistent) or
// "memory_controller" (ADR: a line is durable once flushed).  The region is
// found from the pool file's device: a file on a DAX file system through
// st_dev (/sys/dev/block/MAJ:MIN, the pmem block device under its
// namespace under its region), a device-DAX character device through its
// own number (/sys/dev/char/MAJ:MIN, daxX.Y under its region); a CXL pmem
// region reaches the same nd region below its cxl regionN.  The link is
// resolved and its ancestors searched for the nearest persistence_domain.
//
// SOFTWRAP_SYSFS_ROOT, if set, prefixes every sysfs path (tests: a fake tree).
// SOFTWRAP_PERSISTENCE=auto|cpu-cache|memory-controller|none overrides the
// detection: the user's promise about the platform.
//
// A cpu-cache domain puts the x86 medium in its cpu-cache form (medium.h:
// no flushes, the ordering fences TSO makes unneeded elided); the msync
// and scm-emu media ignore the domain.
#pragma once

#include <sys/types.h>

#include <string>

namespace softwrap {

enum class PersistenceDomain : unsigned char {
  kUnknown,           // not readable: the x86 rules (flush, fence) stay
  kMemoryController,  // ADR: flushed lines are durable
  kCpuCache,          // eADR / CXL GPF: visible stores are durable
  kNone,              // the user's override: no persistence domain is promised
};

// "unknown", "memory-controller", "cpu-cache", "none".
const char* persistence_domain_name(PersistenceDomain d);

struct DomainReport {
  PersistenceDomain domain = PersistenceDomain::kUnknown;
  // Where it was read: the sysfs file's path (as given, root prefix
  // included), "SOFTWRAP_PERSISTENCE", or "not found" (with why in detail).
  std::string source = "not found";
  std::string detail;  // e.g. "unreadable: <path>: Permission denied"
};

enum class PersistenceOverride : unsigned char { kAuto, kCpuCache, kMemoryController, kNone };

// Parses a SOFTWRAP_PERSISTENCE value (nullptr or "" mean auto).  Returns
// false and sets *err to a sentence naming the bad value and the accepted
// ones.
bool parse_persistence_override(const char* value, PersistenceOverride* out, std::string* err);

// The sysfs root: SOFTWRAP_SYSFS_ROOT, or "" (the real /sys).
std::string sysfs_root();

// Detection from a device number: is_char for a character device (device
// DAX: the file's st_rdev), else the block device holding a file (st_dev).
DomainReport detect_persistence_domain(bool is_char, unsigned major_no, unsigned minor_no,
                                       const std::string& root);

// Detection for an open file (fstat), under sysfs_root().
DomainReport detect_persistence_domain_fd(int fd);

// The override applied to detection: SOFTWRAP_PERSISTENCE read from the
// environment; fd < 0 skips detection (attached memory).  Returns false
// with *err set for a bad SOFTWRAP_PERSISTENCE value.
bool resolve_persistence_domain(int fd, DomainReport* out, std::string* err);

}  // namespace softwrap
