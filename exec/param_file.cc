// Parameter files (param_file.h).
#include "tessera/exec/param_file.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/byte_codec_impl.h"

namespace tessera::exec {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'P', 'A', 'R', 'A', 'M'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxRank = 64;
constexpr int64_t kMaxFileBytes = int64_t{1} << 40;

}  // namespace

absl::Status WriteParamFile(const std::string& path, const std::vector<NamedParameter>& params) {
  internal::ByteWriter w;
  w.Bytes(absl::string_view(kMagic, 8));
  w.U32(kVersion);
  w.U32(static_cast<uint32_t>(params.size()));
  for (const NamedParameter& p : params) {
    if (graph::NumElements(p.shape) != static_cast<int64_t>(p.values.size())) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", p.name, "' has ",
                                                     p.values.size(), " values for shape ",
                                                     graph::ShapeString(p.shape)));
    }
    w.String(p.name);
    w.U32(static_cast<uint32_t>(p.shape.size()));
    for (int64_t d : p.shape) w.I64(d);
    w.Floats(p.values);
  }
  std::string bytes = std::move(w).Take();
  internal::ByteWriter sum;
  sum.U64(internal::Fnv1a64(bytes));
  bytes += std::move(sum).Take();
  return base::WriteFileAtomically(path, bytes, "parameter file");
}

absl::StatusOr<std::vector<NamedParameter>> ReadParamFile(const std::string& path) {
  TS_ASSIGN_OR_RETURN(std::string bytes,
                      base::ReadFileText(path, "parameter file", kMaxFileBytes));
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid Tessera parameter file (",
                                                   why, ")"));
  };
  if (bytes.size() < 24 || absl::string_view(bytes).substr(0, 8) != absl::string_view(kMagic, 8)) {
    return bad("no TSRPARAM header");
  }
  const absl::string_view body(bytes.data(), bytes.size() - 8);
  internal::ByteReader tail(absl::string_view(bytes).substr(bytes.size() - 8));
  uint64_t checksum = 0;
  tail.U64(checksum, "checksum");
  if (checksum != internal::Fnv1a64(body)) return bad("checksum mismatch: the file is damaged");
  internal::ByteReader r(body.substr(8));
  uint32_t version = 0, count = 0;
  if (!r.U32(version, "version") || !r.U32(count, "count")) return bad(r.error());
  if (version != kVersion) return bad(absl::StrCat("version ", version, ", expected 1"));
  std::vector<NamedParameter> params(count);
  for (NamedParameter& p : params) {
    uint32_t rank = 0;
    if (!r.String(p.name, "name") || !r.U32(rank, "rank")) return bad(r.error());
    if (rank > kMaxRank) return bad(absl::StrCat("parameter '", p.name, "' has rank ", rank));
    p.shape.resize(rank);
    for (int64_t& d : p.shape) {
      if (!r.I64(d, "dimension")) return bad(r.error());
      if (d < 0) return bad(absl::StrCat("parameter '", p.name, "' has a negative dimension"));
    }
    if (!r.Floats(p.values, p.name)) return bad(r.error());
    if (static_cast<int64_t>(p.values.size()) != graph::NumElements(p.shape)) {
      return bad(absl::StrCat("parameter '", p.name, "' holds ", p.values.size(),
                              " values for shape ", graph::ShapeString(p.shape)));
    }
  }
  if (r.left() != 0) return bad(absl::StrCat(r.left(), " bytes after the last parameter"));
  return params;
}

}  // namespace tessera::exec
