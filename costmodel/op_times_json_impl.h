// The "op_times" object of a cluster file (docs/clusters.md, "Measured op times"), read and
// written by cluster_json.cc:
//
//   "op_times": {"<OpTimesKey>": {"share": 0.5,
//                                 "ops": {"<node>": [forward_s, backward_s], ...},
//                                 "update": {"optimizer": "adam", "seconds_per_param_byte": s},
//                                 "bucket_copy_s_per_byte": s}}
//
// Seconds are finite and >= 0 (an hour at most); "update" and "bucket_copy_s_per_byte" may be
// left out. Written numbers read back to the same bits, so a plan from a stored table is the
// plan from the table that was measured.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "tessera/base/json_reader.h"
#include "tessera/costmodel/op_times.h"

namespace tessera::costmodel {

// Errors name the field's path ("op_times.<key>.ops.<node>[1]: got -1; allowed: ...").
absl::StatusOr<std::map<std::string, MeasuredOpTimes>> ReadOpTimes(const base::JsonField& field);
nlohmann::ordered_json OpTimesJson(const std::map<std::string, MeasuredOpTimes>& op_times);

}  // namespace tessera::costmodel
