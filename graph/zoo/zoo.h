// The model zoo: published networks built with the GraphBuilder, at their
// published configurations, as training graphs (forward pass plus loss; labels
// are data inputs); plus "nmt" and "ocr", CPU-sized versions of "gnmt" and
// "crnn" that train on this machine.
//
//   for (const ZooModelInfo& m : ZooModels()) std::cout << m.name << "\n";
//   absl::StatusOr<Graph> g = BuildZooModel("resnet50");        // default batch (256)
//   absl::StatusOr<Graph> h = BuildZooModel("gnmt", 64);        // 64 sentence pairs
//   absl::StatusOr<Graph> k = BuildZooModel("nmt", 16);         // CPU-sized GNMT, 16 pairs
//   BuildZooModel("lenet").status();   // NotFound: lists the available names
//
// Each model's configuration, parameter count and deviations: docs/zoo.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/graph.h"

namespace tessera::graph::zoo {

struct ZooModelInfo {
  std::string name;            // "alexnet"
  std::string description;     // one line
  int64_t default_batch;       // per-step global batch used when batch == 0
  int64_t published_params;    // the published figure the model must match (nmt, ocr: the
                               // count of their PyTorch twins in bench/torch_step_time.py)
  std::string source;          // where the figure comes from (paper / reference implementation)
};

const std::vector<ZooModelInfo>& ZooModels();

// batch 0: the model's default. Unknown name: NotFound listing the available names.
absl::StatusOr<Graph> BuildZooModel(absl::string_view name, int64_t batch = 0);

// The "nmt" model sized for real text (jobs/nmt trains it on a corpus): a subword vocabulary
// shared by both sides (or one per side, target_vocab) and `length` tokens per sentence; the
// defaults are the zoo's "nmt". InvalidArgument when batch < 1, a vocabulary < 5, length < 2 or
// dropout outside [0, 1).
struct NmtSize {
  int64_t batch = 0;
  int64_t vocab = 2000;         // the source's (and, when target_vocab is 0, the target's)
  int64_t length = 20;
  int64_t target_vocab = 0;     // the decoder's embedding and the classifier; 0: vocab
  double dropout = 0;           // in [0, 1): Dropout on both embeddings, between the encoder's
                                // layers and on the attention's output (training only)
  // Two more inputs, src_lengths [B] (i64) and src_mask [B, length] (0 at a source's words,
  // -1e9 at its padding, which goes on the right): the encoder's LSTMs stop at each source's
  // length and the attention gives its padding no weight, so padding changes nothing and a
  // batch can run at any length that holds it (the corpus job's shape variants).
  bool mask_padding = false;
};
absl::StatusOr<Graph> BuildNmt(const NmtSize& size);

// One decoding step of BuildNmt's model, for decoding without re-running the whole model per
// position: its decoder LSTM, attention and classifier for one target token per row, with the
// same parameter names (load the trained ones by name), no dropout. `size.length` is the
// sources' length S. Inputs: tgt_tokens [B, 1] (the previous token), tgt_labels [B, 1] (for the
// loss every program needs; <pad> gives none), tgt_lengths [B] (all 1), the state before the
// step kNmtStepH0 and kNmtStepC0 [1, B, 256] (at the first step the encoder's final
// kNmtEncoderH and kNmtEncoderC), the encoder's outputs kNmtStepEncoder [S, B, 256] (BuildNmt's
// kNmtEncoderOutput) and, with mask_padding, src_mask [B, S]. Outputs: the loss, the logits
// "classifier" [B, target vocabulary] and the state after the step kNmtStepHn, kNmtStepCn.
// The whole model's output at position t is this step's after t steps from the encoder's state
// (its decoder is causal and its attention reads only the decoder's output).
absl::StatusOr<Graph> BuildNmtDecoderStep(const NmtSize& size);
inline constexpr char kNmtEncoderOutput[] = "encoder.rnn.1.squeeze";  // [S, B, 256]
inline constexpr char kNmtEncoderH[] = "encoder.rnn.1.h_n";           // [1, B, 256]
inline constexpr char kNmtEncoderC[] = "encoder.rnn.1.c_n";
inline constexpr char kNmtStepEncoder[] = "encoder_states";
inline constexpr char kNmtStepH0[] = "h0";
inline constexpr char kNmtStepC0[] = "c0";
inline constexpr char kNmtStepHn[] = "decoder.rnn.1";
inline constexpr char kNmtStepCn[] = "decoder.rnn.2";

// The "ocr" model sized for real text lines (jobs/ocr trains it on a corpus): 32-pixel-high
// images `width` wide (a multiple of 4; width / 4 CTC frames), `classes` CTC classes with the
// blank and labels of up to `max_label` characters; the defaults are the zoo's "ocr".
// InvalidArgument naming the sizes when one is out of range.
struct OcrSize {
  int64_t batch = 0;
  int64_t width = 128;
  int64_t classes = 37;
  int64_t max_label = 10;
  // Both bi-LSTMs read input_lengths (each line's frames, its padding on the right) as their
  // sequence_lens: they stop at a line's last frame, so the frames past it change nothing the
  // CTC loss reads, and a batch can run at any width that holds its lines with a margin of
  // kOcrFrameMargin frames (the convolutions' reach; the corpus job's shape variants). Batch
  // norm's training statistics still see the padding.
  bool mask_padding = false;
};
// Frames past a line's last that a cut of its image must keep so that the convolutions give the
// line's own frames the values they have at the whole width: past the cut the layers pad with
// 0 where the whole image has ReLU(bias), which reaches the last 3 frames; 4 keeps one spare.
inline constexpr int64_t kOcrFrameMargin = 4;
absl::StatusOr<Graph> BuildOcr(const OcrSize& size);

}  // namespace tessera::graph::zoo
