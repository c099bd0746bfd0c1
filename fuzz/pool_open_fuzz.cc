// pool_open_fuzz.cc — libFuzzer target: open and recover a pool from
// arbitrary bytes.  Must never crash, hang or read out of bounds; a bad
// image must be refused with an error (SW_EFOREIGN, SW_ECORRUPT, ...) or
// opened into a usable pool.
//
// Approach.  Pools live in memory (PoolFile::attach via open_attached), 8
// MiB, 2 lanes of 64 KiB.  Two templates are built once: a softwrap pool
// with committed redo frames above the watermark (recovery must replay
// them) and an undo pool with an open wrap's records (recovery must roll
// them back), each snapshot as if the power had failed.  The first input
// byte picks the mode:
//   mode 0: the input replaces the start of an all-zero image (fully
//           arbitrary bytes; the header checksum is fixed up if bit 7 of
//           the mode byte is set, so layout fields get past it);
//   mode 1/2: the input is a list of patches (3-byte offset into the
//           first 256 KiB — header, meta, lane table, log — length byte,
//           bytes) applied to the redo/undo template, checksum fixed up
//           likewise.
// Every write the library makes goes through the medium, so a journaling
// trace medium (installed with set_medium_factory) lets each run be taken
// back exactly, without copying 8 MiB per input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "api/attach.h"
#include "common/hash.h"
#include "medium/trace_medium.h"
#include "pool/pool.h"
#include "pool/pool_format.h"
#include "softwrap/softwrap.h"

using namespace softwrap;

namespace {

constexpr size_t kSize = size_t{8} << 20;
constexpr size_t kPatchWindow = size_t{256} << 10;

struct State {
  char* image = nullptr;                  // the image under test
  std::vector<char> redo, undo, zero;     // templates (first kPatchWindow bytes differ)
  WriteJournal journal;
  ResolvedConfig cfg;
};

State* g = nullptr;

std::unique_ptr<Medium> journal_factory(const MediumOptions&, void* base, size_t len, void*) {
  return std::make_unique<TraceMedium>(base, len, nullptr, &g->journal);
}

ResolvedConfig config(sw_engine_kind e) {
  sw_config c{};
  c.engine = e;
  c.lanes = 2;
  c.lane_size = 64 << 10;
  c.alias_entries = 256;
  c.flags = SW_CONFIG_NO_RETIRE_THREAD;
  ResolvedConfig r;
  resolve_config(&c, &r);
  r.engine = e;
  return r;
}

// A pool image "crashed" with work for recovery in its log.
std::vector<char> make_template(sw_engine_kind e) {
  std::memset(g->image, 0, kSize);
  const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  sw_pool* p = open_attached(g->image, kSize, config(e), true, uuid);
  if (!p) std::abort();
  char* root = static_cast<char*>(sw_pool_root(p, 4096));
  for (int w = 0; w < 6; ++w) {
    sw_wrap_open(p);
    for (int i = 0; i < 5; ++i) sw_store64(p, root + ((w * 7 + i * 13) % 512) * 8, w * 100 + i);
    const char text[] = "a range written through sw_write";
    sw_write(p, root + 3000 + w * 20, text, sizeof text);
    void* obj = sw_pmalloc(p, 64 + w * 40);
    if (obj) sw_memset(p, obj, w, 64);
    sw_wrap_close(p);
  }
  sw_wrap_open(p);  // an open wrap: undo records in the lane
  for (int i = 0; i < 4; ++i) sw_store64(p, root + i * 64, 0xdead0000 + i);
  std::vector<char> t(g->image, g->image + kPatchWindow);  // the crash: no close
  std::vector<char> rest(g->image + kPatchWindow, g->image + kSize);
  sw_wrap_abort(p);
  sw_pool_close(p);
  // Everything past the window as it was at the crash.
  std::memcpy(g->image + kPatchWindow, rest.data(), rest.size());
  t.resize(kSize);
  std::memcpy(t.data() + kPatchWindow, rest.data(), rest.size());
  return t;
}

void fix_checksum(char* image) {
  PoolHeader h;
  std::memcpy(&h, image, sizeof h);
  h.checksum = hash64(&h, offsetof(PoolHeader, checksum));
  std::memcpy(image, &h, sizeof h);
}

void init() {
  g = new State;
  g->image = static_cast<char*>(std::aligned_alloc(4096, kSize));
  g->redo = make_template(SW_ENGINE_SOFTWRAP);
  g->undo = make_template(SW_ENGINE_UNDO);
  g->zero.assign(kPatchWindow, 0);
  std::memcpy(g->image, g->zero.data(), kPatchWindow);
  std::memset(g->image + kPatchWindow, 0, kSize - kPatchWindow);
  set_medium_factory(journal_factory, nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g) init();
  if (size == 0) return 0;
  const uint8_t mode = data[0] & 3, fix = data[0] & 0x80;
  ++data, --size;
  const std::vector<char>& base = mode == 1 ? g->redo : mode == 2 ? g->undo : g->zero;
  // The image: the template's window (the rest of the templates is shared
  // and never patched; mode 0 uses zeros beyond the input).
  std::memcpy(g->image, base.data(), kPatchWindow);
  if (mode == 1 || mode == 2) {
    std::memcpy(g->image + kPatchWindow, base.data() + kPatchWindow, kSize - kPatchWindow);
  } else {
    std::memset(g->image + kPatchWindow, 0, kSize - kPatchWindow);
  }
  if (mode == 0 || mode == 3) {
    std::memcpy(g->image, data, size < kPatchWindow ? size : kPatchWindow);
  } else {
    for (size_t i = 0; i + 4 <= size;) {
      const size_t off = (size_t{data[i]} | size_t{data[i + 1]} << 8 | size_t{data[i + 2]} << 16) % kPatchWindow;
      size_t n = data[i + 3];
      i += 4;
      if (n > size - i) n = size - i;
      if (n > kPatchWindow - off) n = kPatchWindow - off;
      std::memcpy(g->image + off, data + i, n);
      i += n;
    }
  }
  if (fix) fix_checksum(g->image);
  g->journal.clear();
  sw_pool* p = open_attached(g->image, kSize, config(mode == 2 ? SW_ENGINE_UNDO : SW_ENGINE_SOFTWRAP), false);
  if (p == nullptr) {
    if (sw_errno() == 0 || sw_errormsg()[0] == '\0') std::abort();  // refused without a clear error
    return 0;
  }
  // Opened: it must be usable.
  char* root = static_cast<char*>(sw_pool_root(p, 64));
  if (root) {
    uint64_t v = sw_load64(p, root);
    sw_wrap_open(p);
    sw_store64(p, root, v + 1);
    sw_wrap_close(p);
  }
  sw_pool_close(p);
  return 0;
}
