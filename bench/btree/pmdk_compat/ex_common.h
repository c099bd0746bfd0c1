/*
 * ex_common.h — the one definition PMDK's tree_map examples take from
 * their examples/ex_common.h, which libpmemobj-dev does not ship: MIN
 * (rtree_map.c).  Written for softwrap's benchmarks; no PMDK code.
 */
#ifndef SOFTWRAP_BENCH_PMDK_COMPAT_EX_COMMON_H_
#define SOFTWRAP_BENCH_PMDK_COMPAT_EX_COMMON_H_

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#endif /* SOFTWRAP_BENCH_PMDK_COMPAT_EX_COMMON_H_ */
