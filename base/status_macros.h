// Status helpers shared by every module.
//
//   absl::StatusOr<Graph> Load(const std::string& path) {
//     TS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     TS_RETURN_IF_ERROR(Validate(text));
//     ...
//   }
//
// Errors a caller can cause travel as absl::Status; internal invariants use
// TS_CHECK (base/check.h), which aborts.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TS_STATUS_CONCAT_INNER(a, b) a##b
#define TS_STATUS_CONCAT(a, b) TS_STATUS_CONCAT_INNER(a, b)

#define TS_RETURN_IF_ERROR(expr)                       \
  do {                                                 \
    ::absl::Status ts_status_ = (expr);                \
    if (!ts_status_.ok()) return ts_status_;           \
  } while (0)

#define TS_ASSIGN_OR_RETURN(lhs, expr) \
  TS_ASSIGN_OR_RETURN_IMPL(TS_STATUS_CONCAT(ts_statusor_, __LINE__), lhs, expr)

#define TS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
