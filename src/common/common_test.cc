// common_test.cc — the error slot, the checksum and the counters.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include <string>
#include <thread>

#include "common/counters.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/relaxed_copy.h"
#include "softwrap/softwrap.h"

namespace softwrap {
namespace {

TEST(Error, IsPerThreadAndCarriesCodeAndMessage) {
  clear_error();
  EXPECT_EQ(set_error(SW_ENOSPC, "heap full: %d bytes", 42), SW_ENOSPC);
  EXPECT_EQ(sw_errno(), SW_ENOSPC);
  EXPECT_STREQ(sw_errormsg(), "heap full: 42 bytes");
  std::thread([] {
    EXPECT_EQ(sw_errno(), 0);
    EXPECT_STREQ(sw_errormsg(), "");
  }).join();
  EXPECT_STREQ(sw_strerror(SW_ETOOBIG), "SW_ETOOBIG");
  errno = ENOENT;
  set_error_errno(SW_EIO, "open %s", "x");
  EXPECT_EQ(std::string(sw_errormsg()).rfind("open x: ", 0), 0u) << sw_errormsg();
}

TEST(Hash, IsStableAndSensitiveToEveryByte) {
  const char a[] = "softwrap frame";
  // Stability matters: the value is part of the on-media format.
  EXPECT_EQ(hash64(a, sizeof a), hash64(a, sizeof a));
  for (size_t i = 0; i < sizeof a; ++i) {
    char b[sizeof a];
    std::memcpy(b, a, sizeof a);
    b[i] ^= 1;
    EXPECT_NE(hash64(a, sizeof a), hash64(b, sizeof b)) << i;
  }
  EXPECT_NE(hash64(a, 8, 1), hash64(a, 8, 2));
  EXPECT_NE(hash_finish(0), 0u);
}

TEST(Counters, GapBucketsInvertTheHeadersLowerBounds) {
  for (unsigned b = 0; b + 1 < SW_GAP_BUCKETS; ++b) {
    EXPECT_LT(sw_gap_bucket_low(b), sw_gap_bucket_low(b + 1)) << b;
    EXPECT_EQ(gap_bucket(sw_gap_bucket_low(b)), b);
    EXPECT_EQ(gap_bucket(sw_gap_bucket_low(b + 1) - 1), b);
  }
  EXPECT_EQ(gap_bucket(~uint64_t{0}), SW_GAP_BUCKETS - 1u);
  EXPECT_EQ(gap_bucket(0), 0u);
  EXPECT_EQ(gap_bucket(200), gap_bucket(223));  // [192, 224)
  EXPECT_NE(gap_bucket(191), gap_bucket(192));
}

TEST(Counters, RemovableFencePointsRecordDistancesAfterTheFirst) {
  Counters c;
  c.removable_fence_point();
  sw_stats s{};
  c.add_to(&s);
  EXPECT_EQ(s.removable_gaps, 0u) << "the first point starts a chain";
  c.stores.add(10);
  c.fences[static_cast<int>(FenceKind::kLogOrder)].add(2);
  c.removable_fence_point();
  sw_stats t{};
  c.add_to(&t);
  EXPECT_EQ(t.removable_gaps, 1u);
  EXPECT_EQ(t.removable_gap_events[gap_bucket(12)], 1u);
  c.reset();
  c.removable_fence_point();
  sw_stats z{};
  c.add_to(&z);
  EXPECT_EQ(z.removable_gaps, 0u) << "a reset starts a new chain";
}

TEST(Counters, SumIntoStatsByKind) {
  Counters c;
  c.wraps.add(3);
  c.fences[static_cast<int>(FenceKind::kCommit)].add(2);
  c.fences[static_cast<int>(FenceKind::kLogOrder)].add(5);
  c.fences[static_cast<int>(FenceKind::kDataOrder)].add(4);
  c.fences[static_cast<int>(FenceKind::kOther)].add(1);
  c.fences_elided.add(9);
  sw_stats s{};
  c.add_to(&s);
  EXPECT_EQ(s.wraps, 3u);
  EXPECT_EQ(s.fences, 12u);
  EXPECT_EQ(s.fences_data, 4u);
  EXPECT_EQ(s.fences_other, 1u);
  EXPECT_EQ(s.fences_elided, 9u);
  EXPECT_EQ(s.fences_commit, 2u);
  EXPECT_EQ(s.fences_log, 5u);
  c.reset();
  sw_stats z{};
  c.add_to(&z);
  EXPECT_EQ(z.fences, 0u);
  CountersScope scope(&c);
  counters().stores.add();
  EXPECT_EQ(c.stores.get(), 1u);
}

TEST(RelaxedCopy, CopiesEveryShapeExactly) {
  unsigned char src[64], dst[80];
  for (int i = 0; i < 64; ++i) src[i] = static_cast<unsigned char>(i * 7 + 1);
  for (size_t so = 0; so < 8; ++so)
    for (size_t dof = 0; dof < 8; ++dof)
      for (size_t n = 0; n + so <= 64 && n <= 50; ++n) {
        std::memset(dst, 0xEE, sizeof dst);
        relaxed_copy(dst + dof, src + so, n);
        ASSERT_EQ(0, std::memcmp(dst + dof, src + so, n));
        ASSERT_EQ(dst[dof + n], 0xEE);
      }
}

}  // namespace
}  // namespace softwrap
