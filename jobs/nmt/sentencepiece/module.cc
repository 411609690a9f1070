// libtessera_sentencepiece.so: SentencePiece behind a C interface, loaded at run time by
// jobs/nmt/sentencepiece_loader.cc with RTLD_DEEPBIND.
//
// Why a module: Debian's libsentencepiece carries its own copy of protobuf-lite 3.14 and exports
// its symbols; a program that also links the system protobuf (ONNX import: 3.21) would bind
// SentencePiece's calls to the other version, which aborts in its version check. Loaded with
// RTLD_DEEPBIND, this module and libsentencepiece resolve to their own copies first. Its headers
// also declare their own absl::string_view, so nothing of Abseil is included here. Training is
// not here: it runs spm_train (sentencepiece_loader.cc says why).
#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

void SetError(const sentencepiece::util::Status& s, char* error, int capacity) {
  if (error == nullptr || capacity <= 0) return;
  const std::string text = s.ToString();
  const size_t n = std::min(text.size(), static_cast<size_t>(capacity - 1));
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" {

// A loaded model, or null with `error` set.
void* tessera_spm_load(const char* path, char* error, int capacity) {
  auto* p = new sentencepiece::SentencePieceProcessor;
  const sentencepiece::util::Status s = p->Load(path);
  if (!s.ok()) {
    SetError(s, error, capacity);
    delete p;
    return nullptr;
  }
  return p;
}

void tessera_spm_free(void* model) { delete static_cast<sentencepiece::SentencePieceProcessor*>(model); }

int tessera_spm_size(const void* model) {
  return static_cast<const sentencepiece::SentencePieceProcessor*>(model)->GetPieceSize();
}

// The ids of `text` into ids[0..capacity); returns how many there are (call again with more
// room when that exceeds capacity).
int tessera_spm_encode(const void* model, const char* text, int* ids, int capacity) {
  std::vector<int> out;
  static_cast<const sentencepiece::SentencePieceProcessor*>(model)->Encode(text, &out).IgnoreError();
  std::copy_n(out.begin(), std::min<size_t>(out.size(), std::max(capacity, 0)), ids);
  return static_cast<int>(out.size());
}

// The text of ids[0..n) into text[0..capacity) (NUL-terminated when it fits); returns its length.
int tessera_spm_decode(const void* model, const int* ids, int n, char* text, int capacity) {
  std::string out;
  static_cast<const sentencepiece::SentencePieceProcessor*>(model)
      ->Decode(std::vector<int>(ids, ids + n), &out)
      .IgnoreError();
  if (static_cast<int>(out.size()) < capacity) std::memcpy(text, out.c_str(), out.size() + 1);
  return static_cast<int>(out.size());
}

}  // extern "C"
