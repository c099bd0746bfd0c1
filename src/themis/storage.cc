// storage.cc — the bit counts of storage.h.
#include "themis/storage.h"

#include <bit>

namespace softwrap::themis {
namespace {

// Bits to tell n things apart.
unsigned log2_ceil(unsigned n) { return n > 1 ? static_cast<unsigned>(std::bit_width(n - 1)) : 0; }

}  // namespace

double Storage::total_bytes() const {
  double t = 0;
  for (const StoragePart& p : parts) t += p.bytes_per_core();
  return t;
}

Storage themis_storage(const Config& c) {
  const unsigned index = log2_ceil(c.wcb_entries);
  const unsigned l1_lines = c.l1_kib * 1024 / 64;
  return {{{"tail tag", "L1 line", l1_lines, c.tail_bits, 1},
           {"drainable-after pointer", "WBB entry", c.wbb_entries, c.tail_bits, 1},
           {"copy of headACK (hAck')", "WBB", 1, c.tail_bits, 1},
           {"tail, head, headACK beyond the index bits", "WCB", 3, c.tail_bits > index ? c.tail_bits - index : 0, 1}}};
}

Storage mc_storage(const Config& c) {
  const unsigned index = log2_ceil(c.wcb_entries);
  return {{{"sequence number", "WCB entry", c.wcb_entries, c.seq_bits, 1},
           {"count and ACKed count beyond the index bits", "WCB", 2, c.seq_bits > index ? c.seq_bits - index : 0, 1},
           {"wrap guard: unresolved numbered writebacks per generation", "core", 4, c.seq_guard_bits, 1},
           {"arrived up to", "PM controller, per core", 1, c.seq_bits, 1},
           {"number, core, held bit", "PM controller write-queue entry", c.pm_write_queue,
            c.seq_bits + log2_ceil(c.cores) + 1, c.cores}}};
}

}  // namespace softwrap::themis
