/*
 * pmdk_rtree_peer.c — the shim of pmdk_peer.h's rtree functions over
 * PMDK's rtree_map example (a radix tree over byte-string keys), compiled
 * into this translation unit from the libpmemobj-dev documentation
 * directory at build time (never copied into this tree; its ex_common.h is
 * pmdk_compat/ex_common.h).  Inserts are rtree_map_insert's own
 * transaction; the update is one transaction that finds the key's node,
 * snapshots its value field and overwrites it.  Values are PMEMoids with a
 * non-zero offset that rtree_map never dereferences.
 */
#include "pmdk_peer.h"

#include <libpmemobj.h>
#include <stdlib.h>

#include "rtree_map.c"

POBJ_LAYOUT_BEGIN(sw_bench_rtree);
POBJ_LAYOUT_ROOT(sw_bench_rtree, struct rtree_peer_root);
POBJ_LAYOUT_END(sw_bench_rtree);

struct rtree_peer_root {
  TOID(struct rtree_map) map;
};

struct pmdk_rtree_peer {
  PMEMobjpool *pop;
  TOID(struct rtree_map) map;
};

pmdk_rtree_peer *pmdk_rtree_peer_create(const char *path, size_t size) {
  PMEMobjpool *pop = pmemobj_create(path, POBJ_LAYOUT_NAME(sw_bench_rtree), size, 0600);
  if (!pop) return NULL;
  TOID(struct rtree_peer_root) root = POBJ_ROOT(pop, struct rtree_peer_root);
  if (rtree_map_create(pop, &D_RW(root)->map, NULL) != 0) {
    pmemobj_close(pop);
    return NULL;
  }
  pmdk_rtree_peer *p = malloc(sizeof *p);
  if (!p) {
    pmemobj_close(pop);
    return NULL;
  }
  p->pop = pop;
  p->map = D_RO(root)->map;
  return p;
}

int pmdk_rtree_peer_insert(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t value) {
  PMEMoid v = {1, value};
  return rtree_map_insert(p->pop, p->map, key, n, v) == 0 ? 0 : -1;
}

int pmdk_rtree_peer_get(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t *value) {
  const PMEMoid v = rtree_map_get(p->pop, p->map, key, n);
  if (OID_IS_NULL(v)) return 0;
  *value = v.off;
  return 1;
}

/* The node holding key, or a null TOID (the example's descent). */
static TOID(struct tree_map_node) rtree_peer_find(TOID(struct tree_map_node) node, const unsigned char *key,
                                                  uint64_t n) {
  while (!TOID_IS_NULL(node)) {
    const unsigned i = key_comm_len(node, key, n);
    if (i != D_RO(node)->key_size) break;
    if (i == n) return D_RO(node)->has_value ? node : TOID_NULL(struct tree_map_node);
    node = D_RO(node)->slots[key[i]];
    key += i;
    n -= i;
  }
  return TOID_NULL(struct tree_map_node);
}

int pmdk_rtree_peer_update(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t value) {
  int found = 0;
  TX_BEGIN(p->pop) {
    TOID(struct tree_map_node) node = rtree_peer_find(D_RO(p->map)->root, key, n);
    if (!TOID_IS_NULL(node)) {
      TX_ADD_FIELD(node, value);
      D_RW(node)->value.pool_uuid_lo = 1;
      D_RW(node)->value.off = value;
      found = 1;
    }
  } TX_ONABORT {
    found = -1;
  } TX_END
  return found;
}

void *pmdk_rtree_peer_base(pmdk_rtree_peer *p) { return p->pop; }

void pmdk_rtree_peer_close(pmdk_rtree_peer *p) {
  pmemobj_close(p->pop);
  free(p);
}
