// vfs_store.cc — stored files and their DRAM maps (vfs_store.h).
//
// Overwrites go to the engine whole: SQLite rewrites whole pages to change a
// few bytes, and the pools the VFS opens use write-combined logging
// (SW_CONFIG_WCL, URI parameter wcl; by default every medium compares
// ranges of a page or more, sw_pool_wcl), whose read-and-compare
// in the engine keeps the log, the alias tables and the home writes
// proportional to what changed.
#include "vfs_store.h"

#include <algorithm>
#include <cstring>

namespace softwrap::sqlite_vfs {

FileMap::FileMap(sw_pool* p, Dirent* d) : p_(p), d_(d) { reload(); }

FileMap::~FileMap() {
  for (auto& l : leaves_) delete[] l.load(std::memory_order_relaxed);
}

void FileMap::publish_block(uint64_t i, char* b) {
  std::atomic<char*>* leaf = leaves_[i / kLeaf].load(std::memory_order_relaxed);
  if (leaf == nullptr) {
    leaf = new std::atomic<char*>[kLeaf]();
    leaves_[i / kLeaf].store(leaf, std::memory_order_release);
  }
  leaf[i % kLeaf].store(b, std::memory_order_relaxed);
}

void FileMap::reload() {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t pool_size = sw_pool_size(p_);
  auto inside = [pool_size](uint64_t off, uint64_t len) { return off != 0 && off < pool_size && len <= pool_size - off; };
  uint64_t n = std::min(load_word(p_, &d_->nblocks), kLeaf * kLeaves);
  const uint64_t table_off = n != 0 ? load_word(p_, &d_->table_off) : 0;
  if (n != 0 && !inside(table_off, n * 8)) n = 0;
  const auto* t = static_cast<const uint64_t*>(sw_pool_ptr(p_, table_off));
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t b = load_word(p_, &t[i]);
    if (!inside(b, kBlock)) {
      n = i;
      break;
    }
    publish_block(i, static_cast<char*>(sw_pool_ptr(p_, b)));
  }
  nblocks_ = n;
  size_.store(std::min(load_word(p_, &d_->size), n * kBlock), std::memory_order_release);
}

template <class Fn>
int FileMap::for_range(uint64_t off, uint64_t n, Fn fn) const {
  uint64_t done = 0;
  while (done < n) {
    const uint64_t o = off + done;
    const uint64_t bi = o / kBlock, bo = o % kBlock;
    const uint64_t len = std::min(n - done, kBlock - bo);
    if (int rc = fn(block(bi) + bo, len, done); rc != 0) return rc;
    done += len;
  }
  return 0;
}

// Makes sure blocks [0, need) exist.  The map follows each store as it
// succeeds, so it matches the pool (in this wrap) also after a failure.
int FileMap::ensure_blocks(uint64_t need) {
  const uint64_t have = nblocks_;
  if (need <= have) return 0;
  if (need > kLeaf * kLeaves) return SW_ETOOBIG;
  const uint64_t cap = load_word(p_, &d_->table_cap);
  void* table = have != 0 || cap != 0 ? sw_pool_ptr(p_, load_word(p_, &d_->table_off)) : nullptr;
  if (need > cap) {
    // Zeroed: a process that reads the table while this one's commit is
    // going home (WAL mode, reload()) finds an entry either 0 or right,
    // whichever order retirement writes it and the block count in.  512
    // entries (a 128 MiB file) before the first doubling, the only change
    // of table_off such a reader could see half-done.
    uint64_t ncap = cap != 0 ? cap * 2 : 512;
    while (ncap < need) ncap *= 2;
    auto* nt = static_cast<uint64_t*>(sw_pzalloc(p_, ncap * 8));
    if (nt == nullptr) return sw_errno();
    if (have != 0) {
      std::vector<uint64_t> tmp(have);
      if (int rc = sw_read(p_, tmp.data(), table, have * 8); rc != 0) return rc;
      if (int rc = sw_write(p_, nt, tmp.data(), have * 8); rc != 0) return rc;
    }
    if (int rc = store_word(p_, &d_->table_off, sw_pool_offset(p_, nt)); rc != 0) return rc;
    if (int rc = store_word(p_, &d_->table_cap, ncap); rc != 0) return rc;
    if (table != nullptr && sw_pfree(p_, table) != 0) return sw_errno();
    table = nt;
  }
  auto* t = static_cast<uint64_t*>(table);
  for (uint64_t i = have; i < need; ++i) {
    void* b = sw_pmalloc(p_, kBlock);
    if (b == nullptr) return sw_errno();
    if (int rc = store_word(p_, &t[i], sw_pool_offset(p_, b)); rc != 0) return rc;
    if (int rc = store_word(p_, &d_->nblocks, i + 1); rc != 0) return rc;
    publish_block(i, static_cast<char*>(b));
    nblocks_ = i + 1;
  }
  return 0;
}

int FileMap::set_size(uint64_t n) {
  if (int rc = store_word(p_, &d_->size, n); rc != 0) return rc;
  size_.store(n, std::memory_order_release);
  return 0;
}

int FileMap::read(uint64_t off, void* dst, uint64_t n, uint64_t* got) const {
  const uint64_t size = size_.load(std::memory_order_acquire);
  const uint64_t avail = off < size ? std::min(n, size - off) : 0;
  const int rc = for_range(off, avail, [&](char* a, uint64_t len, uint64_t done) {
    return sw_read(p_, static_cast<char*>(dst) + done, a, len);
  });
  if (avail < n) std::memset(static_cast<char*>(dst) + avail, 0, n - avail);
  *got = avail;
  return rc;
}

int FileMap::write(uint64_t off, const void* src, uint64_t n, bool whole) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t cur = size();  // only writers change it, under mu_
  const uint64_t end = off + n;
  const auto* s = static_cast<const char*>(src);
  if (int rc = ensure_blocks((std::max(end, cur) + kBlock - 1) / kBlock); rc != 0) return rc;
  if (off > cur) {
    int rc = for_range(cur, off - cur, [&](char* a, uint64_t len, uint64_t) { return sw_memset(p_, a, 0, len); });
    if (rc != 0) return rc;
  }
  int rc = for_range(off, n, [&](char* a, uint64_t len, uint64_t done) {
    return whole ? sw_write_whole(p_, a, s + done, len) : sw_write(p_, a, s + done, len);
  });
  if (rc != 0) return rc;
  return end > cur ? set_size(end) : 0;
}

int FileMap::truncate(uint64_t n) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t cur = size();  // only writers change it, under mu_
  if (n <= cur) return n < cur ? set_size(n) : 0;
  if (int rc = ensure_blocks((n + kBlock - 1) / kBlock); rc != 0) return rc;
  int rc = for_range(cur, n - cur, [&](char* a, uint64_t len, uint64_t) { return sw_memset(p_, a, 0, len); });
  return rc != 0 ? rc : set_size(n);
}

int free_file(sw_pool* p, Dirent* d) {
  const uint64_t nb = load_word(p, &d->nblocks);
  const uint64_t table_off = load_word(p, &d->table_off);
  if (table_off != 0) {
    const auto* t = static_cast<const uint64_t*>(sw_pool_ptr(p, table_off));
    for (uint64_t i = 0; i < nb; ++i) {
      if (sw_pfree(p, sw_pool_ptr(p, load_word(p, &t[i]))) != 0) return sw_errno();
    }
    if (sw_pfree(p, sw_pool_ptr(p, table_off)) != 0) return sw_errno();
  }
  for (uint64_t* w : {&d->in_use, &d->size, &d->nblocks, &d->table_off, &d->table_cap}) {
    if (int rc = store_word(p, w, 0); rc != 0) return rc;
  }
  return 0;
}

}  // namespace softwrap::sqlite_vfs
