// The SentencePiece interface (sentencepiece_shim_impl.h) over libtessera_sentencepiece.so,
// loaded once with RTLD_DEEPBIND (why: jobs/nmt/sentencepiece/module.cc).
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "tessera/jobs/nmt/sentencepiece_shim_impl.h"

namespace tessera::jobs::nmt::spm {
namespace {

constexpr int kErrorBytes = 1024;

struct Module {
  void* (*load)(const char*, char*, int) = nullptr;
  void (*free)(void*) = nullptr;
  int (*size)(const void*) = nullptr;
  int (*encode)(const void*, const char*, int*, int) = nullptr;
  int (*decode)(const void*, const int*, int, char*, int) = nullptr;
  std::string error;  // set when the module could not be loaded
};

// Beside the program's lib/ folder (build/bin/x -> build/lib), or where TESSERA_LIB_DIR says.
std::vector<std::string> Candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (const char* dir = std::getenv("TESSERA_LIB_DIR")) out.push_back(dir);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path().parent_path() / "lib").string());
    out.push_back(exe.parent_path().string());
  }
  for (std::string& d : out) d += "/libtessera_sentencepiece.so";
  return out;
}

const Module& Loaded() {
  static Module m;
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    m.error = "SentencePiece is not available in sanitizer builds (RTLD_DEEPBIND)";
    return;
#endif
    void* h = nullptr;
    std::string tried;
    for (const std::string& path : Candidates()) {
      h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (h != nullptr) break;
      tried += "\n  " + path + ": " + dlerror();
    }
    if (h == nullptr) {
      m.error = "cannot load SentencePiece support (libtessera_sentencepiece.so, built with "
                "Tessera; set TESSERA_LIB_DIR to its folder):" + tried;
      return;
    }
    m.load = reinterpret_cast<decltype(m.load)>(dlsym(h, "tessera_spm_load"));
    m.free = reinterpret_cast<decltype(m.free)>(dlsym(h, "tessera_spm_free"));
    m.size = reinterpret_cast<decltype(m.size)>(dlsym(h, "tessera_spm_size"));
    m.encode = reinterpret_cast<decltype(m.encode)>(dlsym(h, "tessera_spm_encode"));
    m.decode = reinterpret_cast<decltype(m.decode)>(dlsym(h, "tessera_spm_decode"));
    if (!m.load || !m.free || !m.size || !m.encode || !m.decode) {
      m.error = "libtessera_sentencepiece.so lacks a tessera_spm_* function (stale build?)";
    }
  });
  return m;
}

}  // namespace

struct Processor {
  void* model = nullptr;
  ~Processor() {
    if (model != nullptr) Loaded().free(model);
  }
};

std::shared_ptr<const Processor> Load(const std::string& path, std::string* error) {
  const Module& m = Loaded();
  if (!m.error.empty()) {
    *error = m.error;
    return nullptr;
  }
  char text[kErrorBytes] = {};
  void* model = m.load(path.c_str(), text, kErrorBytes);
  if (model == nullptr) {
    *error = text;
    return nullptr;
  }
  auto p = std::make_shared<Processor>();
  p->model = model;
  return p;
}

// Training runs Debian's spm_train in a process of its own: SentencePiece's trainer logs to
// std::cerr, which under RTLD_DEEPBIND is libstdc++'s never-constructed original rather than the
// program's copy (a copy relocation), and crashes.
bool Train(const std::string& input_path, const std::string& prefix, int vocab_size,
           std::string* error) {
  // hard_vocab_limit=false: a small corpus may hold fewer pieces than asked; the model then has
  // as many as it found. One thread, so that the model is the same on every run.
  std::vector<std::string> args = {
      "spm_train", "--input=" + input_path, "--model_prefix=" + prefix,
      "--vocab_size=" + std::to_string(vocab_size), "--model_type=unigram",
      "--character_coverage=1.0", "--pad_id=0", "--bos_id=1", "--eos_id=2", "--unk_id=3",
      "--hard_vocab_limit=false", "--num_threads=1", "--input_sentence_size=2000000",
      "--shuffle_input_sentence=true"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log = prefix + ".train-log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "spm_train", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    *error = "cannot run spm_train (" + std::string(std::strerror(spawned)) +
             "): install Debian's sentencepiece package (scripts/setup.sh does)";
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::remove(log.c_str());
    return true;
  }
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  *error = "spm_train failed (its log: " + log + "): " + last;
  return false;
}

int PieceSize(const Processor& p) { return Loaded().size(p.model); }

std::vector<int> Encode(const Processor& p, const std::string& text) {
  std::vector<int> ids(64 + text.size());
  const int n = Loaded().encode(p.model, text.c_str(), ids.data(), static_cast<int>(ids.size()));
  if (n > static_cast<int>(ids.size())) {
    ids.resize(n);
    Loaded().encode(p.model, text.c_str(), ids.data(), n);
  }
  ids.resize(n);
  return ids;
}

std::string Decode(const Processor& p, const std::vector<int>& ids) {
  std::string text(256 + 16 * ids.size(), '\0');
  int n = Loaded().decode(p.model, ids.data(), static_cast<int>(ids.size()), text.data(),
                          static_cast<int>(text.size()));
  if (n >= static_cast<int>(text.size())) {
    text.assign(n + 1, '\0');
    n = Loaded().decode(p.model, ids.data(), static_cast<int>(ids.size()), text.data(), n + 1);
  }
  text.resize(n);
  return text;
}

}  // namespace tessera::jobs::nmt::spm
