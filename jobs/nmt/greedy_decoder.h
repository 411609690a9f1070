// Greedy decoding with the teacher-forced training graph: the zoo's "nmt" decoder is causal
// (its output at position t reads tgt_tokens[0..t] only), so running the same graph forward
// once per position, each time feeding the tokens predicted so far, decodes greedily without
// a separate step-by-step decoder graph.
//
//   PredictFn predict = [&](const exec::Batch& b) -> absl::StatusOr<std::vector<int64_t>> {
//     TS_RETURN_IF_ERROR(exec::SetInputs(*program, b));
//     TS_RETURN_IF_ERROR(program->RunForward());
//     return PredictedIds(program->Output("classifier"), batch, length, 2000);  // metrics.h
//   };
//   TS_ASSIGN_OR_RETURN(auto rows, GreedyDecode(batch_inputs, batch, length, predict));
//   std::vector<std::string> words = vocab.Decode(rows[0]);
//
// Pass t (the t-th call of `predict`, from 0) predicts position t; its prediction becomes
// tgt_tokens[t + 1] for the next pass; a row is finished at its first <eos>, and decoding stops
// when every row is (at most `length` passes).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/exec/data_source.h"

namespace tessera::jobs::nmt {

// The model's argmax ids [batch * length], batch-major, for the inputs of `batch`.
using PredictFn = std::function<absl::StatusOr<std::vector<int64_t>>(const exec::Batch&)>;

// Each row's predicted ids, up to and including its first <eos> (or `length` ids). `inputs`
// holds the model's data inputs (e.g. from NmtDataSource); its tgt_tokens are replaced.
// InvalidArgument when tgt_tokens is missing or not batch * length integers, or when `predict`
// returns another number of ids; `predict`'s own errors are passed on.
absl::StatusOr<std::vector<std::vector<int64_t>>> GreedyDecode(const exec::Batch& inputs,
                                                               int64_t batch, int64_t length,
                                                               const PredictFn& predict);

}  // namespace tessera::jobs::nmt
