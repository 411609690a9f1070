// SentencePiece models in Status form (subword_model.h) over the shim.
#include "tessera/jobs/nmt/subword_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/nmt/sentencepiece_shim_impl.h"

namespace tessera::jobs::nmt {

absl::StatusOr<SubwordModel> SubwordModel::Load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("vocabulary '", path, "' does not exist"));
  }
  std::string error;
  std::shared_ptr<const spm::Processor> p = spm::Load(path, &error);
  if (p == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vocabulary '", path, "' is not a SentencePiece model (", error,
        "); pass a .model file that spm_train or `tessera train` wrote, or leave out --vocab to "
        "train one"));
  }
  return SubwordModel(std::move(p));
}

absl::StatusOr<SubwordModel> SubwordModel::Train(absl::Span<const std::string> lines,
                                                 int64_t vocab_size,
                                                 const std::string& model_path) {
  if (lines.empty()) return absl::InvalidArgumentError("no text to train a vocabulary on");
  if (vocab_size < 8 || vocab_size > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("vocabulary size ", vocab_size, " must be in [8, 1000000]"));
  }
  if (!absl::EndsWith(model_path, ".model")) {
    return absl::InvalidArgumentError(
        absl::StrCat("vocabulary file '", model_path, "' must end in .model"));
  }
  const std::string prefix = model_path.substr(0, model_path.size() - 6);
  const std::string input = prefix + ".training-text";
  {
    std::ofstream out(input, std::ios::binary | std::ios::trunc);
    for (const std::string& line : lines) out << line << '\n';
    if (!out.flush()) {
      return absl::InvalidArgumentError(absl::StrCat("cannot write '", input, "'"));
    }
  }
  std::string error;
  const bool trained = spm::Train(input, prefix, static_cast<int>(vocab_size), &error);
  std::error_code ec;
  std::filesystem::remove(input, ec);
  if (!trained) {
    return absl::InternalError(absl::StrCat("training the vocabulary '", model_path,
                                            "' failed: ", error));
  }
  return Load(model_path);
}

int64_t SubwordModel::size() const { return spm::PieceSize(*p_); }

std::vector<int64_t> SubwordModel::Encode(absl::string_view text) const {
  const std::vector<int> ids = spm::Encode(*p_, std::string(text));
  return std::vector<int64_t>(ids.begin(), ids.end());
}

std::string SubwordModel::Decode(absl::Span<const int64_t> ids) const {
  std::vector<int> keep;
  for (int64_t id : ids) {
    if (id == kEos) break;
    if (id == kPad || id == kBos || id < 0 || id >= size()) continue;
    keep.push_back(static_cast<int>(id));
  }
  return spm::Decode(*p_, keep);
}

absl::StatusOr<Vocabularies> Vocabularies::Load(const std::string& spec) {
  const std::vector<std::string> files = absl::StrSplit(spec, ',');
  if (files.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--vocab '", spec, "' names ", files.size(),
        " files; give one SentencePiece model shared by both sides or SRC.model,TGT.model"));
  }
  Vocabularies v;
  TS_ASSIGN_OR_RETURN(SubwordModel source, SubwordModel::Load(files[0]));
  v.source = std::make_shared<const SubwordModel>(std::move(source));
  v.target = v.source;
  if (files.size() == 2) {
    TS_ASSIGN_OR_RETURN(SubwordModel target, SubwordModel::Load(files[1]));
    v.target = std::make_shared<const SubwordModel>(std::move(target));
  }
  return v;
}

absl::StatusOr<Vocabularies> Vocabularies::Train(absl::Span<const std::string> source,
                                                 absl::Span<const std::string> target,
                                                 int64_t vocab_size,
                                                 absl::Span<const std::string> paths) {
  if (paths.empty() || paths.size() > 2) {
    return absl::InvalidArgumentError("a vocabulary is trained into one file or one per side");
  }
  Vocabularies v;
  if (paths.size() == 1) {
    std::vector<std::string> both;  // pair by pair, as the corpus holds them
    for (size_t i = 0; i < std::max(source.size(), target.size()); ++i) {
      if (i < source.size()) both.push_back(source[i]);
      if (i < target.size()) both.push_back(target[i]);
    }
    TS_ASSIGN_OR_RETURN(SubwordModel m, SubwordModel::Train(both, vocab_size, paths[0]));
    v.source = v.target = std::make_shared<const SubwordModel>(std::move(m));
    return v;
  }
  TS_ASSIGN_OR_RETURN(SubwordModel s, SubwordModel::Train(source, vocab_size, paths[0]));
  TS_ASSIGN_OR_RETURN(SubwordModel t, SubwordModel::Train(target, vocab_size, paths[1]));
  v.source = std::make_shared<const SubwordModel>(std::move(s));
  v.target = std::make_shared<const SubwordModel>(std::move(t));
  return v;
}

}  // namespace tessera::jobs::nmt
