// attach.cc — runtime over caller memory (see attach.h).
#include "api/attach.h"

namespace softwrap {

sw_pool* open_attached(void* base, size_t size, const ResolvedConfig& cfg, bool format, const uint8_t* uuid) {
  std::unique_ptr<PoolFile> file = format ? PoolFile::format(base, size, cfg, uuid) : PoolFile::attach(base, size);
  if (!file) return nullptr;
  return assemble_pool(std::move(file), cfg);
}

}  // namespace softwrap
