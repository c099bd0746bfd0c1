// error.cc — thread-local error slot.
#include "common/error.h"

#include <execinfo.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace softwrap {
namespace {

thread_local int tls_code = 0;
thread_local char tls_msg[512] = "";

int vset(int code, bool with_errno, const char* fmt, va_list ap) {
  int saved_errno = errno;
  int n = vsnprintf(tls_msg, sizeof tls_msg, fmt, ap);
  if (with_errno && n >= 0 && static_cast<size_t>(n) < sizeof tls_msg) {
    snprintf(tls_msg + n, sizeof tls_msg - n, ": %s", strerror(saved_errno));
  }
  tls_code = code;
  return code;
}

}  // namespace

int set_error(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(code, false, fmt, ap);
  va_end(ap);
  return code;
}

int set_error_errno(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(code, true, fmt, ap);
  va_end(ap);
  return code;
}

int set_error_v(int code, const char* fmt, va_list ap) { return vset(code, false, fmt, ap); }

void clear_error() {
  tls_code = 0;
  tls_msg[0] = '\0';
}

int last_error() { return tls_code; }
const char* last_error_message() { return tls_msg; }

void strict_abort(const char* what) {
  std::fprintf(stderr,
               "softwrap: strict mode: %s\n"
               "softwrap: aborting where the API was misused (SW_CONFIG_STRICT / SOFTWRAP_STRICT=1); backtrace:\n",
               what);
  std::fflush(stderr);
  void* frames[48];
  const int n = backtrace(frames, 48);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  std::abort();
}

}  // namespace softwrap

extern "C" {

const char* sw_errormsg(void) { return softwrap::last_error_message(); }
int sw_errno(void) { return softwrap::last_error(); }

const char* sw_strerror(int code) {
  switch (code) {
    case SW_OK: return "SW_OK";
    case SW_EINVAL: return "SW_EINVAL";
    case SW_EIO: return "SW_EIO";
    case SW_ENOMEM: return "SW_ENOMEM";
    case SW_ENOSPC: return "SW_ENOSPC";
    case SW_ECORRUPT: return "SW_ECORRUPT";
    case SW_EFOREIGN: return "SW_EFOREIGN";
    case SW_EVERSION: return "SW_EVERSION";
    case SW_ENOWRAP: return "SW_ENOWRAP";
    case SW_ETOOBIG: return "SW_ETOOBIG";
    case SW_ENOTSUP: return "SW_ENOTSUP";
    case SW_EBUSY: return "SW_EBUSY";
    case SW_EEXIST: return "SW_EEXIST";
    case SW_ERANGE: return "SW_ERANGE";
    case SW_EABORTED: return "SW_EABORTED";
    default: return "SW_E?";
  }
}

}  // extern "C"
