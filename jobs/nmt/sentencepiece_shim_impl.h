// SentencePiece in standard C++ (sentencepiece_loader.cc, over the module
// jobs/nmt/sentencepiece/module.cc, which explains why it is a module); subword_model.cc wraps it
// in Status.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessera::jobs::nmt::spm {

struct Processor;  // a loaded model

// Null with `error` set when `path` is not a readable SentencePiece model, or SentencePiece
// cannot be loaded (the error says so).
std::shared_ptr<const Processor> Load(const std::string& path, std::string* error);
// Trains a unigram model on the lines of `input_path` into `prefix`.model (and .vocab) with
// spm_train; ids 0..3 are <pad>, <s>, </s>, <unk>. False with `error` set on failure.
bool Train(const std::string& input_path, const std::string& prefix, int vocab_size,
           std::string* error);

int PieceSize(const Processor& p);
std::vector<int> Encode(const Processor& p, const std::string& text);
std::string Decode(const Processor& p, const std::vector<int>& ids);

}  // namespace tessera::jobs::nmt::spm
