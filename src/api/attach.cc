// attach.cc — runtime over caller memory (see attach.h).
#include "api/attach.h"

namespace softwrap {

sw_pool* open_attached(void* base, size_t capacity, const ResolvedConfig& cfg, bool format, const uint8_t* uuid,
                       size_t size) {
  std::unique_ptr<PoolFile> file = format ? PoolFile::format(base, capacity, size ? size : capacity, cfg, uuid)
                                          : PoolFile::attach(base, capacity, cfg);
  if (!file) return nullptr;
  return assemble_pool(std::move(file), cfg);
}

}  // namespace softwrap
