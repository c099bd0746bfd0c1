// strict.cc — misuse reports, the strict-mode abort and the word claims.
#include "api/strict.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace softwrap {

int misuse(bool strict, int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(code, fmt, ap);
  va_end(ap);
  if (strict) strict_abort(last_error_message());
  return code;
}

bool process_strict() {
  static const bool on = [] {
    const char* v = std::getenv("SOFTWRAP_STRICT");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return on;
}

bool WordClaims::claim(uint64_t off, uint64_t n, const void* owner, std::vector<uint64_t>* mine, uint64_t* word) {
  for (uint64_t w = off & ~uint64_t{7}; w < off + n; w += 8) {
    Shard& s = shards_[shard_of(w)];
    std::lock_guard<std::mutex> g(s.mu);
    const auto [it, inserted] = s.owner.try_emplace(w, owner);
    if (inserted) {
      mine->push_back(w);
    } else if (it->second != owner) {
      *word = w;
      return false;
    }
  }
  return true;
}

void WordClaims::release(const void* owner, std::vector<uint64_t>* mine) {
  for (uint64_t w : *mine) {
    Shard& s = shards_[shard_of(w)];
    std::lock_guard<std::mutex> g(s.mu);
    auto it = s.owner.find(w);
    if (it != s.owner.end() && it->second == owner) s.owner.erase(it);
  }
  mine->clear();
}

}  // namespace softwrap
