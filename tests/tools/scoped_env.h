// Sets an environment variable for a scope and restores what it was (or unsets it) at the end,
// even when an ASSERT leaves the test early.
//
//   ScopedEnv env("TESSERA_LOCAL_CLUSTER", path);
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tessera::tools {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tessera::tools
