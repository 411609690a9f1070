// Checkpoint files (see checkpoint.h and docs/training.md). Layout, little-endian:
//
//   header, 32 bytes:
//     0  magic "TSRCKPT\0"         8 bytes
//     8  version                   u32 (2; 1 is read too)
//    12  header bytes              u32 (32)
//    16  payload bytes             u64 (the file's size - 32)
//    24  FNV-1a 64 of the payload  u64
//   payload:
//     step i64, seed u64, program_steps i64, optimizer kind u8 (0 sgd, 1 momentum, 2 adam),
//     optimizer updates i64, model name (u32 length + bytes), parameter count u32, then per
//     parameter: name (u32 length + bytes), rank u32, dims i64[rank], value count u64,
//     values f32[count], slot count u32, then per slot: count u64, values f32[count];
//     version 2: buffer count u32, then per buffer the same as a parameter with 0 slots.
#include "tessera/exec/checkpoint.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/byte_codec_impl.h"

namespace tessera::exec {
namespace {

using internal::ByteReader;
using internal::ByteWriter;
using internal::Fnv1a64;

constexpr char kMagic[8] = {'T', 'S', 'R', 'C', 'K', 'P', 'T', '\0'};
constexpr size_t kHeaderBytes = 32;
constexpr uint32_t kMaxRank = 64;
constexpr uint32_t kMaxSlots = 16;
constexpr int64_t kMaxFileBytes = int64_t{1} << 40;


void EncodeTensors(const std::vector<CheckpointParameter>& tensors, ByteWriter& w) {
  w.U32(static_cast<uint32_t>(tensors.size()));
  for (const CheckpointParameter& p : tensors) {
    w.String(p.name);
    w.U32(static_cast<uint32_t>(p.shape.size()));
    for (int64_t d : p.shape) w.I64(d);
    w.Floats(p.values);
    w.U32(static_cast<uint32_t>(p.slots.size()));
    for (const std::vector<float>& slot : p.slots) w.Floats(slot);
  }
}

void EncodePayload(const Checkpoint& c, ByteWriter& w) {
  w.I64(c.step);
  w.U64(c.seed);
  w.I64(c.program_steps);
  w.U8(static_cast<uint8_t>(c.optimizer));
  w.I64(c.optimizer_updates);
  w.String(c.model);
  EncodeTensors(c.parameters, w);
  EncodeTensors(c.buffers, w);
}

// One parameter; `r` holds the error on failure.
bool DecodeParameter(ByteReader& r, CheckpointParameter& p) {
  uint32_t rank = 0, slots = 0;
  if (!r.String(p.name, "a parameter name") || !r.U32(rank, "a rank")) return false;
  if (rank > kMaxRank) return r.Fail(absl::StrCat("parameter '", p.name, "' has rank ", rank));
  int64_t elements = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t d = 0;
    if (!r.I64(d, "a dimension")) return false;
    if (d < 0 || (d > 0 && elements > (int64_t{1} << 62) / d)) {
      return r.Fail(absl::StrCat("parameter '", p.name, "' has a bad dimension ", d));
    }
    elements *= d;
    p.shape.push_back(d);
  }
  if (!r.Floats(p.values, "parameter values")) return false;
  if (static_cast<int64_t>(p.values.size()) != elements) {
    return r.Fail(absl::StrCat("parameter '", p.name, "' has ", p.values.size(),
                               " values for shape ", graph::ShapeString(p.shape)));
  }
  if (!r.U32(slots, "a slot count")) return false;
  if (slots > kMaxSlots) return r.Fail(absl::StrCat("parameter '", p.name, "' has ", slots, " slots"));
  p.slots.resize(slots);
  for (std::vector<float>& slot : p.slots) {
    if (!r.Floats(slot, "optimizer state")) return false;
    if (slot.size() != p.values.size()) {
      return r.Fail(absl::StrCat("optimizer state of '", p.name, "' has ", slot.size(),
                                 " values, the parameter ", p.values.size()));
    }
  }
  return true;
}

// `count` tensors (parameters or buffers) into `out`; names must be unique.
bool DecodeTensors(ByteReader& r, uint32_t count, std::vector<CheckpointParameter>& out) {
  // Every tensor takes at least 24 bytes, which bounds `count` by what is left.
  if (count > r.left() / 24) return r.Fail(absl::StrCat(count, " parameters or buffers"));
  out.resize(count);
  std::set<absl::string_view> names;
  for (CheckpointParameter& p : out) {
    if (!DecodeParameter(r, p)) return false;
    if (!names.insert(p.name).second) return r.Fail(absl::StrCat("'", p.name, "' twice"));
  }
  return true;
}

bool DecodePayload(ByteReader& r, uint32_t version, Checkpoint& c) {
  uint8_t kind = 0;
  uint32_t count = 0;
  if (!r.I64(c.step, "the step") || !r.U64(c.seed, "the seed") ||
      !r.I64(c.program_steps, "the program's steps") || !r.U8(kind, "the optimizer kind") ||
      !r.I64(c.optimizer_updates, "the optimizer's updates") || !r.String(c.model, "the model name") ||
      !r.U32(count, "the parameter count")) {
    return false;
  }
  if (c.step < 0 || c.optimizer_updates < 0) return r.Fail("a negative step count");
  if (kind > static_cast<uint8_t>(OptimizerKind::kAdam)) {
    return r.Fail(absl::StrCat("unknown optimizer kind ", kind));
  }
  c.optimizer = static_cast<OptimizerKind>(kind);
  if (!DecodeTensors(r, count, c.parameters)) return false;
  if (version >= 2) {
    uint32_t buffers = 0;
    if (!r.U32(buffers, "the buffer count") || !DecodeTensors(r, buffers, c.buffers)) return false;
    for (const CheckpointParameter& b : c.buffers) {
      if (!b.slots.empty()) return r.Fail(absl::StrCat("buffer '", b.name, "' has slots"));
    }
  }
  if (r.left() != 0) return r.Fail(absl::StrCat(r.left(), " bytes after the last tensor"));
  return true;
}

absl::Status Corrupt(absl::string_view origin, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint '", origin, "' ", what));
}

}  // namespace

absl::StatusOr<Checkpoint> CaptureCheckpoint(TrainingProgram& program,
                                             const Optimizer& optimizer, int64_t step,
                                             uint64_t seed) {
  Checkpoint c{.step = step, .seed = seed, .program_steps = program.steps_run(),
               .model = program.graph().name(), .optimizer = optimizer.options().kind,
               .optimizer_updates = optimizer.updates()};
  TS_ASSIGN_OR_RETURN(auto state, optimizer.ReadState());
  for (const TrainingProgram::Parameter& p : program.parameters()) {
    CheckpointParameter& out = c.parameters.emplace_back();
    out.name = p.name;
    out.shape = program.graph().tensor(p.tensor).shape;
    TS_ASSIGN_OR_RETURN(out.values, ReadFloats(program.backend(), p.value));
    if (auto it = state.find(p.name); it != state.end()) out.slots = std::move(it->second.slots);
  }
  for (const graph::Tensor& t : program.graph().tensors()) {
    if (t.role != graph::TensorRole::kConstant) continue;
    std::vector<float> v = program.PersistentValue(t.name);
    if (v.empty()) continue;
    c.buffers.push_back({.name = t.name, .shape = t.shape, .values = std::move(v)});
  }
  return c;
}

absl::Status RestoreCheckpoint(const Checkpoint& checkpoint, TrainingProgram& program,
                               Optimizer& optimizer) {
  const OptimizerKind kind = optimizer.options().kind;
  if (checkpoint.optimizer != kind) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the checkpoint was written with optimizer ",
        costmodel::OptimizerName(checkpoint.optimizer), "; this run uses ", costmodel::OptimizerName(kind), "; resume with the same optimizer"));
  }
  std::map<std::string, const CheckpointParameter*> by_name;
  for (const CheckpointParameter& p : checkpoint.parameters) by_name[p.name] = &p;
  const std::string model = program.graph().name();
  std::vector<const CheckpointParameter*> matched;  // per program parameter
  for (const TrainingProgram::Parameter& p : program.parameters()) {
    auto it = by_name.find(p.name);
    const graph::Shape& shape = program.graph().tensor(p.tensor).shape;
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the checkpoint (of model '", checkpoint.model, "') has no parameter '", p.name,
          "' of model '", model, "'; it belongs to another model"));
    }
    const CheckpointParameter& c = *it->second;
    if (c.shape != shape || c.values.size() != p.value.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter '", p.name, "' is ", graph::ShapeString(c.shape), " in the checkpoint (of model '",
          checkpoint.model, "') but ", graph::ShapeString(shape), " in model '", model, "'"));
    }
    const size_t slots = static_cast<size_t>(costmodel::OptimizerStateSlots(kind));
    if (!c.slots.empty() && c.slots.size() != slots) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter '", p.name, "' has ", c.slots.size(),
          " optimizer state vectors in the checkpoint; ", costmodel::OptimizerName(kind), " keeps ",
          slots));
    }
    matched.push_back(&c);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the checkpoint (of model '", checkpoint.model, "') has parameter '", by_name.begin()->first,
        "' that model '", model, "' lacks; it belongs to another model"));
  }
  std::map<std::string, Optimizer::State> state;
  for (const CheckpointParameter& c : checkpoint.parameters) {
    if (!c.slots.empty()) state[c.name].slots = c.slots;
  }
  TS_RETURN_IF_ERROR(optimizer.SetState(state, checkpoint.optimizer_updates,
                                        program.parameters()));
  for (size_t i = 0; i < matched.size(); ++i) {
    TrainingProgram::Parameter& p = program.parameters()[i];
    TS_RETURN_IF_ERROR(WriteFloats(program.backend(), p.value, matched[i]->values));
  }
  for (const CheckpointParameter& b : checkpoint.buffers) {
    // Constants this program lacks are ignored: buffers are statistics, not the model.
    if (program.PersistentValue(b.name).size() == b.values.size()) {
      TS_RETURN_IF_ERROR(program.SetPersistentValue(b.name, b.values));
    }
  }
  program.set_steps_run(checkpoint.program_steps);  // Dropout masks continue where they were
  return absl::OkStatus();
}

std::string EncodeCheckpoint(const Checkpoint& checkpoint) {
  // The header with the payload's size and checksum left as zeros, the payload, then the two
  // fields patched in: one buffer, no copy of the (possibly large) payload.
  ByteWriter out;
  out.Bytes(absl::string_view(kMagic, sizeof(kMagic)));
  out.U32(kCheckpointVersion);
  out.U32(static_cast<uint32_t>(kHeaderBytes));
  out.U64(0);
  out.U64(0);
  EncodePayload(checkpoint, out);
  std::string bytes = std::move(out).Take();
  const absl::string_view payload = absl::string_view(bytes).substr(kHeaderBytes);
  const uint64_t fields[2] = {payload.size(), Fnv1a64(payload)};
  for (int f = 0; f < 2; ++f) {
    for (int i = 0; i < 8; ++i) bytes[16 + 8 * f + i] = static_cast<char>((fields[f] >> (8 * i)) & 0xff);
  }
  return bytes;
}

absl::StatusOr<Checkpoint> DecodeCheckpoint(absl::string_view bytes, absl::string_view origin) {
  if (bytes.size() < kHeaderBytes) {
    return Corrupt(origin, absl::StrCat("is truncated: ", bytes.size(),
                                        " bytes, shorter than the 32-byte header"));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt(origin, "is not a Tessera checkpoint (bad magic)");
  }
  ByteReader header(bytes.substr(sizeof(kMagic), kHeaderBytes - sizeof(kMagic)));
  uint32_t version = 0, header_bytes = 0;
  uint64_t payload_bytes = 0, checksum = 0;
  header.U32(version, "");
  header.U32(header_bytes, "");
  header.U64(payload_bytes, "");
  header.U64(checksum, "");
  if (version < 1 || version > kCheckpointVersion || header_bytes != kHeaderBytes) {
    return Corrupt(origin, absl::StrCat("has format version ", version, " (header ", header_bytes,
                                        " bytes); this build reads versions 1 to ",
                                        kCheckpointVersion));
  }
  const absl::string_view payload = bytes.substr(kHeaderBytes);
  if (payload.size() != payload_bytes) {
    return Corrupt(origin, absl::StrCat(payload.size() < payload_bytes ? "is truncated" : "is too long",
                                        ": the header announces ", payload_bytes,
                                        " payload bytes, the file holds ", payload.size()));
  }
  const uint64_t actual = Fnv1a64(payload);
  if (actual != checksum) {
    return Corrupt(origin, absl::StrCat("is corrupt: checksum mismatch (stored ", absl::Hex(checksum),
                                        ", computed ", absl::Hex(actual), ")"));
  }
  ByteReader r(payload);
  Checkpoint c;
  if (!DecodePayload(r, version, c)) return Corrupt(origin, absl::StrCat("has a bad field: ", r.error()));
  return c;
}

namespace {

// The step of a file named "ckpt-<step>.tsr"; -1 for any other name.
int64_t StepOfName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "ckpt-") || !absl::ConsumeSuffix(&name, ".tsr")) return -1;
  if (name.empty() || name.size() > 18) return -1;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
  }
  int64_t step = -1;
  return absl::SimpleAtoi(name, &step) ? step : -1;
}

// A temporary "ckpt-<step>.tsr.tmp.<pid>.<n>" left by a process that no longer runs (a run
// killed while writing).
bool IsStaleTemporary(absl::string_view name) {
  const size_t tmp = name.find(".tsr.tmp.");
  if (tmp == absl::string_view::npos || StepOfName(name.substr(0, tmp + 4)) < 0) return false;
  absl::string_view rest = name.substr(tmp + 9);
  int pid = 0;
  if (!absl::SimpleAtoi(rest.substr(0, rest.find('.')), &pid) || pid <= 0) return false;
  if (pid == ::getpid()) return false;
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  // A zombie (exited, not yet reaped: e.g. an MPI rank whose launcher was killed, under an init
  // that reaps late) writes nothing either. /proc/<pid>/stat: "pid (comm) STATE ...".
  absl::StatusOr<std::string> stat =
      base::ReadFileText(absl::StrCat("/proc/", pid, "/stat"), "process status", 1 << 16);
  const size_t paren = stat.ok() ? stat->rfind(')') : std::string::npos;
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z';
}

// Flushes a directory's entries (a rename) to disk; best effort.
void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string CheckpointPath(const std::string& dir, int64_t step) {
  return (std::filesystem::path(dir) / absl::StrCat("ckpt-", step, ".tsr")).string();
}

absl::StatusOr<std::vector<CheckpointFile>> ListCheckpoints(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<CheckpointFile> files;
  if (!fs::exists(dir, ec)) return files;
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint directory '", dir, "' is not a directory; choose another checkpoint path"));
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOfName(it->path().filename().string());
    if (step >= 0 && it->is_regular_file(ec)) files.push_back({it->path().string(), step});
  }
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot list checkpoint directory '", dir, "': ", ec.message()));
  }
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) { return a.step > b.step; });
  return files;
}

absl::StatusOr<std::string> SaveCheckpoint(const std::string& dir, const Checkpoint& checkpoint,
                                           int keep) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create checkpoint directory '", dir,
                                                    "': ", ec.message()));
  }
  const std::string path = CheckpointPath(dir, checkpoint.step);
  TS_RETURN_IF_ERROR(base::WriteFileAtomically(path, EncodeCheckpoint(checkpoint), "checkpoint"));
  SyncDirectory(dir);  // the rename reaches the disk before older files are removed
  // Keep the `keep` newest at or before this step; later steps are stale (see the header).
  TS_ASSIGN_OR_RETURN(std::vector<CheckpointFile> files, ListCheckpoints(dir));
  int kept = 0;
  for (const CheckpointFile& f : files) {
    if (f.step <= checkpoint.step && kept < std::max(keep, 1)) {
      ++kept;
      continue;
    }
    fs::remove(f.path, ec);  // best effort: a file that stays is pruned next time
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsStaleTemporary(it->path().filename().string())) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
  return path;
}

absl::StatusOr<Checkpoint> ReadCheckpointFile(const CheckpointFile& file) {
  TS_ASSIGN_OR_RETURN(const std::string bytes,
                      base::ReadFileText(file.path, "checkpoint", kMaxFileBytes));
  TS_ASSIGN_OR_RETURN(Checkpoint c, DecodeCheckpoint(bytes, file.path));
  if (c.step != file.step) {
    return Corrupt(file.path,
                   absl::StrCat("holds step ", c.step, " but is named for step ", file.step));
  }
  return c;
}

}  // namespace tessera::exec
