/*
 * pmdk_peer.c — the shim of pmdk_peer.h.  Values are stored as PMEMoids
 * with a non-zero offset (btree_map only keeps them; it never dereferences
 * them), so the peer does the same work per insert as our tree: find the
 * leaf, shift the slots, split when full, all in one transaction.
 */
#include "pmdk_peer.h"

#include <libpmemobj.h>
#include <stdlib.h>

#include "btree_map.h"

POBJ_LAYOUT_BEGIN(sw_bench_btree);
POBJ_LAYOUT_ROOT(sw_bench_btree, struct peer_root);
POBJ_LAYOUT_END(sw_bench_btree);

struct peer_root {
  TOID(struct btree_map) map;
};

struct pmdk_peer {
  PMEMobjpool *pop;
  TOID(struct btree_map) map;
};

pmdk_peer *pmdk_peer_create(const char *path, size_t size) {
  PMEMobjpool *pop = pmemobj_create(path, POBJ_LAYOUT_NAME(sw_bench_btree), size, 0600);
  if (!pop) return NULL;
  TOID(struct peer_root) root = POBJ_ROOT(pop, struct peer_root);
  if (btree_map_create(pop, &D_RW(root)->map, NULL) != 0) {
    pmemobj_close(pop);
    return NULL;
  }
  pmdk_peer *p = malloc(sizeof *p);
  if (!p) {
    pmemobj_close(pop);
    return NULL;
  }
  p->pop = pop;
  p->map = D_RO(root)->map;
  return p;
}

int pmdk_peer_insert(pmdk_peer *p, uint64_t key, uint64_t value) {
  PMEMoid v = {1, value};
  return btree_map_insert(p->pop, p->map, key, v) == 0 ? 0 : -1;
}

int pmdk_peer_lookup(pmdk_peer *p, uint64_t key) { return btree_map_lookup(p->pop, p->map, key); }

void *pmdk_peer_base(pmdk_peer *p) { return p->pop; }

void pmdk_peer_close(pmdk_peer *p) {
  pmemobj_close(p->pop);
  free(p);
}

const char *pmdk_peer_errormsg(void) { return pmemobj_errormsg(); }
