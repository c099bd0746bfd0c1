/*
 * pmdk_peer.h — a small C shim over PMDK's btree_map example
 * (examples/libpmemobj/tree_map/btree_map.c from libpmemobj-dev, compiled
 * from /usr/share/doc at build time, never copied into this tree): one
 * pool with one btree_map in its root, and single-key inserts, each of
 * which is one PMDK transaction (btree_map_insert's own TX_BEGIN/TX_END).
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
/* The mapping of the pool (for pre-faulting). */
void *pmdk_peer_base(pmdk_peer *p);
void pmdk_peer_close(pmdk_peer *p);
const char *pmdk_peer_errormsg(void);

#ifdef __cplusplus
}
#endif

#endif /* SOFTWRAP_BENCH_BTREE_PMDK_PEER_H_ */
