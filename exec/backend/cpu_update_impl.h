// Internal to the CPU back-end: the optimizer's element loops (cpu_update.cc, built with
// -fno-math-errno so that sqrt vectorises).
#pragma once

#include <cstddef>

#include "tessera/exec/backend/backend.h"

namespace tessera::exec::cpu {

// w, g: n floats; slots: rule.slots() arrays of n floats.
void UpdateHost(const UpdateRule& rule, float* w, const float* g, float* const* slots, size_t n);

}  // namespace tessera::exec::cpu
