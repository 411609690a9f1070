// Subword vocabularies for real text: SentencePiece unigram models (Kudo 2018), loaded from a
// file or trained on the training text.
//
//   TS_ASSIGN_OR_RETURN(SubwordModel m, SubwordModel::Load("ck/sentencepiece.model"));
//   TS_ASSIGN_OR_RETURN(SubwordModel t,
//                       SubwordModel::Train(lines, /*vocab_size=*/8000, "ck/sentencepiece.model"));
//   std::vector<int64_t> ids = m.Encode("It is raining.");  // piece ids, no <s>/</s>
//   std::string text = m.Decode(ids);                       // "It is raining."
//
// A translation pair's vocabularies, one shared by both sides or one per side:
//
//   TS_ASSIGN_OR_RETURN(Vocabularies v, Vocabularies::Load("ck/src.model,ck/tgt.model"));
//   v.source->Encode(english); v.target->Decode(ids);
//
// Ids 0..3 are <pad>, <s>, </s>, <unk>, as in the synthetic task's Vocabulary (vocabulary.h), so
// the model's loss ignores <pad> = 0 and greedy decoding stops at </s> = 2 the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tessera::jobs::nmt {

namespace spm {
struct Processor;
}

class SubwordModel {
 public:
  static constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

  // InvalidArgument naming the file when it is missing or not a SentencePiece model.
  static absl::StatusOr<SubwordModel> Load(const std::string& path);
  // Trains a model of up to `vocab_size` pieces (fewer when the text has fewer) on `lines` and
  // writes it to `model_path` (which must end in ".model"; a ".vocab" listing goes beside it).
  // InvalidArgument for an empty text or a vocab_size below 8; Internal with SentencePiece's
  // words when training fails.
  static absl::StatusOr<SubwordModel> Train(absl::Span<const std::string> lines,
                                            int64_t vocab_size, const std::string& model_path);

  int64_t size() const;
  std::vector<int64_t> Encode(absl::string_view text) const;
  // The text of `ids` up to the first </s>; <pad>, <s> and ids outside the model are left out.
  std::string Decode(absl::Span<const int64_t> ids) const;

 private:
  explicit SubwordModel(std::shared_ptr<const spm::Processor> p) : p_(std::move(p)) {}
  std::shared_ptr<const spm::Processor> p_;
};

struct Vocabularies {
  std::shared_ptr<const SubwordModel> source, target;  // one object when shared
  bool shared() const { return source == target; }

  // "MODEL" (shared) or "SRC.model,TGT.model" (one per side), as --vocab takes them;
  // SubwordModel::Load's errors, or InvalidArgument for more than two files.
  static absl::StatusOr<Vocabularies> Load(const std::string& spec);
  // Trains one model of `vocab_size` pieces on both sides' `source` and `target` lines into
  // `paths[0]` (one path), or one per side into `paths[0]` and `paths[1]` (two paths).
  static absl::StatusOr<Vocabularies> Train(absl::Span<const std::string> source,
                                            absl::Span<const std::string> target,
                                            int64_t vocab_size,
                                            absl::Span<const std::string> paths);
};

}  // namespace tessera::jobs::nmt
