// `dvejit bench`: the workloads of issue 4 on every tier, with the roof kernel measured in the
// same run (Google Benchmark underneath; --json FILE writes its JSON).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace dvejit {
int BenchMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
}  // namespace dvejit
