// registry.cc — the workload list and the library's instantiations.
#include "registry.h"

namespace softwrap::workloads {

void throw_api_error(const char* what) { throw WorkloadError(std::string(what) + ": " + sw_errormsg()); }

std::string mismatch(const std::string& what, uint64_t got, uint64_t expected) {
  return what + ": got " + std::to_string(got) + ", expected " + std::to_string(expected);
}

const std::vector<const Info*>& all_workloads() {
#define SOFTWRAP_INFO_OF(W, INFO) &INFO,
  static const std::vector<const Info*> all = {SOFTWRAP_WORKLOAD_LIST(SOFTWRAP_INFO_OF)};
#undef SOFTWRAP_INFO_OF
  return all;
}

namespace {
std::vector<const Info*> from_paper(const char* prefix) {
  std::vector<const Info*> out;
  for (const Info* i : all_workloads()) {
    if (std::string(i->paper).rfind(prefix, 0) == 0) out.push_back(i);
  }
  return out;
}
}  // namespace

const std::vector<const Info*>& themis_workloads() {
  static const std::vector<const Info*> v = from_paper("Themis");
  return v;
}

const std::vector<const Info*>& wcl_workloads() {
  static const std::vector<const Info*> v = from_paper("WCL");
  return v;
}

const Info* find_workload(const std::string& name) {
  for (const Info* i : all_workloads()) {
    if (name == i->name) return i;
  }
  return nullptr;
}

std::string workload_names() {
  std::string s;
  for (const Info* i : all_workloads()) s += (s.empty() ? "" : ", ") + std::string(i->name);
  return s;
}

std::unique_ptr<Workload> make_api_workload(const std::string& name, std::vector<ApiAccess>* access,
                                            const Params& p) {
  return make_workload(name, access, p);
}

std::unique_ptr<Workload> make_observed_workload(const std::string& name,
                                                 std::vector<ObservedAccess<ApiAccess>>* access, const Params& p) {
  return make_workload(name, access, p);
}

}  // namespace softwrap::workloads
