// vfs_attach.cc — vfs.cc plus a way in for pools that are already open
// (vfs_attach.h).
//
// Approach.  The registry of open pools (g_pools), the Pool record and the
// directory layout (Root, Dirent, kBlock) are private to vfs.cc.  Rather
// than copy them, this file compiles vfs.cc in its own translation unit and
// adds the few functions the crash simulator needs: an attached pool is an
// ordinary registry entry whose reference count starts at one on behalf of
// the attacher, so the VFS's pool_release() never reaches zero and never
// closes it.  Everything else — opening files, locking, the wraps around
// transactions, reads and writes — is the unchanged VFS code.
#include "vfs.cc"  // NOLINT(bugprone-suspicious-include): see above

#include "vfs_attach.h"

namespace softwrap::sqlite_vfs {

int attach_pool(const std::string& path, sw_pool* p) {
  if (int rc = sw_sqlite_register(0); rc != SQLITE_OK) return rc;
  std::lock_guard<std::mutex> g(g_mu);
  if (g_pools.count(path) != 0) return SQLITE_BUSY;
  auto* root = static_cast<Root*>(sw_pool_root(p, sizeof(Root)));
  if (root == nullptr) return SQLITE_CANTOPEN;
  const uint64_t magic = sw_load64(p, &root->magic);
  if (magic != 0 && magic != kMagic) return SQLITE_CANTOPEN;
  if (magic == 0) {  // a new directory, as pool_acquire makes it
    if (sw_wrap_open(p) != 0) return SQLITE_CANTOPEN;
    const uint64_t hdr[2] = {kMagic, 1};
    sw_write(p, &root->magic, hdr, sizeof hdr);
    if (sw_wrap_close(p) != 0) return SQLITE_CANTOPEN;
  }
  auto* P = new Pool;
  P->path = path;
  P->p = p;
  P->root = root;
  P->refs = 1;  // the attacher's
  load_names(P);
  g_pools[path] = P;
  return SQLITE_OK;
}

int detach_pool(const std::string& path) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = g_pools.find(path);
  if (it == g_pools.end()) return SQLITE_NOTFOUND;
  if (it->second->refs > 1) return SQLITE_BUSY;
  delete it->second;
  g_pools.erase(it);
  return SQLITE_OK;
}

bool file_layout(sw_pool* p, const std::string& key, FileLayout* out) {
  *out = FileLayout{};
  auto* root = static_cast<Root*>(sw_pool_root(p, 0));
  if (root == nullptr || sw_load64(p, &root->magic) != kMagic) return false;
  Dirent* d = nullptr;
  for (Dirent& e : root->ents) {
    char name[kNameMax];
    if (sw_load64(p, &e.in_use) == 0 || sw_read(p, name, e.name, kNameMax) != 0) continue;
    name[kNameMax - 1] = '\0';
    if (key == name) d = &e;
  }
  if (d == nullptr) return false;
  out->extents.emplace_back(root, sizeof(Root));
  out->size = sw_load64(p, &d->size);
  const uint64_t nblocks = sw_load64(p, &d->nblocks);
  const uint64_t table_off = sw_load64(p, &d->table_off);
  if (table_off == 0) return nblocks == 0;  // an empty file has no table
  auto* table = static_cast<uint64_t*>(sw_pool_ptr(p, table_off));
  out->extents.emplace_back(table, nblocks * sizeof(uint64_t));
  out->allocations = 1 + nblocks;
  for (uint64_t i = 0; i < nblocks; ++i) {
    const uint64_t start = i * kBlock;
    const uint64_t n = out->size > start ? std::min(kBlock, out->size - start) : 0;
    if (n > 0) out->extents.emplace_back(sw_pool_ptr(p, sw_load64(p, &table[i])), n);
  }
  return true;
}

bool read_file(sw_pool* p, const std::string& key, std::string* out) {
  FileLayout l;
  if (!file_layout(p, key, &l)) return false;
  out->assign(l.size, '\0');
  // extents: the directory, the block table, then the blocks in file order
  uint64_t at = 0;
  for (size_t i = 2; i < l.extents.size(); ++i) {
    if (sw_read(p, out->data() + at, l.extents[i].first, l.extents[i].second) != 0) return false;
    at += l.extents[i].second;
  }
  return at == l.size;
}

}  // namespace softwrap::sqlite_vfs
