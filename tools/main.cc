// The `tessera` command: dispatches to its subcommands.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/tools/cli/did_you_mean.h"
#include "tessera/tools/inspect_command.h"
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
#include "tessera/tools/calibrate_command.h"
#include "tessera/tools/train_command.h"
#endif
#ifdef TESSERA_HAVE_MEMORY_COMMAND
#include "tessera/tools/memory_command.h"
#endif
#ifdef TESSERA_HAVE_PLAN_COMMANDS
#include "tessera/tools/plan_command.h"
#include "tessera/tools/recommend_command.h"
#endif

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
};

const Command kCommands[] = {
    {"inspect", "per-op estimates of a model (shapes, params, FLOPs, activation bytes)",
     tessera::tools::RunInspect},
#ifdef TESSERA_HAVE_PLAN_COMMANDS
    {"plan", "per-layer parallel strategy, memory per device and predicted step time",
     tessera::tools::RunPlan},
    {"recommend", "time to train and cost per cluster and device count, and the choice",
     tessera::tools::RunRecommend},
#endif
#ifdef TESSERA_HAVE_MEMORY_COMMAND
    {"memory", "per-device training memory: activation arena vs lower bound (or a MiniMalloc CSV)",
     tessera::tools::RunMemory},
#endif
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
    {"calibrate", "measure this machine and write the `local` cluster (--cluster local)",
     tessera::tools::RunCalibrate},
    {"train", "train a model on N workers with a hybrid plan; report predicted vs measured",
     tessera::tools::RunTrain},
#endif
};

std::string Usage() {
  std::string text =
      "usage: tessera COMMAND [options]\n\n"
      "Tessera estimates what every op of a neural network costs, decides how to split it\n"
      "over many GPUs, and runs it. MODEL arguments are an ONNX file, a Tessera graph\n"
      "file (.json) or a built-in model (zoo:alexnet, zoo:vgg16, zoo:resnet50, zoo:gnmt,\n"
      "zoo:crnn, zoo:transformer; nmt and ocr, CPU-sized versions of gnmt and crnn that train\n"
      "here).\n\ncommands:\n";
  for (const Command& c : kCommands) {
    const std::string name = c.name;
    absl::StrAppend(&text, "  ", name, std::string(name.size() < 12 ? 12 - name.size() : 1, ' '),
                    c.summary, "\n");
  }
  absl::StrAppend(&text,
                  "\nRun 'tessera COMMAND --help' for a command's options.\n"
                  "  tessera inspect zoo:gnmt\n"
#ifdef TESSERA_HAVE_PLAN_COMMANDS
                  "  tessera plan zoo:alexnet --devices 64 --cluster v100-vpc32 --batch 2048\n"
                  "  tessera recommend zoo:resnet50 --samples 1281167 --epochs 90 --max-hours 24\n"
#endif
#ifdef TESSERA_HAVE_MEMORY_COMMAND
                  "  tessera memory zoo:resnet50 --devices 8 --batch 256\n"
                  "  tessera memory --buffers A.1048576.csv -o A.out.csv\n"
#endif
#ifdef TESSERA_HAVE_CALIBRATE_COMMAND
                  "  tessera train nmt --workers 2 --report\n"
#endif
                  );
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << Usage();
    return 2;
  }
  const std::string command = args.front();
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << Usage();
    return 0;
  }
  if (command == "--version") {
    std::cout << "tessera " << TESSERA_VERSION << "\n";
    return 0;
  }
  for (const Command& c : kCommands) {
    if (command == c.name) {
      args.erase(args.begin());
      return c.run(args, std::cout, std::cerr);
    }
  }
  std::vector<std::string> names = {"help", "--help", "--version"};
  for (const Command& c : kCommands) names.emplace_back(c.name);
  std::cerr << "tessera: unknown command '" << command << "'"
            << tessera::tools::SuggestionText(command, names) << "\n\n"
            << Usage();
  return 2;
}
