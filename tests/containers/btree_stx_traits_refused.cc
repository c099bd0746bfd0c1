// btree_stx_traits_refused.cc — must NOT compile: traits with STX's member
// names (selfverify, leafslots, innerslots) are refused by a static_assert
// instead of being silently ignored.  Compiled by the ctest
// btree_stx_traits_refused_* (tests/containers/CMakeLists.txt), which
// passes when the compiler prints the static_assert's message.
#include "softwrap/btree_set.hpp"

struct stx_style_traits {
  static const bool selfverify = true;
  static const int leafslots = 8;
  static const int innerslots = 8;
  static constexpr bool self_verify = false;
  static constexpr int leaf_slots = 8;
  static constexpr int inner_slots = 8;
};

int main() {
  softwrap::btree_set<unsigned, std::less<unsigned>, stx_style_traits>* s = nullptr;
  return s ? static_cast<int>(s->size()) : 0;
}
