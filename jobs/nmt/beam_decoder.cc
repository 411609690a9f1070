// Greedy and beam-search decoding with the teacher-forced graph (beam_decoder.h).
#include "tessera/jobs/nmt/beam_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/vocabulary.h"

namespace tessera::jobs::nmt {
namespace {

struct Hypothesis {
  std::vector<int64_t> ids;
  double score = 0;  // summed log-probability of `ids`
  size_t parent = 0;  // the live hypothesis of the last pass it extends
};

struct Sentence {
  std::vector<Hypothesis> live = {Hypothesis{}};
  std::vector<Hypothesis> finished;
  bool done = false;
};

// GNMT's length penalty lp(n) = ((5 + n) / 6)^alpha.
double Penalty(size_t n, double alpha) {
  return std::pow((5.0 + static_cast<double>(n)) / 6.0, alpha);
}

// What finished hypotheses are ranked by: score / lp(n) for their n ids.
double Normalised(const Hypothesis& h, double alpha) {
  return h.score / Penalty(h.ids.size(), alpha);
}

// The `k` most likely ids of a row of logits with their log-probabilities, best first (ties:
// the smaller id, as an argmax takes the first maximum).
std::vector<std::pair<double, int64_t>> Best(const float* row, int64_t classes, int64_t k) {
  const float top = *std::max_element(row, row + classes);
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c] - top));
  const double log_z = static_cast<double>(top) + std::log(sum);
  std::vector<int64_t> ids(static_cast<size_t>(classes));
  for (int64_t c = 0; c < classes; ++c) ids[c] = c;
  k = std::min(k, classes);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int64_t a, int64_t b) {
    return row[a] != row[b] ? row[a] > row[b] : a < b;
  });
  std::vector<std::pair<double, int64_t>> out;
  for (int64_t i = 0; i < k; ++i) out.emplace_back(row[ids[i]] - log_z, ids[i]);
  return out;
}

// The rows `rows` of every (batch-major) input of `in`, in that order.
absl::StatusOr<exec::Batch> GatherRows(const exec::Batch& in, int64_t batch,
                                       const std::vector<int64_t>& rows) {
  exec::Batch out;
  for (const auto& [name, values] : in.values) {
    absl::Status bad;
    std::visit(
        [&](const auto& v) {
          if (v.size() % static_cast<size_t>(batch) != 0) {
            bad = absl::InvalidArgumentError(absl::StrCat(
                "decoding: input '", name, "' of ", v.size(), " values is not ", batch, " rows"));
            return;
          }
          const size_t width = v.size() / static_cast<size_t>(batch);
          std::decay_t<decltype(v)> picked;
          picked.reserve(rows.size() * width);
          for (int64_t r : rows) {
            picked.insert(picked.end(), v.begin() + r * width, v.begin() + (r + 1) * width);
          }
          out.values[name] = std::move(picked);
        },
        values);
    TS_RETURN_IF_ERROR(bad);
  }
  return out;
}

// The ids that would end an n-gram `ids` already holds (n < 1: none).
std::vector<int64_t> Repeating(const std::vector<int64_t>& ids, int64_t n) {
  std::vector<int64_t> out;
  if (n < 1 || static_cast<int64_t>(ids.size()) < n - 1) return out;
  const size_t m = static_cast<size_t>(n - 1), end = ids.size() - m;  // the last n-1 ids
  for (size_t i = 0; i + m < ids.size(); ++i) {
    if (std::equal(ids.begin() + i, ids.begin() + i + m, ids.begin() + end)) {
      out.push_back(ids[i + m]);
    }
  }
  return out;
}

// Extends sentence `s`'s live hypotheses by pass t's logits (its rows first .. first + live).
void Extend(Sentence& s, const float* logits, int64_t classes, int64_t t, int64_t length,
            const DecodeOptions& o) {
  struct Candidate {
    double score;
    size_t from;
    int64_t id;
  };
  // Each hypothesis's best beam + 1 next ids hold the best `beam` that do not end it.
  std::vector<Candidate> candidates;
  std::vector<float> barred;  // a row with the ids that would repeat an n-gram at -inf
  for (size_t j = 0; j < s.live.size(); ++j) {
    const float* row = logits + j * classes;
    const std::vector<int64_t> repeats = Repeating(s.live[j].ids, o.no_repeat_ngram);
    if (!repeats.empty()) {
      barred.assign(row, row + classes);
      for (int64_t id : repeats) {
        if (id >= 0 && id < classes) barred[id] = -std::numeric_limits<float>::infinity();
      }
      row = barred.data();
    }
    for (const auto& [log_p, id] : Best(row, classes, o.beam + 1)) {
      if (std::isfinite(log_p)) candidates.push_back({s.live[j].score + log_p, j, id});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  // As fairseq: the best `beam` candidates that do not end stay live; of those that end (an
  // <eos>, or the last position), only the ones ranked among the best `beam` are finished.
  std::vector<Hypothesis> live;
  for (size_t rank = 0; rank < candidates.size(); ++rank) {
    if (static_cast<int64_t>(live.size()) == o.beam) break;
    const Candidate& c = candidates[rank];
    const bool ends = c.id == Vocabulary::kEos || t + 1 == length;
    if (ends && static_cast<int64_t>(rank) >= o.beam) continue;
    Hypothesis h{s.live[c.from].ids, c.score, c.from};
    h.ids.push_back(c.id);
    (ends ? s.finished : live).push_back(std::move(h));
  }
  s.live = std::move(live);
  if (s.live.empty() || static_cast<int64_t>(s.finished.size()) >= o.beam) {
    s.done = true;
    return;
  }
  // Scores only fall as ids are added, and lp(n) <= lp(length): a live hypothesis can end no
  // better than its score / lp(length).
  double best_finished = -std::numeric_limits<double>::infinity();
  for (const Hypothesis& f : s.finished) {
    best_finished = std::max(best_finished, Normalised(f, o.length_penalty));
  }
  const double best_live = s.live.front().score / Penalty(length, o.length_penalty);
  s.done = best_finished >= best_live;
}

// The finished hypothesis of the highest length-normalised score (the first of equals); none
// is finished only when every next id was barred (no_repeat_ngram): then the best live one.
std::vector<int64_t> Result(const Sentence& s, double alpha) {
  if (s.finished.empty()) return s.live.empty() ? std::vector<int64_t>{} : s.live.front().ids;
  const Hypothesis* best = &s.finished.front();
  for (const Hypothesis& f : s.finished) {
    if (Normalised(f, alpha) > Normalised(*best, alpha)) best = &f;
  }
  return best->ids;
}

// Decodes `state`'s sentences: sentence i in rows i * beam .. i * beam + beam - 1 (i < count).
absl::StatusOr<std::vector<std::vector<int64_t>>> DecodeGroup(exec::Batch& state, int64_t batch,
                                                              int64_t count, int64_t length,
                                                              const DecodeOptions& o,
                                                              const StepLogitsFn& logits) {
  const int64_t k = o.beam;
  std::vector<int64_t>& tokens = state.Ints("tgt_tokens");
  std::vector<Sentence> sentences(static_cast<size_t>(count));
  std::vector<int64_t> parents(static_cast<size_t>(batch));
  int64_t open = count;
  for (int64_t t = 0; t < length && open > 0; ++t) {
    // Row i * k + j: <bos>, then live hypothesis j's t ids, then padding; it extends row
    // i * k + (j's parent) of the last pass (a row that holds nothing open: itself).
    std::fill(tokens.begin(), tokens.end(), Vocabulary::kPad);
    for (int64_t r = 0; r < batch; ++r) {
      int64_t* row = tokens.data() + r * length;
      row[0] = Vocabulary::kBos;
      parents[r] = r;
      const size_t i = static_cast<size_t>(r / k), j = static_cast<size_t>(r % k);
      if (i >= sentences.size() || j >= sentences[i].live.size()) continue;
      const Hypothesis& h = sentences[i].live[j];
      std::copy(h.ids.begin(), h.ids.end(), row + 1);
      if (t > 0 && !sentences[i].done) parents[r] = static_cast<int64_t>(i) * k + h.parent;
    }
    TS_ASSIGN_OR_RETURN(const std::vector<float> scores, logits(state, t, parents));
    if (scores.empty() || scores.size() % static_cast<size_t>(batch) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("decoding: the model gave ", scores.size(),
                                                     " logits for ", batch, " rows"));
    }
    const int64_t classes = static_cast<int64_t>(scores.size()) / batch;
    for (int64_t i = 0; i < count; ++i) {
      Sentence& s = sentences[i];
      if (s.done) continue;
      Extend(s, scores.data() + i * k * classes, classes, t, length, o);
      if (s.done) --open;
    }
  }
  std::vector<std::vector<int64_t>> rows;
  for (const Sentence& s : sentences) rows.push_back(Result(s, o.length_penalty));
  return rows;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> Decode(const exec::Batch& inputs, int64_t batch,
                                                         int64_t length,
                                                         const DecodeOptions& options,
                                                         const StepLogitsFn& logits) {
  auto it = inputs.values.find("tgt_tokens");
  if (batch < 1 || length < 1 || it == inputs.values.end() ||
      !std::holds_alternative<std::vector<int64_t>>(it->second) ||
      static_cast<int64_t>(std::get<std::vector<int64_t>>(it->second).size()) != batch * length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "decoding needs the input tgt_tokens as ", batch, " x ", length, " integers"));
  }
  if (options.beam < 1 || options.beam > batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "beam ", options.beam, " must be in [1, ", batch,
        "]: the hypotheses of a sentence run as rows of the model's batch"));
  }
  if (!(options.length_penalty >= 0 && options.length_penalty <= 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat("length penalty ", options.length_penalty, " must be in [0, 10]"));
  }
  if (options.no_repeat_ngram < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("no-repeat n-gram size ", options.no_repeat_ngram, " must be at least 0"));
  }
  const int64_t per_group = batch / options.beam;
  std::vector<std::vector<int64_t>> rows;
  for (int64_t first = 0; first < batch; first += per_group) {
    const int64_t count = std::min(per_group, batch - first);
    // Rows past the group's sentences repeat its first one; nothing reads their results.
    std::vector<int64_t> pick(static_cast<size_t>(batch));
    for (int64_t r = 0; r < batch; ++r) {
      const int64_t i = r / options.beam;
      pick[r] = first + (i < count ? i : 0);
    }
    TS_ASSIGN_OR_RETURN(exec::Batch state, GatherRows(inputs, batch, pick));
    TS_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> group,
                        DecodeGroup(state, batch, count, length, options, logits));
    for (auto& row : group) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tessera::jobs::nmt
