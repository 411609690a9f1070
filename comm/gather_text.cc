// AllGatherText (gather_text.h).
#include "tessera/comm/gather_text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tessera/base/status_macros.h"

namespace tessera::comm {

absl::StatusOr<std::vector<std::string>> AllGatherText(Communicator& comm,
                                                       const std::string& text) {
  const int p = comm.size();
  std::vector<int64_t> length = {static_cast<int64_t>(text.size())}, lengths(p);
  TS_RETURN_IF_ERROR(comm.AllGather(length, lengths));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::string> all(p);
  if (longest == 0) return all;
  const int64_t words = (longest + 7) / 8;
  std::vector<int64_t> mine(words, 0), packed(words * p);
  std::memcpy(mine.data(), text.data(), text.size());
  TS_RETURN_IF_ERROR(comm.AllGather(mine, packed));
  for (int r = 0; r < p; ++r) {
    all[r].assign(reinterpret_cast<const char*>(packed.data() + r * words),
                  static_cast<size_t>(std::clamp<int64_t>(lengths[r], 0, words * 8)));
  }
  return all;
}

}  // namespace tessera::comm
