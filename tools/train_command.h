// `tessera train`: plans a model for N workers (or follows a plan file) and trains it with the
// hybrid runtime on threads of this process or as MPI ranks, then reports predicted against
// measured step time and bytes (exec/hybrid_training.h, docs/training.md).
//
//   tessera train nmt --workers 2 --steps 20 --report
//   tessera train zoo:crnn --batch 8 --workers 2 --strategy late --report-json r.json
//   mpiexec -n 2 build/bin/tessera train nmt --comm mpi --workers 2 --report
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tessera::tools {

// 0 ok, 1 model/plan/training/file error, 2 usage error.
int RunTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::tools
