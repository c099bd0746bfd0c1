// heap_check_test_util.h — for tests: Allocator::check on a closed pool
// file, and how many allocations are live in it.
#ifndef SOFTWRAP_POOL_HEAP_CHECK_TEST_UTIL_H_
#define SOFTWRAP_POOL_HEAP_CHECK_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "pool/allocator.h"
#include "pool/pool.h"
#include "softwrap/softwrap.h"

namespace softwrap::testing {

// Opens the pool file read-only (no recovery), checks every heap
// invariant (a test failure if one breaks) and returns the live blocks and
// extents.
inline uint64_t checked_live_allocations(const std::string& path) {
  auto file = PoolFile::open(path);
  EXPECT_NE(file, nullptr) << sw_errormsg();
  if (file == nullptr) return 0;
  AllocatorStats st;
  EXPECT_EQ(Allocator::check(*file, &st), 0) << sw_errormsg();
  return st.allocated_blocks + st.allocated_extents;
}

}  // namespace softwrap::testing

#endif  // SOFTWRAP_POOL_HEAP_CHECK_TEST_UTIL_H_
