// Internal invariant checks. A failed TS_CHECK is a bug in Tessera, never a
// consequence of user input (user errors return absl::Status instead).
//
//   TS_CHECK(id >= 0 && id < size) << "tensor id " << id;
#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace tessera::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition) {
    stream_ << file << ":" << line << ": internal check failed: " << condition << " ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace tessera::internal

#define TS_CHECK(condition)                                              \
  if (condition) {                                                       \
  } else                                                                 \
    ::tessera::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()
