// medium.cc — choosing and naming media.
//
// The pool layer resolves the kind (sw_config, then SOFTWRAP_MEDIUM) and
// detects DAX (MAP_SYNC); this file only maps that choice to an object:
// AUTO means x86 when the mapping is DAX and msync otherwise.  Requests
// this process cannot honour (a bad SOFTWRAP_FLUSH, an empty scm-emu queue,
// an msync medium without a mapping) fail here with a message, before any
// byte is written.  A test may install a factory (set_medium_factory) that
// replaces the choice for every pool opened while it is installed.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/error.h"
#include "medium/cpu.h"
#include "medium/medium.h"
#include "medium/msync_medium.h"
#include "medium/scm_emu_medium.h"
#include "medium/x86_medium.h"

namespace softwrap {

void Medium::zero(void* dst, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t done = 0; done < n; done += sizeof kZeroPage) {
    write(d + done, kZeroPage, std::min(sizeof kZeroPage, n - done));
  }
}

namespace {
constexpr uint32_t kMaxWcEntries = 1u << 16;

std::atomic<MediumFactory> g_factory{nullptr};
std::atomic<void*> g_factory_ctx{nullptr};
}  // namespace

void set_medium_factory(MediumFactory f, void* ctx) {
  g_factory_ctx.store(ctx);
  g_factory.store(f);
}

std::unique_ptr<Medium> make_medium(const MediumOptions& opts, void* base, size_t len) {
  if (MediumFactory f = g_factory.load()) return f(opts, base, len, g_factory_ctx.load());
  const CpuFeatures& cpu = cpu_features();
  if (!cpu.flush_env_error.empty()) {
    set_error(SW_EINVAL, "%s", cpu.flush_env_error.c_str());
    return nullptr;
  }
  sw_medium_kind kind = opts.kind;
  if (kind == SW_MEDIUM_AUTO) kind = opts.is_dax ? SW_MEDIUM_X86 : SW_MEDIUM_MSYNC;
  switch (kind) {
    case SW_MEDIUM_X86:
      if (opts.cpu_cache.on) return std::make_unique<X86CpuCacheMedium>(cpu.flush, cpu.avx, opts.cpu_cache);
      return std::make_unique<X86Medium>(cpu.flush, cpu.avx);
    case SW_MEDIUM_MSYNC:
      if (base == nullptr || len == 0) {
        set_error(SW_EINVAL, "msync medium needs a mapping (base %p, length %zu)", base, len);
        return nullptr;
      }
    {
      // SOFTWRAP_MSYNC_SPAN=span|file: other ways to write the ranges back
      // (msync_medium.h), for the durable-commit benchmark's comparison.
      const char* env = getenv("SOFTWRAP_MSYNC_SPAN");
      MsyncMedium::Reach reach = MsyncMedium::Reach::kRanges;
      if (env != nullptr && strcmp(env, "span") == 0) reach = MsyncMedium::Reach::kSpan;
      if (env != nullptr && strcmp(env, "file") == 0) reach = MsyncMedium::Reach::kWholeFile;
      return std::make_unique<MsyncMedium>(base, len, cpu.flush, cpu.avx, opts.fd, reach);
    }
    case SW_MEDIUM_SCM_EMU: {
      if (opts.scm_wc_entries == 0 || opts.scm_wc_entries > kMaxWcEntries) {
        set_error(SW_EINVAL, "scm-emu: write-combining queue of %u entries; need 1..%u",
                  opts.scm_wc_entries, kMaxWcEntries);
        return nullptr;
      }
      ScmTiming t;
      t.write_ns = opts.scm_write_ns;
      t.serialize_ns = opts.scm_serialize_ns;
      t.entries = opts.scm_wc_entries;
      t.shared = opts.scm_shared_queue;
      return std::make_unique<ScmEmuMedium>(t, cpu.flush, cpu.avx);
    }
    default:
      set_error(SW_EINVAL, "unknown medium kind %d (expected auto, x86, msync or scm-emu)",
                static_cast<int>(opts.kind));
      return nullptr;
  }
}

const char* stream_form_name(StreamForm f) {
  return f == StreamForm::kTemporal ? "temporal" : "non-temporal";
}

bool parse_stream_form(const char* value, StreamForm* out, std::string* err) {
  if (value == nullptr || *value == 0) {
    *out = kDefaultCpuCacheStreams;
    return true;
  }
  for (StreamForm f : {StreamForm::kTemporal, StreamForm::kNonTemporal}) {
    if (std::strcmp(value, stream_form_name(f)) == 0) {
      *out = f;
      return true;
    }
  }
  *err = std::string("SOFTWRAP_CPU_CACHE_STREAMS=") + value + ": expected temporal or non-temporal";
  return false;
}

bool parse_cpu_cache_fences(const char* value, bool* keep, std::string* err) {
  if (value == nullptr || *value == 0 || std::strcmp(value, "elide") == 0) {
    *keep = false;
    return true;
  }
  if (std::strcmp(value, "keep") == 0) {
    *keep = true;
    return true;
  }
  *err = std::string("SOFTWRAP_CPU_CACHE_FENCES=") + value + ": expected elide or keep";
  return false;
}

bool read_cpu_cache_env(CpuCacheForm* out, std::string* err) {
  return parse_stream_form(getenv("SOFTWRAP_CPU_CACHE_STREAMS"), &out->streams, err) &&
         parse_cpu_cache_fences(getenv("SOFTWRAP_CPU_CACHE_FENCES"), &out->keep_ordering_fences, err);
}

bool parse_medium_kind(const std::string& s, sw_medium_kind* out) {
  for (sw_medium_kind k : {SW_MEDIUM_AUTO, SW_MEDIUM_X86, SW_MEDIUM_MSYNC, SW_MEDIUM_SCM_EMU}) {
    if (s == medium_kind_name(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

const char* medium_kind_name(sw_medium_kind k) {
  switch (k) {
    case SW_MEDIUM_AUTO: return "auto";
    case SW_MEDIUM_X86: return "x86";
    case SW_MEDIUM_MSYNC: return "msync";
    case SW_MEDIUM_SCM_EMU: return "scm-emu";
  }
  return "?";
}

}  // namespace softwrap
