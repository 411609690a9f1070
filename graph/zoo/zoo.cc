// The zoo's registry: model infos and their builder functions.
#include "tessera/graph/zoo/zoo.h"


#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/graph/zoo/zoo_impl.h"

namespace tessera::graph::zoo {
namespace {

using BuildFn = absl::StatusOr<Graph> (*)(int64_t batch);

struct Entry {
  ZooModelInfo info;
  BuildFn build;
};

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = {
      {{"alexnet", "AlexNet as torchvision builds it (single tower), 224x224, 1000 classes", 128,
        61'100'840, "torchvision.models.alexnet (Krizhevsky et al. 2012 had ~60M, two towers)"},
       internal::BuildAlexNet},
      {{"vgg16", "VGG-16 (configuration D), 224x224, 1000 classes", 256, 138'357'544,
        "Simonyan & Zisserman 2015, Table 2 (138M); torchvision.models.vgg16"},
       internal::BuildVgg16},
      {{"resnet50", "ResNet-50 v1.5 (stride on the 3x3 conv), 224x224, 1000 classes", 256,
        25'557'032, "torchvision.models.resnet50 (He et al. 2016 report 25.6M)"},
       internal::BuildResNet50},
      {{"gnmt",
        "GNMT v2: 4+4 LSTM layers of 1024, bi-directional first encoder layer, normalized "
        "Bahdanau attention, shared 32,320-token embedding, 50-token sentences",
        128, 160'671'297,
        "MLPerf GNMT v2 reference (mlcommons/training rnn_translator), counted from its modules"},
       internal::BuildGnmt},
      {{"crnn",
        "CRNN: 7 conv layers, 2 bi-LSTM(256) with per-frame projections, 37 classes, CTC, "
        "1x32x100 input",
        64, 8'300'000, "Shi, Bai & Yao 2015 (TPAMI 2017): 8.3M parameters, stated rounded"},
       internal::BuildCrnn},
      {{"transformer",
        "GPT-2 small LM: 12 pre-LN layers, 768 wide, 12 heads, 1024 tokens, 50,257 vocabulary, "
        "tied output head",
        512, 124'439'808, "Radford et al. 2019 (GPT-2 small); HuggingFace gpt2 checkpoint"},
       internal::BuildTransformer},
      {{"nmt",
        "CPU-sized version of gnmt that trains on this machine: bi-LSTM 256 + LSTM 256 encoder, "
        "LSTM 256 decoder with dot-product attention, 2,000-token vocabulary, 20 tokens",
        32, 3'131'600, "bench/torch_step_time.py (seq2seq_small): the same model in PyTorch"},
       internal::BuildNmtSmall},
      {{"ocr",
        "CPU-sized version of crnn that trains on this machine: 5 conv layers 32-128, "
        "2 bi-LSTM(128) with per-frame projections, 37 classes, CTC, 1x32x128 input",
        32, 844'453, "bench/torch_step_time.py (crnn_small): the same model in PyTorch"},
       internal::BuildOcrSmall},
  };
  return entries;
}

}  // namespace

const std::vector<ZooModelInfo>& ZooModels() {
  static const std::vector<ZooModelInfo> infos = [] {
    std::vector<ZooModelInfo> v;
    for (const Entry& e : Entries()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

absl::StatusOr<Graph> BuildZooModel(absl::string_view name, int64_t batch) {
  const std::string key = absl::AsciiStrToLower(name);
  std::vector<std::string> names;
  for (const Entry& e : Entries()) {
    names.push_back(e.info.name);
    if (e.info.name != key) continue;
    if (batch < 0) {
      return absl::InvalidArgumentError(absl::StrCat("zoo model '", e.info.name, "': batch ",
                                                     batch, " must be >= 1 (or 0 for the default ",
                                                     e.info.default_batch, ")"));
    }
    return e.build(batch == 0 ? e.info.default_batch : batch);
  }
  return absl::NotFoundError(absl::StrCat("unknown zoo model '", name,
                                          "'; available: ", absl::StrJoin(names, ", ")));
}

}  // namespace tessera::graph::zoo
