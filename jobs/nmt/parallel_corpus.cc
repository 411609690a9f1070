// Indexed parallel text (parallel_corpus.h).
#include "tessera/jobs/nmt/parallel_corpus.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tessera/base/status_macros.h"
#include "tessera/jobs/utf8.h"

namespace tessera::jobs::nmt {

struct ParallelCorpus::File {
  std::string path;
  int fd = -1;
  ~File() {
    if (fd >= 0) close(fd);
  }
};

namespace {

absl::StatusOr<std::shared_ptr<ParallelCorpus::File>> OpenFile(const std::string& path) {
  auto f = std::make_shared<ParallelCorpus::File>();
  f->path = path;
  f->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read parallel text '", path, "': ", std::strerror(errno)));
  }
  return f;
}

// Every non-empty line of `path`: where its text starts and its length without the line end.
struct Line {
  int64_t number = 0;  // 1-based
  ParallelCorpus::Span span;
  std::string text;
};

absl::Status ForEachLine(const std::string& path,
                         const std::function<absl::Status(const Line&)>& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read '", path, "'"));
  Line line;
  int64_t offset = 0;
  std::string raw;
  while (std::getline(in, raw)) {
    ++line.number;
    const int64_t next = offset + static_cast<int64_t>(raw.size()) + 1;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (!raw.empty()) {
      if (!DecodeUtf8(raw).has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", line.number, ": the text is not UTF-8"));
      }
      line.span = {offset, static_cast<int64_t>(raw.size())};
      line.text = std::move(raw);
      TS_RETURN_IF_ERROR(visit(line));
    }
    offset = next;
  }
  return absl::OkStatus();
}

absl::Status CheckSide(const std::string& path, int64_t line, const char* side, int64_t length) {
  if (length > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": empty ", side));
}

}  // namespace

absl::StatusOr<ParallelCorpus> ParallelCorpus::Open(const std::string& spec) {
  ParallelCorpus c;
  c.name_ = spec;
  const std::vector<std::string> files = absl::StrSplit(spec, ',');
  if (files.size() > 2 || files[0].empty() || (files.size() == 2 && files[1].empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallel text '", spec, "': give one TSV (source<TAB>target) or two files SOURCE,TARGET"));
  }
  TS_ASSIGN_OR_RETURN(std::shared_ptr<File> first, OpenFile(files[0]));
  c.source_file_ = c.target_file_ = first;
  if (files.size() == 1) {
    TS_RETURN_IF_ERROR(ForEachLine(files[0], [&](const Line& l) -> absl::Status {
      const size_t tab = l.text.find('\t');
      if (tab == std::string::npos || l.text.find('\t', tab + 1) != std::string::npos) {
        return absl::InvalidArgumentError(absl::StrCat(
            files[0], ":", l.number, ": want one tab between source and target, found ",
            tab == std::string::npos ? "none" : "more than one"));
      }
      const int64_t t = static_cast<int64_t>(tab);
      TS_RETURN_IF_ERROR(CheckSide(files[0], l.number, "source", t));
      TS_RETURN_IF_ERROR(CheckSide(files[0], l.number, "target", l.span.length - t - 1));
      c.pairs_.push_back({{l.span.offset, t}, {l.span.offset + t + 1, l.span.length - t - 1}});
      return absl::OkStatus();
    }));
  } else {
    TS_ASSIGN_OR_RETURN(c.target_file_, OpenFile(files[1]));
    std::vector<Line> sources;
    TS_RETURN_IF_ERROR(ForEachLine(files[0], [&](const Line& l) {
      sources.push_back({l.number, l.span, ""});
      return absl::OkStatus();
    }));
    size_t k = 0;
    TS_RETURN_IF_ERROR(ForEachLine(files[1], [&](const Line& l) -> absl::Status {
      if (k >= sources.size() || sources[k].number != l.number) {
        return absl::InvalidArgumentError(absl::StrCat(
            files[1], ":", l.number, ": has a sentence where ", files[0],
            " has none; the two files must hold one sentence per line, line for line"));
      }
      c.pairs_.push_back({sources[k++].span, l.span});
      return absl::OkStatus();
    }));
    if (k != sources.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          files[0], ":", sources[k].number, ": has a sentence where ", files[1], " has none"));
    }
  }
  if (c.pairs_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("parallel text '", spec, "' holds no pairs"));
  }
  return c;
}

absl::StatusOr<SentencePair> ParallelCorpus::Read(int64_t i) const {
  const auto read = [](const File& f, Span s) -> absl::StatusOr<std::string> {
    std::string text(static_cast<size_t>(s.length), '\0');
    const ssize_t got = pread(f.fd, text.data(), text.size(), s.offset);
    if (got != static_cast<ssize_t>(text.size())) {
      return absl::DataLossError(absl::StrCat("'", f.path, "' changed or shrank while training ",
                                              "(short read at byte ", s.offset, ")"));
    }
    return text;
  };
  SentencePair p;
  TS_ASSIGN_OR_RETURN(p.source, read(*source_file_, pairs_[i].source));
  TS_ASSIGN_OR_RETURN(p.target, read(*target_file_, pairs_[i].target));
  return p;
}

ParallelCorpus ParallelCorpus::Subset(const std::vector<int64_t>& indices,
                                      const std::string& name) const {
  ParallelCorpus c;
  c.name_ = name;
  c.source_file_ = source_file_;
  c.target_file_ = target_file_;
  c.pairs_.reserve(indices.size());
  for (int64_t i : indices) c.pairs_.push_back(pairs_[i]);
  return c;
}

}  // namespace tessera::jobs::nmt
