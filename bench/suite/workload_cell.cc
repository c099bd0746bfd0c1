// workload_cell.cc — workload cells and slices (workload_cell.h).
#include "workload_cell.h"

#include <time.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "workloads/runner.h"

namespace softwrap::bench {

namespace wl = softwrap::workloads;

void WorkloadCell::open(const std::string& path, const sw_config& c, const wl::Info& info, const wl::Params& params) {
  p = sw_pool_open(path.c_str(), &c);
  if (!p) fail_sw("sw_pool_open " + path);
  prefault(sw_pool_base(p), sw_pool_size(p));
  acc.assign(params.threads, wl::ApiAccess(p));
  w = wl::make_api_workload(info.name, &acc, params);
  try {
    w->attach();
  } catch (const wl::WorkloadError& e) {
    fail(what + ": attach: " + e.what());
  }
}

void WorkloadCell::close() {
  const std::string why = w->verify();
  if (!why.empty()) {
    fail(fmt("%s (%u threads, tx_size %u): %s", what.c_str(), w->params().threads, w->params().tx_size, why.c_str()));
  }
  w.reset();
  if (sw_pool_close(p) != 0) fail_sw("sw_pool_close");
  p = nullptr;
}

namespace {

// Runs body() on a one-thread workload, verifies it and closes its pool:
// any error fails the experiment, named by the workload and `stage`.
template <class Body>
void run_once(sw_pool* p, std::unique_ptr<wl::Workload> w, const wl::Info& info, const char* stage, Body&& body) {
  try {
    body(*w);
  } catch (const wl::WorkloadError& e) {
    fail(fmt("%s (%s): %s", info.name, stage, e.what()));
  }
  const std::string why = w->verify();
  if (!why.empty()) fail(fmt("%s (after %s): %s", info.name, stage, why.c_str()));
  w.reset();
  if (sw_pool_close(p) != 0) fail_sw("sw_pool_close");
}

}  // namespace

void setup_image(const std::string& path, const wl::Info& info, const wl::Params& params) {
  sw_config c = wl::workload_config(SW_ENGINE_NONATOMIC, SW_MEDIUM_X86);
  sw_pool* p = sw_pool_create(path.c_str(), wl::pool_bytes(info, params), &c);
  if (!p) fail_sw("sw_pool_create " + path);
  std::vector<wl::ApiAccess> acc(1, wl::ApiAccess(p));
  wl::Params one = params;
  one.threads = 1;
  run_once(p, wl::make_api_workload(info.name, &acc, one), info, "setup", [](wl::Workload& w) { w.setup(); });
}

void copy_pool(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) fail("copying " + from + ": " + ec.message());
}

void observe(const std::string& path, const wl::Info& info, const wl::Params& params, uint64_t n,
             wl::StoreHistogram* h) {
  sw_config c = wl::workload_config(SW_ENGINE_NONATOMIC, SW_MEDIUM_X86);
  sw_pool* p = sw_pool_open(path.c_str(), &c);
  if (!p) fail_sw("sw_pool_open " + path);
  std::vector<wl::ObservedAccess<wl::ApiAccess>> acc(1, wl::ObservedAccess<wl::ApiAccess>(wl::ApiAccess(p), h));
  wl::Params one = params;
  one.threads = 1;
  run_once(p, wl::make_observed_workload(info.name, &acc, one), info, "profile", [n](wl::Workload& w) {
    w.attach();
    wl::run_threads(w, n);
  });
}

namespace {

// Runs `run` (timed transactions of c's workload) between two quiesces and
// checks and records its counters.
template <class Run>
Rate timed(WorkloadCell& c, bool record, Run&& run) {
  if (sw_pool_quiesce(c.p) != 0 || sw_pool_stats_reset(c.p) != 0) fail_sw("quiesce/reset");
  wl::Timed t;
  try {
    t = run();
  } catch (const wl::WorkloadError& e) {
    fail(c.what + ": " + e.what());
  }
  if (sw_pool_quiesce(c.p) != 0) fail_sw("sw_pool_quiesce");
  sw_stats st{};
  if (sw_pool_stats(c.p, &st) != 0) fail_sw("sw_pool_stats");
  // (An abort under nonatomic keeps the stores and counts as neither.)
  const bool nonatomic = std::strcmp(sw_pool_engine_name(c.p), "nonatomic") == 0;
  if (nonatomic ? st.wraps > t.transactions : st.wraps + st.aborts != t.transactions) {
    fail(fmt("%s: %llu wraps and %llu aborts for %llu transactions", c.what.c_str(),
             static_cast<unsigned long long>(st.wraps), static_cast<unsigned long long>(st.aborts),
             static_cast<unsigned long long>(t.transactions)));
  }
  if (record) {
    add_stats(&c.sum, st);
    c.tx += t.transactions;
  }
  const double n = static_cast<double>(t.transactions);
  return {n / t.seconds, t.cpu_seconds > 0 ? n / (t.cpu_seconds / c.w->params().threads) : 0.0, t.transactions};
}

}  // namespace

Rate slice(WorkloadCell& c, double seconds, bool record) {
  return timed(c, record, [&] { return wl::run_for(*c.w, seconds, 4); });
}

Rate slice_count(WorkloadCell& c, uint64_t per_thread, bool record) {
  return timed(c, record, [&] { return wl::run_count(*c.w, per_thread); });
}

namespace {
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

wl::Timed run_here(wl::Workload& w, uint64_t n) {
  wl::Timed t;
  const double cpu0 = thread_cpu_seconds();
  const auto start = Clock::now();
  w.run(0, n);
  t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  t.cpu_seconds = thread_cpu_seconds() - cpu0;
  t.transactions = n;
  return t;
}

Rate slice_here(WorkloadCell& c, uint64_t n, bool record) {
  return timed(c, record, [&] { return run_here(*c.w, n); });
}

}  // namespace softwrap::bench
