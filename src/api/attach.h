// attach.h — internal: a full runtime (medium, recovery, engine, allocator)
// over caller memory instead of a file.
//
// The crash simulator runs its workloads on pools that live in a malloc'd
// buffer, so that applying and reverting crash images never touches a file
// system, and the pool-open fuzzer opens arbitrary bytes the same way.  Not
// part of the public API: the handle is an ordinary sw_pool (close it with
// sw_pool_close; the memory stays the caller's).
#ifndef SOFTWRAP_API_ATTACH_H_
#define SOFTWRAP_API_ATTACH_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "pool/pool.h"
#include "softwrap/softwrap.h"

namespace softwrap {

// Opens the pool in [base, base+capacity) (4096-aligned; the pool may grow
// up to capacity, within its maximum size): validates it, runs recovery
// and builds the engine `cfg` names.  With `format`, first lays out a new
// pool of `size` bytes there (0: capacity; the bytes must be zero; uuid as
// in PoolFile::format).  nullptr + thread error (SW_EFOREIGN, SW_ECORRUPT,
// SW_EVERSION, SW_EINVAL, ...) on failure; the memory may then have been
// partly recovered.
sw_pool* open_attached(void* base, size_t capacity, const ResolvedConfig& cfg, bool format,
                       const uint8_t* uuid = nullptr, size_t size = 0);

// Assembles the layers on an open PoolFile (c_api.cc; shared with create
// and open).
sw_pool* assemble_pool(std::unique_ptr<PoolFile> file, const ResolvedConfig& cfg);

}  // namespace softwrap

#endif  // SOFTWRAP_API_ATTACH_H_
