// thread_state.h — per-thread objects that stay usable for the whole life
// of their thread, exit included.
//
// A plain `thread_local T x;` with a non-trivial destructor is destroyed
// during the thread's C++ thread_local destruction, and on the main thread
// before exit handlers and static destructors run.  A pool closed from an
// atexit handler, from the destructor of a static or thread_local object,
// or by an engine call made from such a place would then touch a destroyed
// object (issue 12: sw_pool_close from atexit crashed on every engine).
//
// ThreadState<T> keeps only a constant-initialized pointer in TLS (no guard,
// no destructor) and creates T on first use.  A non-main thread's T is
// destroyed by a pthread key destructor, which glibc runs after every C++
// thread_local destructor of the thread, so code in those destructors still
// finds it (and if such code, or T's own destructor, uses a ThreadState
// again, it is made anew and destroyed in pthread's next destructor round).
// The main thread's objects are never destroyed: they stay valid through
// exit handlers and static destructors and are reclaimed with the process.
#ifndef SOFTWRAP_COMMON_THREAD_STATE_H_
#define SOFTWRAP_COMMON_THREAD_STATE_H_

#include <pthread.h>

#include <cstdio>
#include <cstdlib>

namespace softwrap {

template <class T>
class ThreadState {
 public:
  // The calling thread's T, created on first use.
  static T& get() {
    T* p = ptr_;
    return p ? *p : make();
  }
  // The calling thread's T if it has been created, else nullptr.
  static T* peek() { return ptr_; }

 private:
  static void destroy(void* v) {
    ptr_ = nullptr;
    delete static_cast<T*>(v);
  }
  static pthread_key_t key() {
    static const pthread_key_t k = [] {
      pthread_key_t made;
      if (pthread_key_create(&made, &destroy) != 0) {
        std::fputs("softwrap: pthread_key_create failed (too many thread keys in the process)\n", stderr);
        std::abort();
      }
      return made;
    }();
    return k;
  }
  static T& make() {
    T* p = new T();
    ptr_ = p;
    pthread_setspecific(key(), p);
    return *p;
  }

  static inline thread_local constinit T* ptr_ = nullptr;
};

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_THREAD_STATE_H_
