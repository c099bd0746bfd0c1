// engine.cc — engine selection and the thread context's wrap hooks.
#include "engine/engine.h"

#include <algorithm>

#include "common/error.h"
#include "medium/medium.h"
#include "medium/trace_label.h"

namespace softwrap {

void ThreadCtx::store64(uint64_t offset, uint64_t value) {
  if (alloc_unlogged) [[unlikely]] {  // crash-simulator control: home, unlogged
    SW_TRACE_LABEL("alloc");
    alloc_unlogged->store(alloc_base + offset, value, 8);
    alloc_unlogged->flush(alloc_base + offset, 8);
    return;
  }
  if (fail_code != 0) return;
  if (batch_heap_words) [[likely]] {
    heap_words.push_back({offset, value});
  } else {
    SW_TRACE_LABEL("alloc");
    engine->store(*this, offset, value, 8);
  }
  if (!objects.empty() && fail_code == 0) objects.patch(offset, &value, 8);
}

void ThreadCtx::run_commit_actions() {
  for (const WrapAction& a : commit_actions) a.fn(a.self, a.a, a.b);
  commit_actions.clear();
  abort_actions.clear();
}

void ThreadCtx::run_abort_actions() {
  // Newest first: undo in the reverse order of doing.
  for (size_t i = abort_actions.size(); i-- > 0;) {
    const WrapAction& a = abort_actions[i];
    a.fn(a.self, a.a, a.b);
  }
  abort_actions.clear();
  commit_actions.clear();
}

void Engine::write_words(ThreadCtx& ctx, const HeapWord* w, size_t n) {
  for (size_t i = 0; i < n && ctx.fail_code == 0; ++i) store(ctx, w[i].off, w[i].value, 8);
}

void Engine::zero(ThreadCtx& ctx, uint64_t off, size_t n) {
  for (size_t done = 0; done < n && ctx.fail_code == 0; done += sizeof kZeroPage) {
    write(ctx, off + done, kZeroPage, std::min(sizeof kZeroPage, n - done));
  }
}

std::unique_ptr<Engine> make_engine(const EngineEnv& env) {
  switch (env.cfg->engine) {
    case SW_ENGINE_DEFAULT:
    case SW_ENGINE_SOFTWRAP: return make_softwrap_engine(env);
    case SW_ENGINE_SOFTWRAP_LOCAL: return make_local_engine(env);
    case SW_ENGINE_UNDO: return make_undo_engine(env, false);
    case SW_ENGINE_UNDO_THEMIS: return make_undo_engine(env, true);
    case SW_ENGINE_NONATOMIC: return make_nonatomic_engine(env);
  }
  set_error(SW_EINVAL, "unknown engine %d", static_cast<int>(env.cfg->engine));
  return nullptr;
}

}  // namespace softwrap

namespace softwrap {

std::string space_reason() {
  return last_error() == SW_ENOSPC ? std::string(" (") + last_error_message() + ")" : std::string();
}

int check_engine_medium(const ResolvedConfig& cfg, const MediumProperties& medium) {
  if (cfg.engine != SW_ENGINE_UNDO_THEMIS || medium.themis_rule || (cfg.flags & SW_CONFIG_THEMIS_IDEAL)) return 0;
  return set_error(SW_ENOTSUP,
                   "engine undo-themis needs a medium on which a non-temporal store persists before every later "
                   "temporal store of its thread (the Themis rule); the %s medium does not promise that, so a "
                   "power failure could leave a wrap half done.  Use the undo engine, or set "
                   "SW_CONFIG_THEMIS_IDEAL (SOFTWRAP_THEMIS_IDEAL=1) to measure it anyway as the Themis paper's "
                   "\"Ideal\" (not crash-safe)",
                   medium.name);
}

}  // namespace softwrap
