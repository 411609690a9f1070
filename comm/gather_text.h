// Every rank's text, on every rank: for what ranks report to each other (checkpoint refusals,
// error messages, a training trace).
//
//   TS_ASSIGN_OR_RETURN(std::vector<std::string> all, comm::AllGatherText(comm, mine));
//   // all[r] is rank r's text
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/comm/communicator.h"

namespace tessera::comm {

// Collective (two all-gathers: the lengths, then the bytes packed 8 to an int64 word, padded to
// the longest text); every rank must call it. Texts may hold any bytes.
absl::StatusOr<std::vector<std::string>> AllGatherText(Communicator& comm,
                                                       const std::string& text);

}  // namespace tessera::comm
