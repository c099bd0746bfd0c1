// storage.h — what each design adds to a core's hardware, in bits (the
// Themis paper's section V-E counts its tail tags; we count every
// structure, for Themis and for themis-mc, docs/themis-sim.md).
//
//   Themis     a tail tag on every L1 line, a drainable-after pointer on
//              every WBB entry, the WBB's copy of headACK, and the WCB's
//              tail/head/headACK widened from the index bits x86 has to
//              the tail width.
//   themis-mc  nothing in the L1, the WBB or the LLC.  Each WCB entry
//              carries its number to the controller; the core's count of
//              entries and its count of ACKed ones are widened to the
//              number width; the wrap guard's four counters; at the
//              controller, per core, how many entries arrived, and on each
//              write-queue entry a number, the core it belongs to and a
//              held bit — the queue is shared, so a core's share is
//              1/cores of it.  (Each numbered writeback also carries
//              seq_bits + 1 bits on its way, and its core's id from the
//              LLC on: wires, not storage.)
#ifndef SOFTWRAP_THEMIS_STORAGE_H_
#define SOFTWRAP_THEMIS_STORAGE_H_

#include <string>
#include <vector>

#include "themis/config.h"

namespace softwrap::themis {

struct StoragePart {
  std::string structure;  // what is stored
  std::string where;      // on what
  unsigned entries;       // how many of them
  unsigned bits_each;
  unsigned shared_by;     // cores sharing the structure (1: per core)
  double bytes_per_core() const { return static_cast<double>(entries) * bits_each / 8.0 / shared_by; }
};

struct Storage {
  std::vector<StoragePart> parts;
  double total_bytes() const;
};

Storage themis_storage(const Config& c);
Storage mc_storage(const Config& c);

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_STORAGE_H_
