// medium_test.cc — tests of the medium layer: CPU detection, the factory,
// byte-exact write/stream/store at every alignment, event counting, the
// msync medium's page tracking on a real file, the scm-emu queue model, and
// the trace medium's optional details (loads, work between events).
//
// Timing assertions are lower bounds that the model guarantees by
// construction (completion stamps are Tw apart), so a slow or noisy machine
// cannot break them; the one upper bound (combining) takes the best of
// several trials and is five times the expected cost.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/counters.h"
#include "common/error.h"
#include "medium/cpu.h"
#include "medium/medium.h"
#include "medium/msync_medium.h"
#include "medium/scm_emu_medium.h"
#include "medium/trace_medium.h"
#include "medium/x86_medium.h"

namespace softwrap {
namespace {

constexpr unsigned char kSentinel = 0xA5;

uint64_t fence_count(const Counters& c, FenceKind k) { return c.fences[static_cast<int>(k)].get(); }

// ------------------------------------------------------------------ cpu

TEST(CpuFeaturesTest, DetectsBaselineAndPrefersClwb) {
  CpuFeatures f = detect_cpu_features(nullptr);
  EXPECT_TRUE(f.clflush);
  EXPECT_TRUE(f.sse2);
  EXPECT_TRUE(f.flush_env_error.empty());
  EXPECT_FALSE(f.flush_overridden);
  FlushInsn best = f.clwb ? FlushInsn::kClwb : f.clflushopt ? FlushInsn::kClflushopt : FlushInsn::kClflush;
  EXPECT_EQ(f.flush, best);
  EXPECT_TRUE(f.supports(f.flush));
}

TEST(CpuFeaturesTest, FlushOverride) {
  CpuFeatures f = detect_cpu_features("clflush");
  EXPECT_EQ(f.flush, FlushInsn::kClflush);
  EXPECT_TRUE(f.flush_overridden);
  EXPECT_TRUE(f.flush_env_error.empty());

  CpuFeatures bad = detect_cpu_features("clzap");
  EXPECT_FALSE(bad.flush_env_error.empty());
  EXPECT_FALSE(bad.flush_overridden);
  EXPECT_TRUE(bad.supports(bad.flush));

  CpuFeatures base = detect_cpu_features(nullptr);
  for (FlushInsn insn : {FlushInsn::kClwb, FlushInsn::kClflushopt}) {
    CpuFeatures o = detect_cpu_features(flush_insn_name(insn));
    if (base.supports(insn)) {
      EXPECT_EQ(o.flush, insn);
      EXPECT_TRUE(o.flush_env_error.empty());
    } else {
      EXPECT_FALSE(o.flush_env_error.empty()) << flush_insn_name(insn);
      EXPECT_EQ(o.flush, base.flush);
    }
  }
  EXPECT_TRUE(detect_cpu_features("").flush_env_error.empty());
}

TEST(CpuFeaturesTest, InsnNamesRoundTrip) {
  for (FlushInsn insn : {FlushInsn::kClwb, FlushInsn::kClflushopt, FlushInsn::kClflush}) {
    FlushInsn back;
    ASSERT_TRUE(parse_flush_insn(flush_insn_name(insn), &back));
    EXPECT_EQ(back, insn);
  }
  FlushInsn out;
  EXPECT_FALSE(parse_flush_insn("CLWB", &out));
}

// -------------------------------------------------------------- factory

TEST(MediumFactoryTest, KindNamesRoundTrip) {
  for (sw_medium_kind k : {SW_MEDIUM_AUTO, SW_MEDIUM_X86, SW_MEDIUM_MSYNC, SW_MEDIUM_SCM_EMU}) {
    sw_medium_kind back;
    ASSERT_TRUE(parse_medium_kind(medium_kind_name(k), &back));
    EXPECT_EQ(back, k);
  }
  sw_medium_kind out = SW_MEDIUM_X86;
  EXPECT_FALSE(parse_medium_kind("scm", &out));
  EXPECT_FALSE(parse_medium_kind("", &out));
  EXPECT_EQ(out, SW_MEDIUM_X86);
}

TEST(MediumFactoryTest, AutoFollowsDaxAndPropertiesAreDeclared) {
  alignas(64) static char region[4096];
  const CpuFeatures& cpu = cpu_features();
  MediumOptions o;
  o.is_dax = true;
  auto dax = make_medium(o, region, sizeof region);
  ASSERT_NE(dax, nullptr);
  EXPECT_STREQ(dax->properties().name, "x86");
  EXPECT_STREQ(dax->properties().flush_insn, flush_insn_name(cpu.flush));
  EXPECT_FALSE(dax->properties().auto_flush);
  EXPECT_FALSE(dax->properties().emulated_timing);
  EXPECT_EQ(dax->properties().atomic_width, 8u);

  o.is_dax = false;
  auto paged = make_medium(o, region, sizeof region);
  ASSERT_NE(paged, nullptr);
  EXPECT_STREQ(paged->properties().name, "msync");
  EXPECT_FALSE(paged->properties().emulated_timing);

  o.kind = SW_MEDIUM_SCM_EMU;
  auto emu = make_medium(o, region, sizeof region);
  ASSERT_NE(emu, nullptr);
  EXPECT_STREQ(emu->properties().name, "scm-emu");
  EXPECT_TRUE(emu->properties().emulated_timing);
  EXPECT_FALSE(emu->properties().auto_flush);

  o.kind = SW_MEDIUM_X86;
  auto forced = make_medium(o, region, sizeof region);
  ASSERT_NE(forced, nullptr);
  EXPECT_STREQ(forced->properties().name, "x86");
}

TEST(MediumFactoryTest, RefusesBadRequests) {
  alignas(64) static char region[4096];
  MediumOptions o;
  o.kind = SW_MEDIUM_SCM_EMU;
  o.scm_wc_entries = 0;
  clear_error();
  EXPECT_EQ(make_medium(o, region, sizeof region), nullptr);
  EXPECT_EQ(last_error(), SW_EINVAL);
  EXPECT_NE(std::string(last_error_message()).find("queue"), std::string::npos);

  o = MediumOptions{};
  o.kind = SW_MEDIUM_MSYNC;
  clear_error();
  EXPECT_EQ(make_medium(o, nullptr, 0), nullptr);
  EXPECT_EQ(last_error(), SW_EINVAL);
}

// ---------------------------------------------------- byte correctness

struct alignas(64) Arena {
  unsigned char bytes[512];
};

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(x >> 24);
    if (b == kSentinel) b = 0;
  }
  return v;
}

enum class Op { kWrite, kWriteFlush, kStream };

// For every size 1..300 at every offset 0..63 within a line (and a source
// misaligned differently), the destination holds exactly the source bytes
// after the fence and no byte outside the range changed.
void check_all_shapes(Medium& m, Op op) {
  Arena arena;
  auto src = pattern(sizeof arena.bytes, static_cast<unsigned>(op) + 7);
  for (size_t off = 0; off < kCacheLine; ++off) {
    for (size_t n = 1; n <= 300; ++n) {
      memset(arena.bytes, kSentinel, sizeof arena.bytes);
      const unsigned char* s = src.data() + (off * 7 + n) % 64;
      unsigned char* d = arena.bytes + 64 + off;
      switch (op) {
        case Op::kWrite: m.write(d, s, n); break;
        case Op::kWriteFlush: m.write_flush(d, s, n); break;
        case Op::kStream: m.stream(d, s, n); break;
      }
      m.fence(FenceKind::kOther);
      ASSERT_EQ(memcmp(d, s, n), 0) << "off " << off << " n " << n;
      for (size_t i = 0; i < sizeof arena.bytes; ++i) {
        if (arena.bytes + i >= d && arena.bytes + i < d + n) continue;
        ASSERT_EQ(arena.bytes[i], kSentinel) << "off " << off << " n " << n << " byte " << i;
      }
    }
  }
}

struct X86Config {
  FlushInsn insn;
  bool avx;
};

std::vector<X86Config> supported_configs() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<X86Config> out;
  for (FlushInsn insn : {FlushInsn::kClwb, FlushInsn::kClflushopt, FlushInsn::kClflush}) {
    if (!cpu.supports(insn)) continue;
    out.push_back({insn, false});
    if (cpu.avx) out.push_back({insn, true});
  }
  return out;
}

TEST(X86MediumTest, StreamEveryShapeEveryInstruction) {
  Counters c;
  CountersScope scope(&c);
  for (const X86Config& cfg : supported_configs()) {
    SCOPED_TRACE(std::string(flush_insn_name(cfg.insn)) + (cfg.avx ? " avx" : " sse2"));
    X86Medium m(cfg.insn, cfg.avx);
    EXPECT_STREQ(m.properties().flush_insn, flush_insn_name(cfg.insn));
    check_all_shapes(m, Op::kStream);
  }
}

TEST(X86MediumTest, WriteAndWriteFlushEveryShape) {
  Counters c;
  CountersScope scope(&c);
  X86Medium m;
  check_all_shapes(m, Op::kWrite);
  check_all_shapes(m, Op::kWriteFlush);
}

TEST(X86MediumTest, LargeUnalignedStream) {
  X86Medium m;
  std::vector<unsigned char> dst(1 << 16, kSentinel);
  auto src = pattern(dst.size(), 3);
  size_t n = dst.size() - 200;
  m.stream(dst.data() + 37, src.data() + 5, n);
  m.fence(FenceKind::kOther);
  EXPECT_EQ(memcmp(dst.data() + 37, src.data() + 5, n), 0);
  EXPECT_EQ(dst[36], kSentinel);
  EXPECT_EQ(dst[37 + n], kSentinel);
}

TEST(X86MediumTest, StoreWritesExactlyItsWidth) {
  X86Medium m;
  alignas(8) unsigned char buf[32];
  for (unsigned size : {1u, 2u, 4u, 8u}) {
    memset(buf, kSentinel, sizeof buf);
    m.store(buf + 8, 0x0102030405060708ull, size);
    uint64_t expect = 0x0102030405060708ull;
    EXPECT_EQ(memcmp(buf + 8, &expect, size), 0) << size;
    for (size_t i = 0; i < sizeof buf; ++i) {
      if (i >= 8 && i < 8 + size) continue;
      EXPECT_EQ(buf[i], kSentinel) << "size " << size << " byte " << i;
    }
  }
  uint64_t word = 0;
  m.store(&word, ~0ull, 8);
  EXPECT_EQ(word, ~0ull);
}

TEST(MediumTest, EveryKindMovesBytesExactly) {
  void* map = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  for (sw_medium_kind k : {SW_MEDIUM_X86, SW_MEDIUM_MSYNC, SW_MEDIUM_SCM_EMU}) {
    SCOPED_TRACE(medium_kind_name(k));
    MediumOptions o;
    o.kind = k;
    o.scm_write_ns = 0;
    o.scm_serialize_ns = 0;
    auto m = make_medium(o, map, 1 << 16);
    ASSERT_NE(m, nullptr);
    auto src = pattern(4096, 11);
    auto* d = static_cast<unsigned char*>(map);
    for (size_t off : {size_t{0}, size_t{3}, size_t{61}}) {
      memset(d, kSentinel, 8192);
      m->stream(d + off, src.data(), 1000);
      m->write_flush(d + 2048 + off, src.data() + 1000, 777);
      m->store(d + 4096, 0x1122334455667788ull, 8);
      m->flush(d + 4096, 8);
      m->fence(FenceKind::kCommit);
      m->drain();
      EXPECT_EQ(memcmp(d + off, src.data(), 1000), 0);
      EXPECT_EQ(memcmp(d + 2048 + off, src.data() + 1000, 777), 0);
      uint64_t v;
      memcpy(&v, d + 4096, 8);
      EXPECT_EQ(v, 0x1122334455667788ull);
      EXPECT_EQ(d[off + 1000], kSentinel);
    }
  }
  munmap(map, 1 << 16);
}

// ------------------------------------------------------------- counters

TEST(MediumCountersTest, FlushesStreamsAndFencesAreCountedByKind) {
  Counters c;
  CountersScope scope(&c);
  X86Medium m;
  Arena a;
  auto src = pattern(sizeof a.bytes, 1);
  unsigned char* line = a.bytes + 64;

  m.write(line, src.data(), 100);
  m.store(line, 1, 8);
  EXPECT_EQ(c.flushes.get(), 0u);
  EXPECT_EQ(c.home_writes.get(), 0u);  // writes are the engines' to count

  m.flush(line, 0);
  EXPECT_EQ(c.flushes.get(), 0u);
  m.flush(line, 1);
  EXPECT_EQ(c.flushes.get(), 1u);
  m.flush(line, 64);
  EXPECT_EQ(c.flushes.get(), 2u);
  m.flush(line, 65);
  EXPECT_EQ(c.flushes.get(), 4u);
  m.flush(line + 63, 2);
  EXPECT_EQ(c.flushes.get(), 6u);

  m.stream(line, src.data(), 64);
  EXPECT_EQ(c.streamed_lines.get(), 1u);
  m.stream(line + 5, src.data(), 1);
  EXPECT_EQ(c.streamed_lines.get(), 2u);
  m.stream(line - 4, src.data(), 100);  // touches 3 lines
  EXPECT_EQ(c.streamed_lines.get(), 5u);
  m.stream(line, src.data(), 0);
  EXPECT_EQ(c.streamed_lines.get(), 5u);
  EXPECT_EQ(c.flushes.get(), 6u);  // partial words of streams are not flushes

  m.fence(FenceKind::kCommit);
  m.fence(FenceKind::kCommit);
  m.fence(FenceKind::kLogOrder);
  m.fence(FenceKind::kRetire);
  EXPECT_EQ(fence_count(c, FenceKind::kCommit), 2u);
  EXPECT_EQ(fence_count(c, FenceKind::kLogOrder), 1u);
  EXPECT_EQ(fence_count(c, FenceKind::kRetire), 1u);
  EXPECT_EQ(fence_count(c, FenceKind::kOther), 0u);
  m.drain();
  EXPECT_EQ(fence_count(c, FenceKind::kOther), 1u);
}

// The cpu-cache form (persistent caches: eADR, CXL): no flush is issued or
// counted, streams write the same bytes, and only the fences its rules keep
// are issued; the others are counted as elided.  Each expectation below
// fails if its rule in CpuCacheForm::issues or X86Medium is removed.
TEST(MediumCountersTest, CpuCacheFormIssuesNoFlushesAndOnlyTheFencesItNeeds) {
  for (StreamForm f : {StreamForm::kTemporal, StreamForm::kNonTemporal}) {
    SCOPED_TRACE(stream_form_name(f));
    Counters c;
    CountersScope scope(&c);
    CpuCacheForm cc;
    cc.on = true;
    cc.streams = f;
    cc.drop_needed_fences = true;  // ignored by a real medium
    X86CpuCacheMedium m(cpu_features().flush, cpu_features().avx, cc);
    EXPECT_STREQ(m.properties().flush_insn, "none");
    EXPECT_TRUE(m.properties().auto_flush);
    EXPECT_EQ(m.properties().themis_rule, f == StreamForm::kTemporal);
    EXPECT_FALSE(m.cpu_cache().drop_needed_fences);
    Arena a;
    auto src = pattern(sizeof a.bytes, 5);
    m.flush(a.bytes, 256);
    m.write_flush(a.bytes, src.data(), 100);
    EXPECT_EQ(c.flushes.get(), 0u);
    m.stream(a.bytes + 3, src.data(), 300);
    EXPECT_EQ(std::memcmp(a.bytes + 3, src.data(), 300), 0);
    EXPECT_EQ(c.streamed_lines.get(), 5u);
    const bool nt = f == StreamForm::kNonTemporal;
    for (FenceKind k : {FenceKind::kLogOrder, FenceKind::kDataOrder, FenceKind::kRetire}) {
      m.fence(k);
      EXPECT_EQ(fence_count(c, k), nt ? 1u : 0u);
    }
    EXPECT_EQ(c.fences_elided.get(), nt ? 0u : 3u);
    m.fence(FenceKind::kCommit);
    m.fence(FenceKind::kOther);
    m.drain();
    EXPECT_EQ(fence_count(c, FenceKind::kCommit), 1u);
    EXPECT_EQ(fence_count(c, FenceKind::kOther), 2u);
  }
  // The crash simulator's control drops the ordering fences the
  // non-temporal form needs (not kCommit or kOther).
  CpuCacheForm drop;
  drop.on = true;
  drop.streams = StreamForm::kNonTemporal;
  drop.drop_needed_fences = true;
  EXPECT_TRUE(drop.issues(FenceKind::kCommit));
  EXPECT_FALSE(drop.issues(FenceKind::kLogOrder));
  EXPECT_FALSE(drop.issues(FenceKind::kDataOrder));
  EXPECT_TRUE(drop.issues(FenceKind::kOther));
  // Kept on request (SOFTWRAP_CPU_CACHE_FENCES=keep).
  CpuCacheForm keep;
  keep.on = true;
  keep.keep_ordering_fences = true;
  EXPECT_TRUE(keep.issues(FenceKind::kLogOrder));
  EXPECT_TRUE(keep.issues(FenceKind::kRetire));
  bool k = true;
  std::string err;
  EXPECT_TRUE(parse_cpu_cache_fences(nullptr, &k, &err));
  EXPECT_FALSE(k);
  EXPECT_TRUE(parse_cpu_cache_fences("keep", &k, &err));
  EXPECT_TRUE(k);
  EXPECT_TRUE(parse_cpu_cache_fences("elide", &k, &err));
  EXPECT_FALSE(k);
  EXPECT_FALSE(parse_cpu_cache_fences("some", &k, &err));
  EXPECT_NE(err.find("SOFTWRAP_CPU_CACHE_FENCES"), std::string::npos) << err;
  // Off: every fence.
  CpuCacheForm off;
  for (int k = 0; k < static_cast<int>(FenceKind::kCount); ++k) EXPECT_TRUE(off.issues(static_cast<FenceKind>(k)));
}

TEST(MediumFactoryTest, CpuCacheFormOnlyOnX86AndStreamFormsParse) {
  alignas(64) static char region[4096];
  MediumOptions o;
  o.kind = SW_MEDIUM_X86;
  o.cpu_cache.on = true;
  auto m = make_medium(o, region, sizeof region);
  ASSERT_NE(m, nullptr);
  EXPECT_STREQ(m->properties().flush_insn, "none");
  EXPECT_TRUE(m->properties().auto_flush);
  o.kind = SW_MEDIUM_MSYNC;  // a page cache is not persistent because the caches are
  auto ms = make_medium(o, region, sizeof region);
  ASSERT_NE(ms, nullptr);
  EXPECT_FALSE(ms->properties().auto_flush);
  o.kind = SW_MEDIUM_SCM_EMU;  // emulates an ADR device
  auto emu = make_medium(o, region, sizeof region);
  ASSERT_NE(emu, nullptr);
  EXPECT_FALSE(emu->properties().auto_flush);

  StreamForm f = StreamForm::kNonTemporal;
  std::string err;
  EXPECT_TRUE(parse_stream_form(nullptr, &f, &err));
  EXPECT_EQ(f, kDefaultCpuCacheStreams);
  EXPECT_TRUE(parse_stream_form("non-temporal", &f, &err));
  EXPECT_EQ(f, StreamForm::kNonTemporal);
  EXPECT_TRUE(parse_stream_form("temporal", &f, &err));
  EXPECT_EQ(f, StreamForm::kTemporal);
  EXPECT_FALSE(parse_stream_form("nt", &f, &err));
  EXPECT_NE(err.find("SOFTWRAP_CPU_CACHE_STREAMS"), std::string::npos) << err;
  EXPECT_STREQ(stream_form_name(StreamForm::kNonTemporal), "non-temporal");
}

// The trace medium's cpu-cache form records what the x86 one issues: no
// flushes, temporal streams as stores, and no elided fence.
TEST(TraceMediumTest, CpuCacheFormRecordsWhatItIssues) {
  for (StreamForm f : {StreamForm::kTemporal, StreamForm::kNonTemporal}) {
    alignas(64) static unsigned char img[512];
    Trace t;
    TraceMedium m(img, sizeof img, &t, nullptr);
    CpuCacheForm cc;
    cc.on = true;
    cc.streams = f;
    m.set_cpu_cache(cc);
    const uint64_t v[2] = {1, 2};
    t.start();
    m.stream(img + 64, v, 16);
    m.flush(img + 64, 16);
    m.fence(FenceKind::kLogOrder);
    m.fence(FenceKind::kCommit);
    t.stop();
    const auto& ev = t.events();
    const bool nt = f == StreamForm::kNonTemporal;
    ASSERT_EQ(ev.size(), nt ? 4u : 3u);
    EXPECT_EQ(ev[0].kind, nt ? TraceKind::kStream : TraceKind::kStore);
    EXPECT_EQ(ev[1].kind, nt ? TraceKind::kStream : TraceKind::kStore);
    EXPECT_EQ(ev[2].kind, TraceKind::kFence);
    EXPECT_EQ(ev.back().kind, TraceKind::kFence);
    EXPECT_EQ(ev.back().aux, static_cast<uint32_t>(FenceKind::kCommit));
  }
}

TEST(MediumCountersTest, DerivedMediaCountLikeX86) {
  void* map = mmap(nullptr, 1 << 14, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  for (sw_medium_kind k : {SW_MEDIUM_MSYNC, SW_MEDIUM_SCM_EMU}) {
    SCOPED_TRACE(medium_kind_name(k));
    Counters c;
    CountersScope scope(&c);
    MediumOptions o;
    o.kind = k;
    o.scm_write_ns = 0;
    o.scm_serialize_ns = 0;
    auto m = make_medium(o, map, 1 << 14);
    ASSERT_NE(m, nullptr);
    auto* d = static_cast<char*>(map);
    m->flush(d + 10, 100);                 // 2 lines
    m->stream(d + 256, d + 4096, 128);  // 2 lines
    m->fence(FenceKind::kLogOrder);
    m->drain();
    EXPECT_EQ(c.flushes.get(), 2u);
    EXPECT_EQ(c.streamed_lines.get(), 2u);
    EXPECT_EQ(fence_count(c, FenceKind::kLogOrder), 1u);
    EXPECT_EQ(fence_count(c, FenceKind::kOther), 1u);
  }
  munmap(map, 1 << 14);
}

// ---------------------------------------------------------------- msync

class MsyncMediumTest : public ::testing::Test {
 protected:
  static constexpr size_t kPages = 160;  // >= 3 stages of 128 KiB (LargeStreams...)

  void SetUp() override {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    len_ = kPages * page_;
    char tmpl[] = "/tmp/softwrap_medium_test_XXXXXX";
    fd_ = mkstemp(tmpl);
    ASSERT_GE(fd_, 0);
    unlink(tmpl);
    ASSERT_EQ(ftruncate(fd_, static_cast<off_t>(len_)), 0);
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    ASSERT_NE(p, MAP_FAILED);
    base_ = static_cast<char*>(p);
  }

  void TearDown() override {
    if (base_ != nullptr) munmap(base_, len_);
    if (fd_ >= 0) close(fd_);
  }

  std::unique_ptr<MsyncMedium> make() { return std::make_unique<MsyncMedium>(base_, len_); }

  size_t page_ = 0;
  size_t len_ = 0;
  int fd_ = -1;
  char* base_ = nullptr;
};

TEST_F(MsyncMediumTest, FenceSyncsExactlyTheMergedDirtyPages) {
  auto m = make();
  auto src = pattern(3 * page_, 5);
  m->write_flush(base_ + 100, src.data(), 200);                  // page 0
  m->stream(base_ + page_ + 8, src.data() + 300, 512);           // page 1, adjacent
  m->write_flush(base_ + 10 * page_ + 5, src.data() + 900, 64);  // page 10
  EXPECT_EQ(m->msync_calls(), 0u);
  m->fence(FenceKind::kCommit);
  EXPECT_EQ(m->msync_calls(), 2u);
  EXPECT_EQ(m->msync_bytes(), 3 * page_);

  std::vector<char> back(len_);
  ASSERT_EQ(pread(fd_, back.data(), len_, 0), static_cast<ssize_t>(len_));
  EXPECT_EQ(memcmp(back.data() + 100, src.data(), 200), 0);
  EXPECT_EQ(memcmp(back.data() + page_ + 8, src.data() + 300, 512), 0);
  EXPECT_EQ(memcmp(back.data() + 10 * page_ + 5, src.data() + 900, 64), 0);

  m->fence(FenceKind::kCommit);  // nothing new: no system call
  EXPECT_EQ(m->msync_calls(), 2u);

  m->drain();
  EXPECT_EQ(m->msync_calls(), 3u);
  EXPECT_EQ(m->msync_bytes(), 3 * page_ + len_);
}

// A full list makes its two closest ranges one; nothing is synced before
// the fence.  Pages 0, 4, ..., 124 (gaps of 3 pages) and page 42 (gaps of
// 1 page to 40 and to 44): 33 ranges, so page 42 joins one neighbour (3
// pages) and the fence syncs 32 ranges, 34 pages, all of them on the file.
TEST_F(MsyncMediumTest, AFullRangeListMergesItsClosestRanges) {
  static_assert(MsyncMedium::kMaxRanges == 32, "the layout below assumes 32 ranges");
  auto m = make();
  std::vector<size_t> pages;
  for (size_t i = 0; i < MsyncMedium::kMaxRanges; ++i) pages.push_back(4 * i);
  pages.push_back(42);
  for (size_t p : pages) {
    const char byte = static_cast<char>(p + 1);
    m->write_flush(base_ + p * page_ + 7, &byte, 1);
  }
  EXPECT_EQ(m->msync_calls(), 0u);  // no write-back before the fence
  m->fence(FenceKind::kOther);
  EXPECT_EQ(m->msync_calls(), MsyncMedium::kMaxRanges);
  EXPECT_EQ(m->msync_bytes(), (MsyncMedium::kMaxRanges + 2u) * page_);
  for (size_t p : pages) {
    char back = 0;
    ASSERT_EQ(pread(fd_, &back, 1, static_cast<off_t>(p * page_ + 7)), 1);
    EXPECT_EQ(back, static_cast<char>(p + 1)) << "page " << p;
  }
}

TEST_F(MsyncMediumTest, DirtyPagesArePerThread) {
  auto m = make();
  char byte = 7;
  m->write_flush(base_, &byte, 1);
  std::thread other([&] { m->fence(FenceKind::kCommit); });
  other.join();
  EXPECT_EQ(m->msync_calls(), 0u);  // the other thread had flushed nothing
  std::thread flusher([&] {
    m->write_flush(base_ + 5 * page_, &byte, 1);
    m->fence(FenceKind::kCommit);
  });
  flusher.join();
  EXPECT_EQ(m->msync_calls(), 1u);
  m->fence(FenceKind::kCommit);
  EXPECT_EQ(m->msync_calls(), 2u);
  EXPECT_EQ(m->msync_bytes(), 2 * page_);
}

TEST_F(MsyncMediumTest, ADestroyedMediumLeavesNoPendingPages) {
  char byte = 9;
  {
    auto first = make();
    first->write_flush(base_, &byte, 1);  // never fenced
  }
  auto second = make();
  second->fence(FenceKind::kCommit);
  EXPECT_EQ(second->msync_calls(), 0u);
  second->write_flush(base_ + 3 * page_, &byte, 1);
  second->fence(FenceKind::kCommit);
  EXPECT_EQ(second->msync_calls(), 1u);
  EXPECT_EQ(second->msync_bytes(), page_);
}

TEST_F(MsyncMediumTest, FlushesOutsideTheMappingAreNotSynced) {
  auto m = make();
  alignas(64) char outside[64] = {};
  m->flush(outside, sizeof outside);
  m->fence(FenceKind::kOther);
  EXPECT_EQ(m->msync_calls(), 0u);
}

// With the file's descriptor (as every pool has): one msync per fence,
// whatever the number of ranges — the device is flushed once — and every
// range on the file.
TEST_F(MsyncMediumTest, WithADescriptorAFenceIsOneMsyncForEveryRange) {
  MsyncMedium m(base_, len_, cpu_features().flush, cpu_features().avx, fd_);
  if (!m.uses_file_range()) GTEST_SKIP() << "the test file is not on ext4 or XFS: sync_file_range is not used";
  auto src = pattern(3 * page_, 6);
  m.write_flush(base_ + 100, src.data(), 200);                  // page 0
  m.stream(base_ + 20 * page_ + 64, src.data() + 300, 512);     // page 20
  m.write_flush(base_ + 40 * page_ + 5, src.data() + 900, 64);  // page 40
  m.fence(FenceKind::kCommit);
  EXPECT_EQ(m.msync_calls(), 1u);
  std::vector<char> back(len_);
  ASSERT_EQ(pread(fd_, back.data(), len_, 0), static_cast<ssize_t>(len_));
  EXPECT_EQ(memcmp(back.data() + 100, src.data(), 200), 0);
  EXPECT_EQ(memcmp(back.data() + 20 * page_ + 64, src.data() + 300, 512), 0);
  EXPECT_EQ(memcmp(back.data() + 40 * page_ + 5, src.data() + 900, 64), 0);
  m.fence(FenceKind::kCommit);  // nothing new: no system call
  EXPECT_EQ(m.msync_calls(), 1u);
}

// With a descriptor, a fence whose list filled up is still one msync, and
// every page of every range reaches the file.
TEST_F(MsyncMediumTest, WithADescriptorAFullListIsStillOneMsync) {
  MsyncMedium m(base_, len_, cpu_features().flush, cpu_features().avx, fd_);
  if (!m.uses_file_range()) GTEST_SKIP() << "the test file is not on ext4 or XFS: sync_file_range is not used";
  for (size_t i = 0; i < 2 * MsyncMedium::kMaxRanges; ++i) {
    const char byte = static_cast<char>(i + 1);
    m.write_flush(base_ + 2 * i * page_ + 9, &byte, 1);
  }
  EXPECT_EQ(m.msync_calls(), 0u);
  m.fence(FenceKind::kOther);
  EXPECT_EQ(m.msync_calls(), 1u);
  for (size_t i = 0; i < 2 * MsyncMedium::kMaxRanges; ++i) {
    char back = 0;
    ASSERT_EQ(pread(fd_, &back, 1, static_cast<off_t>(2 * i * page_ + 9)), 1);
    EXPECT_EQ(back, static_cast<char>(i + 1)) << "page " << 2 * i;
  }
}

// With the file's descriptor, streams go to the file with pwrite, a run
// of contiguous ones at a time, and never through the mapping: a run waits
// in the thread's stage until a stream that does not continue it (the run
// is written then), a fence (written, then synced) or publish_streams
// (written, not synced).  Checked through pread and the mapping: the page
// cache is one, so both see a written run.
TEST_F(MsyncMediumTest, StreamsReachTheFileAsRunsAtTheFence) {
  MsyncMedium m(base_, len_, cpu_features().flush, cpu_features().avx, fd_);
  if (!m.uses_file_range()) GTEST_SKIP() << "the test file is not on ext4 or XFS: streams are stored";
  auto src = pattern(8 * kCacheLine, 11);
  auto on_file = [&](size_t off, const unsigned char* want, size_t n) {
    std::vector<char> back(n);
    EXPECT_EQ(pread(fd_, back.data(), n, static_cast<off_t>(off)), static_cast<ssize_t>(n));
    return memcmp(back.data(), want, n) == 0 && memcmp(base_ + off, want, n) == 0;
  };
  // One run of three lines at page 2: held back until the fence.
  for (size_t i = 0; i < 3; ++i) m.stream(base_ + 2 * page_ + i * kCacheLine, src.data() + i * kCacheLine, kCacheLine);
  EXPECT_FALSE(on_file(2 * page_, src.data(), 3 * kCacheLine)) << "held back: not yet written";
  m.fence(FenceKind::kCommit);
  EXPECT_TRUE(on_file(2 * page_, src.data(), 3 * kCacheLine));
  EXPECT_EQ(m.msync_calls(), 1u);
  // A stream elsewhere writes the run before it (no sync); the fence both.
  m.stream(base_ + 9 * page_, src.data() + 3 * kCacheLine, kCacheLine);
  m.stream(base_ + 30 * page_ + 64, src.data() + 4 * kCacheLine, 2 * kCacheLine);
  EXPECT_TRUE(on_file(9 * page_, src.data() + 3 * kCacheLine, kCacheLine));
  EXPECT_FALSE(on_file(30 * page_ + 64, src.data() + 4 * kCacheLine, 2 * kCacheLine));
  EXPECT_EQ(m.msync_calls(), 1u);
  m.fence(FenceKind::kCommit);
  EXPECT_TRUE(on_file(30 * page_ + 64, src.data() + 4 * kCacheLine, 2 * kCacheLine));
  EXPECT_EQ(m.msync_calls(), 2u);
  // publish_streams: written, not synced; the next fence still syncs it.
  m.stream(base_ + 50 * page_, src.data() + 6 * kCacheLine, 2 * kCacheLine);
  m.publish_streams();
  EXPECT_TRUE(on_file(50 * page_, src.data() + 6 * kCacheLine, 2 * kCacheLine));
  EXPECT_EQ(m.msync_calls(), 2u);
  m.fence(FenceKind::kCommit);
  EXPECT_EQ(m.msync_calls(), 3u);
}

// A stream larger than the stage is written at once; one that does not fit
// beside the run writes the run first; both are on the file after the
// fence; and a thread's stage is its own (another thread's fence does not
// write it).
TEST_F(MsyncMediumTest, LargeStreamsAndOtherThreadsStages) {
  MsyncMedium m(base_, len_, cpu_features().flush, cpu_features().avx, fd_);
  if (!m.uses_file_range()) GTEST_SKIP() << "the test file is not on ext4 or XFS: streams are stored";
  ASSERT_GE(len_, 3 * MsyncMedium::kStageBytes);
  auto big = pattern(MsyncMedium::kStageBytes + page_, 21);
  m.stream(base_, big.data(), big.size());
  EXPECT_EQ(memcmp(base_, big.data(), big.size()), 0) << "larger than the stage: written at once";
  const size_t at = 2 * MsyncMedium::kStageBytes;
  auto half = pattern(MsyncMedium::kStageBytes / 2 + page_, 22);
  m.stream(base_ + at, half.data(), half.size());
  m.stream(base_ + at + half.size(), half.data(), half.size());  // does not fit beside: the first is written
  EXPECT_EQ(memcmp(base_ + at, half.data(), half.size()), 0);
  std::thread other([&] {
    char byte = 5;
    m.write_flush(base_ + page_ / 2, &byte, 1);
    m.fence(FenceKind::kCommit);
  });
  other.join();
  EXPECT_NE(memcmp(base_ + at + half.size(), half.data(), half.size()), 0) << "another thread's fence wrote it";
  m.fence(FenceKind::kCommit);
  EXPECT_EQ(memcmp(base_ + at + half.size(), half.data(), half.size()), 0);
}

// Without a descriptor (or on a file system other than ext4 and XFS)
// streams store through the mapping at once, as on x86.
TEST_F(MsyncMediumTest, WithoutADescriptorStreamsStore) {
  auto m = make();
  auto src = pattern(2 * kCacheLine, 31);
  m->stream(base_ + 3 * page_, src.data(), src.size());
  EXPECT_EQ(memcmp(base_ + 3 * page_, src.data(), src.size()), 0);
  m->fence(FenceKind::kCommit);
  EXPECT_EQ(m->msync_calls(), 1u);
}

// Group commit.  Thread A's sync is held open (the hook) until B and C
// wait; they registered after A's sync took its ranges, so neither may
// return when it ends: one of them leads the next sync, which covers both.
// Three fences, two system calls; and B and C returned only after the
// second sync started.
TEST_F(MsyncMediumTest, FencesThatArriveDuringASyncShareTheNextOne) {
  MsyncMedium m(base_, len_, cpu_features().flush, cpu_features().avx, fd_);
  if (!m.uses_file_range()) GTEST_SKIP() << "the test file is not on ext4 or XFS: sync_file_range is not used";
  struct Hold {
    MsyncMedium* m;
    std::atomic<int> syncs{0};
    std::atomic<bool> release{false};
  } hold{&m};
  m.set_before_sync_hook(
      [](void* a) {
        auto* h = static_cast<Hold*>(a);
        if (h->syncs.fetch_add(1) == 0) {
          while (!h->release.load()) std::this_thread::yield();
        }
      },
      &hold);
  char byte = 1;
  std::thread a([&] {
    m.write_flush(base_, &byte, 1);
    m.fence(FenceKind::kCommit);
  });
  // Bounded waits: a broken group must fail the test, not hang it.
  auto wait_for = [](auto&& done) {
    for (int i = 0; i < 20000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return done();
  };
  const bool a_syncing = wait_for([&] { return hold.syncs.load() != 0; });  // A's sync is running
  if (!a_syncing) hold.release.store(true);
  EXPECT_TRUE(a_syncing) << "A's fence made no sync";
  std::atomic<int> returned_after_second{0};
  auto waiter = [&](size_t page) {
    m.write_flush(base_ + page * page_, &byte, 1);
    m.fence(FenceKind::kCommit);
    if (hold.syncs.load() >= 2) returned_after_second.fetch_add(1);
  };
  std::thread b(waiter, 10), c(waiter, 20);
  EXPECT_TRUE(wait_for([&] { return m.waiting() >= 2; })) << "B and C did not wait for a sync";
  hold.release.store(true);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(m.msync_calls(), 2u);
  EXPECT_EQ(hold.syncs.load(), 2);
  EXPECT_EQ(returned_after_second.load(), 2);
}

// sync_file_range only where it reaches the mapping's pages: ext4 and XFS,
// not tmpfs (nor overlayfs, where it acts on an empty page cache and
// returns 0); there every range gets its own msync.
TEST(MsyncMediumFs, FileRangeOnlyWhereItReachesTheMapping) {
  const int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(MsyncMedium::writeback_reaches_mapping(fd));
  close(fd);
  EXPECT_FALSE(MsyncMedium::writeback_reaches_mapping(-1));
  char tmpl[] = "/dev/shm/softwrap_medium_fs_XXXXXX";
  const int f = mkstemp(tmpl);
  ASSERT_GE(f, 0);
  unlink(tmpl);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ASSERT_EQ(ftruncate(f, static_cast<off_t>(3 * page)), 0);
  void* p = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  ASSERT_NE(p, MAP_FAILED);
  {
    MsyncMedium m(p, 3 * page, cpu_features().flush, cpu_features().avx, f);
    EXPECT_FALSE(m.uses_file_range());
    char byte = 1;
    m.write_flush(static_cast<char*>(p), &byte, 1);
    m.write_flush(static_cast<char*>(p) + 2 * page, &byte, 1);
    m.fence(FenceKind::kCommit);
    EXPECT_EQ(m.msync_calls(), 2u);  // one msync per range
  }
  munmap(p, 3 * page);
  close(f);
  // The build's file system here is ext4: where the test runs on one,
  // the check must say so.
  const int cwd = open(".", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(cwd, 0);
  struct statfs fs;
  ASSERT_EQ(fstatfs(cwd, &fs), 0);
  if (fs.f_type == 0xEF53 || fs.f_type == 0x58465342) EXPECT_TRUE(MsyncMedium::writeback_reaches_mapping(cwd));
  close(cwd);
}

// -------------------------------------------------------------- scm-emu

ScmTiming timing(uint32_t tw_ns, uint32_t ts_ns = 0, uint32_t entries = 8) {
  ScmTiming t;
  t.write_ns = tw_ns;
  t.serialize_ns = ts_ns;
  t.entries = entries;
  return t;
}

struct alignas(64) Lines {
  char bytes[64 * 64];
};

TEST(ScmEmuMediumTest, DistinctLinesCostTwEachAtFence) {
  constexpr uint64_t kTw = 20000;
  constexpr int kLines = 10;
  ScmEmuMedium m(timing(kTw));
  Lines l;
  uint64_t t0 = scm_now_ns();
  for (int i = 0; i < kLines; ++i) m.write_flush(l.bytes + i * 64, &i, sizeof i);
  m.fence(FenceKind::kCommit);
  uint64_t elapsed = scm_now_ns() - t0;
  EXPECT_GE(elapsed, kLines * kTw * 9 / 10);
  EXPECT_EQ(m.queue_stats().lines_written, static_cast<uint64_t>(kLines));
  EXPECT_EQ(m.queue_stats().lines_combined, 0u);
}

TEST(ScmEmuMediumTest, StreamedLinesCostTwEach) {
  constexpr uint64_t kTw = 20000;
  ScmEmuMedium m(timing(kTw));
  Lines l;
  auto src = pattern(640, 2);
  uint64_t t0 = scm_now_ns();
  m.stream(l.bytes + 64, src.data(), 640);  // exactly 10 lines
  m.fence(FenceKind::kCommit);
  EXPECT_GE(scm_now_ns() - t0, 10 * kTw * 9 / 10);
  EXPECT_EQ(m.queue_stats().lines_written, 10u);
  m.stream(l.bytes + 64 * 20 + 1, src.data(), 640);  // unaligned: 11 lines
  EXPECT_EQ(m.queue_stats().lines_written, 21u);
}

TEST(ScmEmuMediumTest, PendingLineIsCombined) {
  // Tw of one second: nothing completes during the test, so the counts are
  // exact; no fence, so nothing waits for it either.
  ScmEmuMedium m(timing(1000000000u));
  Lines l;
  for (int i = 0; i < 10; ++i) m.write_flush(l.bytes, &i, sizeof i);
  m.stream(l.bytes, l.bytes + 64, 64);   // same line again: combined
  m.flush(l.bytes + 32, 64);             // this line (combined) + the next (new)
  auto s = m.queue_stats();
  EXPECT_EQ(s.lines_written, 2u);
  EXPECT_EQ(s.lines_combined, 11u);
  EXPECT_EQ(s.full_waits, 0u);
}

TEST(ScmEmuMediumTest, CombinedFlushesCostAboutOneTw) {
  constexpr uint64_t kTw = 50000;
  ScmEmuMedium m(timing(kTw));
  Lines l;
  uint64_t best = UINT64_MAX;
  for (int trial = 0; trial < 5; ++trial) {
    uint64_t t0 = scm_now_ns();
    for (int i = 0; i < 10; ++i) m.write_flush(l.bytes + 128, &i, sizeof i);
    m.fence(FenceKind::kCommit);
    best = std::min(best, scm_now_ns() - t0);
  }
  EXPECT_GE(best, kTw * 9 / 10);
  EXPECT_LT(best, 5 * kTw);
}

TEST(ScmEmuMediumTest, FullQueueMakesWritersWait) {
  constexpr uint64_t kTw = 20000;
  ScmEmuMedium m(timing(kTw, 0, 8));
  Lines l;
  uint64_t t0 = scm_now_ns();
  for (int i = 0; i < 16; ++i) m.flush(l.bytes + i * 64, 1);
  // The 16th line could enter only when the 8th had completed.
  EXPECT_GE(scm_now_ns() - t0, 8 * kTw * 9 / 10);
  m.fence(FenceKind::kCommit);
  EXPECT_GE(scm_now_ns() - t0, 16 * kTw * 9 / 10);
}

TEST(ScmEmuMediumTest, WriterWaitsForTheHeadOfAFullQueue) {
  // Two entries of 5 ms: lines 3 and 4 find the queue full (unless the
  // machine stalls this thread for 5 ms between two flushes).
  constexpr uint64_t kTw = 5000000;
  ScmEmuMedium m(timing(kTw, 0, 2));
  Lines l;
  uint64_t t0 = scm_now_ns();
  for (int i = 0; i < 4; ++i) m.flush(l.bytes + i * 64, 1);
  EXPECT_GE(scm_now_ns() - t0, 2 * kTw * 9 / 10);
  auto s = m.queue_stats();
  EXPECT_GE(s.full_waits, 1u);
  EXPECT_EQ(s.lines_written, 4u);
}

TEST(ScmEmuMediumTest, FenceCostsTsEvenWhenIdle) {
  constexpr uint64_t kTs = 100000;
  ScmEmuMedium m(timing(1000, kTs));
  uint64_t t0 = scm_now_ns();
  m.fence(FenceKind::kCommit);
  EXPECT_GE(scm_now_ns() - t0, kTs);
}

TEST(ScmEmuMediumTest, SharedQueueIsSharedByAllThreads) {
  constexpr uint64_t kTw = 20000;
  constexpr int kLines = 10;
  ScmTiming t = timing(kTw);
  t.shared = true;
  ScmEmuMedium m(t);
  static Lines l;
  uint64_t t0 = scm_now_ns();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&m, t] {
      Counters c;
      CountersScope scope(&c);
      for (int i = 0; i < kLines; ++i) m.flush(l.bytes + (t * kLines + i) * 64, 8);
      m.fence(FenceKind::kCommit);
      EXPECT_EQ(c.flushes.get(), static_cast<uint64_t>(kLines));
      EXPECT_EQ(fence_count(c, FenceKind::kCommit), 1u);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GE(scm_now_ns() - t0, 2 * kLines * kTw * 9 / 10);
  EXPECT_EQ(m.queue_stats().lines_written, 2u * kLines);
}

TEST(ScmEmuMediumTest, PerThreadQueuesDoNotDelayOtherThreadsPcommit) {
  // A background thread fills its queue with kQueued lines in one flush
  // (the queue has exactly that many entries, so it never waits); a
  // foreground thread's pcommit of 2 lines waits only for its own.  Had it
  // waited for the background's lines (one queue for both, or a fence that
  // waits for every queue as drain() does), it could not return before
  // their last completion stamp, which by the queue's own clock is at
  // least bg0 + kQueued * Tw (bg0 read before the flush).  So the upper
  // bound is that stamp, not a multiple of the foreground's own wall time:
  // a broken medium fails it every time, and a correct one only if the
  // foreground thread stalls for about 40 s (a loaded machine descheduling
  // it for milliseconds, which broke a 6 * Tw bound, leaves it alone).
  constexpr uint64_t kTw = 10000000;
  constexpr uint32_t kQueued = 4096;
  ScmEmuMedium m(timing(kTw, 0, kQueued));
  struct alignas(64) BackgroundLines {
    char bytes[kQueued * 64];
  };
  static BackgroundLines bg;
  static Lines l;
  std::atomic<uint64_t> bg0{0};
  std::atomic<bool> queued{false};
  std::thread background([&] {
    bg0 = scm_now_ns();
    m.flush(bg.bytes, sizeof bg.bytes);
    queued = true;
  });
  while (!queued) std::this_thread::yield();
  const uint64_t t0 = scm_now_ns();
  m.flush(l.bytes, 8);
  m.flush(l.bytes + 64, 8);
  m.fence(FenceKind::kCommit);
  const uint64_t t1 = scm_now_ns();
  EXPECT_GE(t1 - t0, 2 * kTw * 9 / 10) << "the pcommit waits for its own lines";
  EXPECT_LT(t1, bg0 + kQueued * kTw) << "the foreground pcommit waited for the background thread's queue";
  background.join();
  const auto s = m.queue_stats();
  EXPECT_EQ(s.lines_written, kQueued + 2u);
  EXPECT_EQ(s.full_waits, 0u) << "each thread's lines fit its own queue";
  // drain() (pool close) waits for every thread's queue (a medium of its
  // own: the one above still has the background's lines pending).
  constexpr uint64_t kDrainTw = 1000000;
  ScmEmuMedium d(timing(kDrainTw));
  d.flush(l.bytes + 50 * 64, 8);
  const uint64_t t2 = scm_now_ns();
  std::thread([&] { for (int i = 0; i < 4; ++i) d.flush(l.bytes + (20 + i) * 64, 8); }).join();
  d.drain();
  EXPECT_GE(scm_now_ns() - t2, 4 * kDrainTw * 9 / 10);
}

TEST(ScmEmuMediumTest, DrainWaitsForTheWholeQueue) {
  constexpr uint64_t kTw = 20000;
  Counters c;
  CountersScope scope(&c);
  ScmEmuMedium m(timing(kTw));
  Lines l;
  uint64_t t0 = scm_now_ns();
  for (int i = 0; i < 6; ++i) m.flush(l.bytes + i * 64, 1);
  m.drain();
  EXPECT_GE(scm_now_ns() - t0, 6 * kTw * 9 / 10);
  EXPECT_EQ(m.queue_stats().lines_written, 6u);
  EXPECT_EQ(fence_count(c, FenceKind::kOther), 1u);
}

// ---------------------------------------------------------------- trace

TEST(TraceMediumTest, LoadsAreRecordedOnlyWhenAsked) {
  alignas(64) static unsigned char img[256];
  Trace t;
  TraceMedium m(img, sizeof img, &t, nullptr);
  t.start();
  m.load(img + 8, 8);
  EXPECT_TRUE(t.events().empty());
  t.start(TraceOptions{.loads = true});
  m.load(img + 70, 12);
  m.load(img + 250, 16);  // crosses the end of the image: not pool memory
  m.load(img, 0);
  ASSERT_EQ(t.events().size(), 1u);
  EXPECT_EQ(t.events()[0].kind, TraceKind::kLoad);
  EXPECT_EQ(t.events()[0].off, 70u);
  EXPECT_EQ(t.events()[0].aux, 12u);
  EXPECT_EQ(t.events()[0].work, 0u);  // work not asked for
  t.stop();
  m.load(img, 8);
  EXPECT_EQ(t.events().size(), 1u);
}

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(TraceMediumTest, WorkIsTheTimeOutsideTheMediumGivenToTheFirstEvent) {
  alignas(64) static unsigned char img[256];
  Trace t;
  TraceMedium m(img, sizeof img, &t, nullptr);
  t.start(TraceOptions{.loads = true, .work = true});
  ASSERT_GT(t.work_ticks_per_ns(), 0.0);
  const uint64_t v = 1;
  m.store(img, v, 8);
  spin_for(std::chrono::microseconds(2000));
  m.write(img + 64, img + 128, 16);  // two words: two events
  m.fence(FenceKind::kCommit);       // right after: little work
  spin_for(std::chrono::microseconds(500));
  m.load(img + 64, 8);
  const auto& ev = t.events();
  ASSERT_EQ(ev.size(), 5u);
  auto ns = [&](size_t i) { return ev[i].work / t.work_ticks_per_ns(); };
  EXPECT_EQ(ev[0].work, 0u);  // the thread's first event
  EXPECT_GE(ns(1), 2000e3 * 0.95);
  EXPECT_EQ(ev[2].work, 0u);  // same operation as event 1
  EXPECT_LT(ns(3), ns(1) / 2);
  EXPECT_GE(ns(4), 500e3 * 0.95);
  EXPECT_EQ(ev[4].kind, TraceKind::kLoad);
}

TEST(TraceMediumTest, AnOperationThatRecordsNothingLeavesItsTimeInTheNextGap) {
  alignas(64) static unsigned char img[128];
  static unsigned char outside[64];
  Trace t;
  TraceMedium m(img, sizeof img, &t, nullptr);
  t.start(TraceOptions{.work = true});
  m.store(img, 1, 8);
  spin_for(std::chrono::microseconds(1000));
  m.store(outside, 1, 8);  // not pool memory: no event
  spin_for(std::chrono::microseconds(1000));
  m.store(img + 8, 2, 8);
  ASSERT_EQ(t.events().size(), 2u);
  EXPECT_GE(t.events()[1].work / t.work_ticks_per_ns(), 2000e3 * 0.95);
}

}  // namespace
}  // namespace softwrap
