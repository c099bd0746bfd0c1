/*
 * pmdk_peer.c — the shim of pmdk_peer.h over PMDK's btree_map example.
 * The example's source is compiled into this translation unit (included
 * from the libpmemobj-dev documentation directory at build time, never
 * copied into this tree) so that the update can reach the item inside its
 * node, as an application built on btree_map would: the update is one
 * transaction that finds the item, snapshots its value (pmemobj_tx_add_
 * range_direct) and overwrites it.  Values are stored as PMEMoids with a
 * non-zero offset (btree_map only keeps them; it never dereferences them),
 * so the peer does the same work per insert as our tree: find the leaf,
 * shift the slots, split when full, all in one transaction.
 */
#include "pmdk_peer.h"

#include <libpmemobj.h>
#include <stdlib.h>

#include "btree_map.c"

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

int pmdk_peer_get(pmdk_peer *p, uint64_t key, uint64_t *value) {
  const PMEMoid v = btree_map_get(p->pop, p->map, key);
  if (OID_IS_NULL(v)) return 0;
  *value = v.off;
  return 1;
}

/* The item holding key in the subtree of node, or NULL (the example's own
 * descent, returning the item instead of its value). */
static struct tree_map_node_item *peer_find_item(TOID(struct tree_map_node) node, uint64_t key) {
  while (!TOID_IS_NULL(node)) {
    TOID(struct tree_map_node) next = TOID_NULL(struct tree_map_node);
    for (int i = 0; i <= D_RO(node)->n; ++i) {
      if (NODE_CONTAINS_ITEM(node, i, key)) return &D_RW(node)->items[i];
      if (NODE_CHILD_CAN_CONTAIN_ITEM(node, i, key)) {
        next = D_RO(node)->slots[i];
        break;
      }
    }
    node = next;
  }
  return NULL;
}

int pmdk_peer_update(pmdk_peer *p, uint64_t key, uint64_t value) {
  int found = 0;
  TX_BEGIN(p->pop) {
    struct tree_map_node_item *it = peer_find_item(D_RO(p->map)->root, key);
    if (it) {
      pmemobj_tx_add_range_direct(&it->value, sizeof it->value);
      it->value.pool_uuid_lo = 1;
      it->value.off = value;
      found = 1;
    }
  } TX_ONABORT {
    found = -1;
  } TX_END
  return found;
}

void *pmdk_peer_base(pmdk_peer *p) { return p->pop; }

void pmdk_peer_close(pmdk_peer *p) {
  pmemobj_close(p->pop);
  free(p);
}

const char *pmdk_peer_errormsg(void) { return pmemobj_errormsg(); }
