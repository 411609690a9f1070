// With TESSERA_FUZZ_VERBOSE set, the fuzz targets print what each input gave (the error,
// or "ok"), to see why a replayed input is refused: TESSERA_FUZZ_VERBOSE=1 bin/fuzz_x FILE.
//
//   tessera::fuzz::Verbose(status);   // prints "fuzz: <status>" when TESSERA_FUZZ_VERBOSE is set
#pragma once

#include <cstdlib>
#include <iostream>

#include "absl/status/status.h"

namespace tessera::fuzz {

inline void Verbose(const absl::Status& status) {
  static const bool verbose = std::getenv("TESSERA_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::cerr << "fuzz: " << (status.ok() ? "ok" : status.ToString()) << "\n";
}

}  // namespace tessera::fuzz
