// share_workload.cc — handles of one pool take turns holding write access
// (share_workload.h).
//
// Processes.  Each handle is used by a thread of its own, process x by
// handle x; the workload's thread hands them one task at a time, so
// exactly one works at a time, the trace is deterministic, and the
// persistency model sees one thread per process: one process's flush is
// not made durable by another's fence.  All handles open before setup (the
// simulator, Workload::handles), so none is alone: every session's end
// gives write access up (api/share.h), in the thread that ends it, and no
// watcher thread acts.
//
// One owner.  The owner's history is one sequence of wraps, whichever
// handle runs them (Driver::use), so the oracle demands of every crash
// image the state after a prefix of that sequence, with every wrap whose
// close returned in it: a commit of one process lost or reordered after
// another's, or written home over a newer value, fails.
//
// Sessions (seeded).  A process writes in one of three ways: an implicit
// session (one wrap: it takes write access at the open and gives it up at
// the close, inside sw_wrap_close), an explicit one (sw_pool_write_begin,
// one to three wraps, sw_pool_write_end: the give-up outside any wrap), or
// as a reader first (sw_pool_refresh, then loads of a few words checked
// against the owner's state, then an implicit session).  Usually another
// process writes next, sometimes the same one again (its take then finds
// nobody else wrote: no reload).  A wrap stores 1/2/4/8 bytes into 64
// shared words, sw_writes ranges over 64-byte shadow pages, increments a
// word (a load checked against the owner's state), allocates and fills a
// block linked from a root slot, or frees one (perhaps another process
// allocated it); 8% abort.  Once per run, a third of the way, a 9 MiB
// block grows the 8 MiB pool: the other handles follow the growth when
// they next take write access.  Small alias tables (64 entries) retired a
// few chunks per step (Workload::retire_stepwise) keep commits aliased
// until the give-up's quiesce writes them home, with crash points at its
// retirement and watermark fences.
//
// share_dead (five handles).  Processes 0-3 die, one at a time, at a
// sixth, two, three and four sixths of the run, each in another of four
// ways (a seeded order): inside an explicit session after 1-3 committed
// wraps (the marker says a holder with commits perhaps not home), with a
// wrap open (inside an explicit session or not: an undo wrap's in-place
// stores to roll back), right after taking write access, or between
// sessions (the marker is clean: nothing to recover).  A death is
// Driver::die, then what the kernel does (a fence of the dead thread, then
// its write lock released; its open lock stays, as if another process
// still had the pool open, so the survivors keep giving write access up).
// A live process then takes write access by sw_pool_refresh (a reader
// recovering the dead holder and giving write access back),
// sw_pool_write_begin or a wrap, and recovers the dead holder: recovery's
// fences (recovery:*) are crash points of the trace.  Process 4 lives.
#include "crashsim/share_workload.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "api/runtime.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap::crashsim {
namespace {

constexpr uint64_t kWords = 64;          // shared words: root bytes [0, 512)
constexpr uint64_t kWriteAt = 512;       // sw_write area: [512, 1536)
constexpr uint64_t kWriteLen = 1024;
constexpr uint64_t kSlotAt = 2048;       // slots: offset, size
constexpr uint64_t kSlots = 16;
constexpr size_t kBlockSizes[] = {24, 100, 600, 3000};
constexpr uint64_t kMaxSize = uint64_t{32} << 20;
constexpr size_t kBigBlock = size_t{9} << 20;  // once per run: the 8 MiB pool grows

// A process: a thread that runs one task at a time while the workload's
// thread waits.
class Helper {
 public:
  Helper() : t_([this] { loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> g(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    t_.join();
  }
  void run(const std::function<void()>& f) {
    std::unique_lock<std::mutex> lk(mu_);
    task_ = &f;
    cv_.notify_all();
    cv_.wait(lk, [this] { return task_ == nullptr; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return quit_ || task_ != nullptr; });
      if (quit_) return;
      (*task_)();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* task_ = nullptr;
  bool quit_ = false;
  std::thread t_;  // last: started once the rest is built
};

// The four ways a process dies (share_dead).
enum class Death { kInSession, kInWrap, kJustTook, kBetween };

struct Share {
  Share(Driver& dr, Rng& r) : d(dr), rng(r), root(crashsim::root(dr)) {
    for (size_t i = 0; i < d.handles().size(); ++i) procs.push_back(std::make_shared<Helper>());
  }
  Driver& d;
  Rng& rng;
  char* root;
  std::vector<std::shared_ptr<Helper>> procs;  // process x uses handle x; null once it died
  uint32_t wraps = 0;
  bool grow = false;  // the next allocation is the big one

  // Runs f as process x, on its thread and handle.
  void as(int x, const std::function<void()>& f) {
    procs[x]->run([&] {
      d.use(d.handles()[x]);
      f();
    });
  }

  char* slot(uint64_t i) const { return root + kSlotAt + i * 16; }

  void op() {
    const uint64_t r = rng.below(100);
    if (r < 55) {
      static constexpr unsigned kSizes[] = {8, 8, 8, 4, 2, 1};
      const unsigned sz = kSizes[rng.below(6)];
      d.store(root + rng.below(kWords) * 8 + rng.below(8 / sz) * sz, rng.next(), sz);
    } else if (r < 70) {
      unsigned char buf[160];
      const size_t n = 1 + rng.below(sizeof buf);
      for (size_t i = 0; i < n; ++i) buf[i] = static_cast<unsigned char>(rng.next());
      d.write(root + kWriteAt + rng.below(kWriteLen - n), buf, n);
    } else if (r < 80) {
      char* w = root + rng.below(kWords) * 8;
      d.store(w, d.load64(w) + 1, 8);
    } else {
      const uint64_t i = rng.below(kSlots);
      const uint64_t off = d.load64(slot(i));
      if (off == 0 && grow) {
        // Larger than the whole pool was: it grows (the other handles
        // follow when they take write access).  The first 64 bytes owned.
        grow = false;
        char* b = static_cast<char*>(d.alloc(kBigBlock, 64));
        if (b == nullptr) return;
        unsigned char head[64];
        for (auto& c : head) c = static_cast<unsigned char>(rng.next());
        d.write(b, head, sizeof head);
        d.store(slot(i), sw_pool_offset(d.pool(), b), 8);
        d.store(slot(i) + 8, kBigBlock, 8);
      } else if (off == 0) {
        const size_t n = kBlockSizes[rng.below(std::size(kBlockSizes))];
        char* b = static_cast<char*>(d.alloc(n));
        if (b == nullptr) return;
        std::vector<unsigned char> bytes(n);
        for (auto& c : bytes) c = static_cast<unsigned char>(rng.next());
        d.write(b, bytes.data(), n);
        d.store(slot(i), sw_pool_offset(d.pool(), b), 8);
        d.store(slot(i) + 8, n, 8);
      } else {
        d.free(sw_pool_ptr(d.pool(), off));
        d.store(slot(i), 0, 8);
        d.store(slot(i) + 8, 0, 8);
      }
    }
  }

  // One wrap of 1-6 operations; 8% abort.
  void wrap() {
    d.open();
    for (uint64_t k = 1 + rng.below(6); k-- > 0;) op();
    if (rng.chance(8)) {
      d.abort();
    } else {
      d.close();
    }
    ++wraps;
  }

  // A reader catching up: the loads (of home) are checked.
  void read_check() {
    if (sw_pool_refresh(d.pool()) < 0) d.fail("sw_pool_refresh");
    for (uint64_t k = 1 + rng.below(4); k-- > 0;) d.load64(root + rng.below(kWords) * 8);
  }

  void begin() {
    if (sw_pool_write_begin(d.pool(), -1) != 0) d.fail("sw_pool_write_begin");
  }
  void end() {
    if (sw_pool_write_end(d.pool()) != 0) d.fail("sw_pool_write_end");
  }

  // A session of process x: implicit, explicit, or a reader's first.
  void session(int x) {
    as(x, [&] {
      const uint64_t kind = rng.below(100);
      if (kind < 45) {
        wrap();
      } else if (kind < 75) {
        begin();
        for (uint64_t n = 1 + rng.below(3); n-- > 0;) wrap();
        end();
      } else {
        read_check();
        wrap();
      }
    });
  }

  // Process x dies (how: see the file comment); the kernel releases its
  // write lock.  A wrap it left open is aborted on its thread after the
  // trace (Driver::die), which lives until then.
  void die(int x, Death how) {
    as(x, [&] {
      switch (how) {
        case Death::kInSession:  // holding write access, commits perhaps not home
          begin();
          for (uint64_t n = 1 + rng.below(3); n-- > 0;) wrap();
          break;
        case Death::kInWrap:
          if (rng.chance(50)) {
            begin();
            for (uint64_t n = rng.below(3); n-- > 0;) wrap();
          }
          d.open();
          for (uint64_t k = 1 + rng.below(4); k-- > 0;) op();
          break;
        case Death::kJustTook:
          begin();
          break;
        case Death::kBetween:  // nothing held
          wrap();
          break;
      }
      sw_pool* p = d.pool();
      d.die([proc = procs[x], p] {
        proc->run([p] { sw_wrap_abort(p); });
      });
      // What the kernel does before another process can see the dead one's
      // locks go: on the dead process's core, the exit path's interrupts
      // and locked instructions complete its cache-line flushes and drain
      // its write-combining buffers (a fence of its thread: its streamed
      // log records do not stay pending for ever, to land over the next
      // holder's), then the write lock is released.
      {
        SW_TRACE_LABEL("crashsim:death");
        p->medium->fence(FenceKind::kOther);
      }
      p->file->unlock_write();
    });
    procs[x].reset();
  }

  // A live process takes over from a dead one: a reader (sw_pool_refresh
  // recovers it), an explicit session or a wrap.
  void take_over(int x) {
    as(x, [&] {
      const uint64_t kind = rng.below(100);
      if (kind < 40) {
        read_check();
        wrap();
      } else if (kind < 70) {
        begin();
        for (uint64_t n = 1 + rng.below(3); n-- > 0;) wrap();
        end();
      } else {
        wrap();
      }
    });
  }

  // A live process other than x (x itself if it is the only one).
  int other(int x) {
    std::vector<int> live;
    for (size_t i = 0; i < procs.size(); ++i) {
      if (procs[i] && static_cast<int>(i) != x) live.push_back(static_cast<int>(i));
    }
    return live.empty() ? x : live[rng.below(live.size())];
  }
};

// share_pass: sessions of the processes in turn.  share_dead: besides, all
// processes but the last die, one at a time, each in one of the four ways
// (a seeded order), spread over the run.
void run_share(std::vector<Driver*>& dv, Rng& rng, uint32_t size, bool death) {
  Driver& d = *dv[0];
  if (d.handles().size() < 2) return d.fail("the share workloads need two handles or more");
  Share s(d, rng);
  std::vector<Death> deaths;
  if (death) {
    deaths = {Death::kInSession, Death::kInWrap, Death::kJustTook, Death::kBetween};
    for (size_t i = deaths.size(); i > 1; --i) std::swap(deaths[i - 1], deaths[rng.below(i)]);
    deaths.resize(std::min(deaths.size(), s.procs.size() - 1));
  }
  size_t died = 0;
  bool grown = false;
  int x = static_cast<int>(rng.below(s.procs.size()));  // who writes first
  while (s.wraps < size || died < deaths.size()) {
    if (!grown && s.wraps >= size / 3) s.grow = grown = true;
    if (died < deaths.size() && s.wraps >= size * (died + 1) / (deaths.size() + 2)) {
      // Processes 0, 1, ... die in that order.
      const int victim = static_cast<int>(died);
      s.die(victim, deaths[died++]);
      x = s.other(victim);
      s.take_over(x);
      continue;
    }
    s.session(x);
    if (rng.chance(70)) x = s.other(x);
  }
}

void run_share_pass(std::vector<Driver*>& dv, Rng& rng, uint32_t size) { run_share(dv, rng, size, false); }
void run_share_dead(std::vector<Driver*>& dv, Rng& rng, uint32_t size) { run_share(dv, rng, size, true); }

Workload handles(uint32_t n, Workload w) {
  w.retire_stepwise = true;
  w.handles = n;
  return w;
}

}  // namespace

const std::vector<Workload>& share_workloads() {
  static const std::vector<Workload> w = {
      handles(3, {"share_pass",
                  "three handles (processes) take turns holding write access: implicit and explicit sessions, "
                  "readers refreshing; stores, ranges, increments, blocks allocated and freed across handles",
                  64, 8, 64, 8, 1, own_root, run_share_pass, nullptr, -1, 0, kMaxSize}),
      handles(5, {"share_dead",
                  "share_pass with five handles, four of which die (holding write access with commits not home, "
                  "with a wrap open, right after taking it, between sessions): the next to take it recovers them",
                  64, 8, 64, 8, 1, own_root, run_share_dead, nullptr, -1, 0, kMaxSize}),
  };
  return w;
}

}  // namespace softwrap::crashsim
