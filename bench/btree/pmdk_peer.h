/*
 * pmdk_peer.h — small C shims over PMDK's btree_map and rtree_map examples
 * (examples/libpmemobj/tree_map/{btree,rtree}_map.c from libpmemobj-dev,
 * compiled from /usr/share/doc at build time, never copied into this
 * tree): one pool with one map in its root; single-key inserts, each of
 * which is one PMDK transaction (the example's own TX_BEGIN/TX_END);
 * lookups that return the value; and updates, each one transaction that
 * finds the item and overwrites its value after snapshotting it.
 */
#ifndef SOFTWRAP_BENCH_BTREE_PMDK_PEER_H_
#define SOFTWRAP_BENCH_BTREE_PMDK_PEER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pmdk_peer pmdk_peer;

/* Creates the pool file `path` (size bytes) and an empty btree_map in its
 * root; NULL on failure (message from pmdk_peer_errormsg()). */
pmdk_peer *pmdk_peer_create(const char *path, size_t size);
/* Inserts key -> value (value != 0) in one transaction; 0 or -1. */
int pmdk_peer_insert(pmdk_peer *p, uint64_t key, uint64_t value);
/* 1 if the key is present. */
int pmdk_peer_lookup(pmdk_peer *p, uint64_t key);
/* 1 and *value if the key is present, else 0. */
int pmdk_peer_get(pmdk_peer *p, uint64_t key, uint64_t *value);
/* Overwrites the key's value in one transaction: 1, 0 if absent, -1 on
 * an aborted transaction. */
int pmdk_peer_update(pmdk_peer *p, uint64_t key, uint64_t value);
/* The mapping of the pool (for pre-faulting). */
void *pmdk_peer_base(pmdk_peer *p);
void pmdk_peer_close(pmdk_peer *p);
const char *pmdk_peer_errormsg(void);

/* The same over rtree_map, for byte-string keys (pmdk_rtree_peer.c). */
typedef struct pmdk_rtree_peer pmdk_rtree_peer;
pmdk_rtree_peer *pmdk_rtree_peer_create(const char *path, size_t size);
int pmdk_rtree_peer_insert(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t value);
int pmdk_rtree_peer_get(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t *value);
int pmdk_rtree_peer_update(pmdk_rtree_peer *p, const void *key, size_t n, uint64_t value);
void *pmdk_rtree_peer_base(pmdk_rtree_peer *p);
void pmdk_rtree_peer_close(pmdk_rtree_peer *p);

#ifdef __cplusplus
}
#endif

#endif /* SOFTWRAP_BENCH_BTREE_PMDK_PEER_H_ */
