// `dvejit train-step`: the main job — replays a built-in batch-norm training step (forward
// statistics and backward chain over 128 channels) and reports accuracy against float64 math
// and speed.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace dvejit {
int TrainStepMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
}  // namespace dvejit
