// error.h — the thread-local error slot behind sw_errormsg()/sw_errno().
//
// Internal code reports failure by returning an SW_E* code (or nullptr) and
// calling set_error() with a message that says what was wrong and, where it
// helps, what to do.  The slot keeps the last failure of the thread, as
// PMDK's pmemobj_errormsg does.
#ifndef SOFTWRAP_COMMON_ERROR_H_
#define SOFTWRAP_COMMON_ERROR_H_

#include <cstdarg>
#include <string>

#include "softwrap/softwrap.h"

namespace softwrap {

// Records the failure and returns `code` so callers can `return set_error(...)`.
int set_error(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// As set_error, appending ": strerror(errno)".
int set_error_errno(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
int set_error_v(int code, const char* fmt, va_list ap);
void clear_error();
int last_error();
const char* last_error_message();
// Strict mode (SW_CONFIG_STRICT): prints "softwrap: strict mode: <what>"
// and a backtrace to stderr, then aborts.  See api/strict.h.
[[noreturn]] void strict_abort(const char* what) __attribute__((cold));

}  // namespace softwrap

#endif  // SOFTWRAP_COMMON_ERROR_H_
