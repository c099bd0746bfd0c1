// forwarding_medium.h — a medium that passes every call on to another one
// (its inner medium), for wrappers that watch what an engine does to pool
// memory: the tests' checks that retirement writes a word home while its
// alias-filter slot is still raised (alias_test, inline_read_test).
//
// A subclass sees each temporal store or write before the inner medium
// does (before_write) and each fence before it is passed on
// (before_fence); everything else, loads a recording inner medium records
// included, goes straight through.
#ifndef SOFTWRAP_MEDIUM_FORWARDING_MEDIUM_H_
#define SOFTWRAP_MEDIUM_FORWARDING_MEDIUM_H_

#include <cstddef>
#include <cstdint>

#include "medium/medium.h"

namespace softwrap {

class ForwardingMedium : public Medium {
 public:
  // inner must outlive this medium.
  explicit ForwardingMedium(Medium* inner) : inner_(inner) { records_loads_ = inner->records_loads(); }

  const MediumProperties& properties() const override { return inner_->properties(); }
  void write(void* dst, const void* src, size_t n) override {
    before_write(dst, n);
    inner_->write(dst, src, n);
  }
  void store(void* dst, uint64_t v, unsigned size) override {
    before_write(dst, size);
    inner_->store(dst, v, size);
  }
  void flush(const void* addr, size_t n) override { inner_->flush(addr, n); }
  void stream(void* dst, const void* src, size_t n) override { inner_->stream(dst, src, n); }
  void fence(FenceKind kind) override {
    before_fence(kind);
    inner_->fence(kind);
  }
  void drain() override { inner_->drain(); }
  void publish_streams() override { inner_->publish_streams(); }
  void open_in_place(void* dst, size_t n) override { inner_->open_in_place(dst, n); }
  void close_in_place(const void* dst, size_t n) override { inner_->close_in_place(dst, n); }
  // write_through: Medium's, through write() and flush() here, so that
  // before_write sees it.
  void extend(size_t len) override { inner_->extend(len); }

 protected:
  virtual void before_write(const void* dst, size_t n) = 0;
  virtual void before_fence(FenceKind kind) { (void)kind; }
  void on_load(const void* addr, size_t n) override { inner_->load(addr, n); }

 private:
  Medium* inner_;
};

}  // namespace softwrap

#endif  // SOFTWRAP_MEDIUM_FORWARDING_MEDIUM_H_
