// persist_check.h — checks the persist order of a simulated run with the
// crash simulator's persistency model (crashsim/model.h), so the rules
// (Eq. 1–4 of the Themis paper) exist once, there.
//
// The check replays the trace through a crashsim::Model in the order the
// machine performed its operations, and reports to it what the PM
// controller accepted, as it happened.  Whatever the model then requires
// that had not persisted yet is a violation:
//   * order violations (Eq. 3, under the Themis model): a temporal store
//     persisted while a non-temporal store its thread issued before it had
//     not;
//   * fence violations (Eq. 1, 2, 4): a fence completed before the streams
//     and flushed lines it covers had persisted.
// Baseline is checked under the x86 model and the Themis model, Themis,
// Ideal and the broken variant under the Themis model: Ideal's order
// violations are the paper's premise (rare but possible); the broken
// variant must have some.
#ifndef SOFTWRAP_THEMIS_PERSIST_CHECK_H_
#define SOFTWRAP_THEMIS_PERSIST_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "crashsim/model.h"
#include "medium/trace_medium.h"
#include "themis/machine.h"

namespace softwrap::themis {

class PersistCheck final : public PersistObserver {
 public:
  // `events`: the trace the program was read from (read_trace); footprint:
  // Program::footprint.
  PersistCheck(const std::vector<TraceEvent>& events, uint64_t footprint, crashsim::Persistency p);

  void performed(const Op& op) override;
  void persisted_line(uint64_t line, uint64_t version) override;
  void persisted_stream(uint32_t event) override;

  uint64_t order_violations() const { return order_; }
  uint64_t fence_violations() const { return fence_; }
  uint64_t violations() const { return order_ + fence_; }
  // The first few violations, in words (trace event indexes and labels).
  const std::vector<std::string>& examples() const { return examples_; }

 private:
  void violated(const crashsim::Unit& u, const crashsim::Unit* cause);

  const std::vector<TraceEvent>& events_;
  std::vector<char> durable_;
  crashsim::Model model_;
  uint64_t order_ = 0, fence_ = 0;
  std::vector<std::string> examples_;
};

}  // namespace softwrap::themis

#endif  // SOFTWRAP_THEMIS_PERSIST_CHECK_H_
