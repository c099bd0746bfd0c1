// help_workload.cc — workloads in which committing wraps help retirement
// (help_workload.h).
//
//   help_words  4-14 word stores per wrap over 48 hot words (six lines) and
//               a few cold ones: each hot word sits in most tables, so the
//               table going home and the next one both hold it; 8% of the
//               wraps abort.
//   help_pages  sw_write ranges over 64-byte shadow pages and word stores
//               into the same bytes: a table's page phase and word phase
//               (a word entry shadows its table's page) are split between
//               the foreground and retirement.
//   help_wcl    help_words with write-combined logging: unchanged and
//               half-changed words among the stores.
//
// All three run on 64-entry tables retired from 8 entries (hard limit
// 48), so nearly every wrap switches tables and the previous one is rarely
// home by then.
#include "crashsim/help_workload.h"

namespace softwrap::crashsim {
namespace {

constexpr uint64_t kHot = 48;  // words 0..47 of the root: six lines

char* pick_word(Rng& rng, char* data) {
  // Three in four stores hit the hot words; the rest spread over the root.
  return data + (rng.chance(75) ? rng.below(kHot) : rng.below(kRootSize / 8)) * 8;
}

void run_help_words(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 4 + rng.below(11); k-- > 0;) d.store(pick_word(rng, data), rng.next(), 8);
    d.close_or_abort(rng, 8);
  }
}

void run_help_pages(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  unsigned char buf[160];
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 2 + rng.below(5); k-- > 0;) {
      if (rng.chance(40)) {
        const size_t n = 1 + rng.below(sizeof buf);
        for (size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(rng.next());
        d.write(data + rng.below(kHot * 8 + 256 - n), buf, n);  // over the hot words and a little past
      } else {
        d.store(pick_word(rng, data), rng.next(), 8);
      }
    }
    d.close_or_abort(rng, 8);
  }
}

void run_help_wcl(std::vector<Driver*>& dv, Rng& rng, uint32_t size) {
  Driver& d = *dv[0];
  char* data = root(d);
  for (uint32_t w = 0; w < size; ++w) {
    d.open();
    for (uint64_t k = 4 + rng.below(11); k-- > 0;) {
      char* word = pick_word(rng, data);
      const uint64_t cur = d.load64(word);
      switch (rng.below(4)) {
        case 0: d.store(word, cur, 8); break;                                                  // unchanged
        case 1: d.store(word, (cur & ~uint64_t{0xFFFFFFFF}) | (rng.next() >> 32), 8); break;  // low half
        case 2: d.store(word, (cur & 0xFFFFFFFF) | (rng.next() << 32), 8); break;             // high half
        default: d.store(word, rng.next(), 8);
      }
    }
    d.close_or_abort(rng, 8);
  }
}

Workload stepwise(Workload w) {
  w.retire_stepwise = true;
  return w;
}

}  // namespace

const std::vector<Workload>& help_workloads() {
  static const std::vector<Workload> w = {
      stepwise({"help_words",
                "4-14 word stores per wrap over 48 hot words, 64-entry tables retired a few chunks at a time: "
                "commits write the rest home",
                64, 8, 1024, 8, 1, own_root, run_help_words}),
      stepwise({"help_pages",
                "sw_write ranges over 64-byte shadow pages and word stores into them: page and word phases "
                "split between commits and retirement",
                64, 8, 64, 8, 1, own_root, run_help_pages}),
      stepwise({"help_wcl", "help_words with write-combined logging: unchanged and half-changed words", 64, 8, 1024,
                8, 1, own_root, run_help_wcl, nullptr, -1, SW_CONFIG_WCL}),
  };
  return w;
}

}  // namespace softwrap::crashsim
