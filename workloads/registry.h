// registry.h — every workload by name.
//
// Approach.  SOFTWRAP_WORKLOAD_LIST names each workload's class template
// and its Info once; the non-template list (all_workloads, find_workload)
// and the factory template make_workload<A> are both generated from it, so
// adding a workload is one #include and one line.  make_workload<A> is a
// template because the access type is the caller's (the crash simulator
// instantiates it with its own); the benchmark's two accesses are
// instantiated once in the library (make_api_workload,
// make_observed_workload).
#ifndef SOFTWRAP_WORKLOADS_REGISTRY_H_
#define SOFTWRAP_WORKLOADS_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "access.h"
#include "cq.h"
#include "ctree.h"
#include "genome.h"
#include "hashmap.h"
#include "intruder.h"
#include "kmeans.h"
#include "labyrinth.h"
#include "linked_list.h"
#include "pc.h"
#include "rbtree.h"
#include "sps.h"
#include "ssca2.h"
#include "stmbench7.h"
#include "tatp.h"
#include "tpcc.h"
#include "vacation.h"
#include "workload.h"

// X(template, info): the Themis paper's Table II in its order.
#define SOFTWRAP_THEMIS_WORKLOAD_LIST(X)                                                               \
  X(Cq, kCqInfo) X(Ctree, kCtreeInfo) X(Hashmap, kHashmapInfo) X(LinkedList, kLinkedListInfo) X(Pc, kPcInfo) \
      X(Rbtree, kRbtreeInfo) X(Sps, kSpsInfo) X(Tatp, kTatpInfo) X(Tpcc, kTpccInfo)

// X(template, info): the WCL paper's benchmarks (its Tables 3 and 4), each
// written from scratch with the paper's write pattern.
#define SOFTWRAP_WCL_WORKLOAD_LIST(X)                                                                    \
  X(Genome, kGenomeInfo) X(Intruder, kIntruderInfo) X(Kmeans, kKmeansInfo) X(Labyrinth, kLabyrinthInfo)  \
      X(Ssca2, kSsca2Info) X(Vacation, kVacationInfo) X(Stmb7Small, kStmb7SmallInfo)                     \
          X(Stmb7Medium, kStmb7MediumInfo) X(Stmb7Big, kStmb7BigInfo)

// Every workload: the Themis list, then the WCL list.
#define SOFTWRAP_WORKLOAD_LIST(X) SOFTWRAP_THEMIS_WORKLOAD_LIST(X) SOFTWRAP_WCL_WORKLOAD_LIST(X)

namespace softwrap::workloads {

// In registry order: every workload, the Themis paper's (Info::paper
// starts with "Themis"), and the WCL paper's ("WCL").
const std::vector<const Info*>& all_workloads();
const std::vector<const Info*>& themis_workloads();
const std::vector<const Info*>& wcl_workloads();
// nullptr for an unknown name.
const Info* find_workload(const std::string& name);
// "cq, ctree, ..." for messages.
std::string workload_names();

// The workload `name` over `access` (one entry per thread that will run
// it; p.threads <= access->size()), or nullptr for an unknown name.
template <class A>
std::unique_ptr<Workload> make_workload(const std::string& name, std::vector<A>* access, const Params& p) {
#define SOFTWRAP_MAKE_WORKLOAD(W, INFO) \
  if (name == INFO.name) return std::make_unique<Erased<W<A>>>(access, p);
  SOFTWRAP_WORKLOAD_LIST(SOFTWRAP_MAKE_WORKLOAD)
#undef SOFTWRAP_MAKE_WORKLOAD
  return nullptr;
}

std::unique_ptr<Workload> make_api_workload(const std::string& name, std::vector<ApiAccess>* access,
                                            const Params& p);
std::unique_ptr<Workload> make_observed_workload(const std::string& name,
                                                 std::vector<ObservedAccess<ApiAccess>>* access, const Params& p);

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_REGISTRY_H_
