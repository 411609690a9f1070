#include "tessera/jobs/nmt/greedy_decoder.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {

absl::StatusOr<std::vector<std::vector<int64_t>>> GreedyDecode(const exec::Batch& inputs,
                                                               int64_t batch, int64_t length,
                                                               const PredictFn& predict) {
  auto it = inputs.values.find("tgt_tokens");
  if (batch < 1 || length < 1 || it == inputs.values.end() ||
      !std::holds_alternative<std::vector<int64_t>>(it->second) ||
      static_cast<int64_t>(std::get<std::vector<int64_t>>(it->second).size()) != batch * length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "greedy decoding needs the input tgt_tokens as ", batch, " x ", length, " integers"));
  }
  // Step 0: every row starts as <bos> followed by padding.
  exec::Batch state = inputs;
  std::vector<int64_t>& tokens = state.Ints("tgt_tokens");
  std::fill(tokens.begin(), tokens.end(), Vocabulary::kPad);
  for (int64_t b = 0; b < batch; ++b) tokens[b * length] = Vocabulary::kBos;
  std::vector<std::vector<int64_t>> rows(batch);
  std::vector<bool> done(batch, false);
  int64_t remaining = batch;
  // Step t: one forward pass; position t's argmax is each unfinished row's next id, fed back
  // as tgt_tokens[t + 1].
  for (int64_t t = 0; t < length && remaining > 0; ++t) {
    absl::StatusOr<std::vector<int64_t>> ids = predict(state);
    if (!ids.ok()) return ids.status();
    if (static_cast<int64_t>(ids->size()) != batch * length) {
      return absl::InvalidArgumentError(absl::StrCat(
          "greedy decoding: the model predicted ", ids->size(), " ids for ", batch, " x ",
          length, " positions"));
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (done[b]) continue;
      const int64_t id = (*ids)[b * length + t];
      rows[b].push_back(id);
      if (t + 1 < length) tokens[b * length + t + 1] = id;
      if (id == Vocabulary::kEos) done[b] = true, --remaining;
    }
  }
  return rows;
}

}  // namespace tessera::jobs::nmt
