// trace_label.h — call-site labels for the crash simulator's trace.
//
// A label names *why* the code below it writes persistent memory ("commit",
// "undo:record", "retire:home", "recovery:replay", ...).  The trace medium
// stamps every event it records with the calling thread's current label, so
// a crash-simulator failure report can say which code's store was lost or
// persisted.  No other medium reads the label: in a process that never
// made a trace medium a scope costs a load and a branch, else two
// thread-local pointer writes.
//
//   { SW_TRACE_LABEL("retire:home"); medium->write(...); ... }
#ifndef SOFTWRAP_MEDIUM_TRACE_LABEL_H_
#define SOFTWRAP_MEDIUM_TRACE_LABEL_H_

#include <atomic>

namespace softwrap {

inline thread_local const char* tls_trace_label = nullptr;
// Whether any medium reads labels: set for good when the first trace
// medium is made (trace_medium.cc).  Until then a label scope costs one
// load and a branch — the hot paths of every engine open one per store.
inline std::atomic<bool> g_trace_labels{false};
inline bool trace_labels_on() { return g_trace_labels.load(std::memory_order_relaxed); }

// Sets the calling thread's label for its lifetime; restores the previous
// one (scopes nest).  `label` must be a string literal (it is kept as is).
class TraceLabel {
 public:
  explicit TraceLabel(const char* label) : on_(trace_labels_on()) {
    if (on_) {
      prev_ = tls_trace_label;
      tls_trace_label = label;
    }
  }
  // Only if no label is set (an outer scope's label names the caller's
  // purpose better, e.g. "alloc" around an engine's store).
  TraceLabel(const char* label, bool only_if_unset) : on_(trace_labels_on()) {
    if (on_) {
      prev_ = tls_trace_label;
      if (!only_if_unset || !prev_) tls_trace_label = label;
    }
  }
  ~TraceLabel() {
    if (on_) tls_trace_label = prev_;
  }
  TraceLabel(const TraceLabel&) = delete;
  TraceLabel& operator=(const TraceLabel&) = delete;

 private:
  const char* prev_ = nullptr;
  bool on_;
};

inline const char* current_trace_label() { return tls_trace_label ? tls_trace_label : "unlabelled"; }

}  // namespace softwrap

#define SW_TRACE_LABEL_CAT2(a, b) a##b
#define SW_TRACE_LABEL_CAT(a, b) SW_TRACE_LABEL_CAT2(a, b)
#define SW_TRACE_LABEL(label) ::softwrap::TraceLabel SW_TRACE_LABEL_CAT(sw_trace_label_, __LINE__)(label)
#define SW_TRACE_LABEL_DEFAULT(label) \
  ::softwrap::TraceLabel SW_TRACE_LABEL_CAT(sw_trace_label_, __LINE__)(label, true)

#endif  // SOFTWRAP_MEDIUM_TRACE_LABEL_H_
