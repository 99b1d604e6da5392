// Google Benchmark suite of the reference interpreter (tier 0): elements/s for Stats2,
// GradAccum2, BackProp, TensorScalar and Reciprocal on 128 channels × {512, 4096} elements,
// fp32 and bf16. One "element" is one element of one channel's source tensor.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "bench/workloads.h"
#include "runtime/executor.h"

namespace dvejit {
namespace {

constexpr int kChannels = 128;

void BM_Interpreter(benchmark::State& state, const std::string& op, Dtype dt) {
  const int elements = static_cast<int>(state.range(0));
  Machine machine(Generation::Cayman);
  machine.PreloadReciprocals();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  std::vector<uint8_t> row(128 << 10);
  for (size_t i = 0; i + 4 <= row.size(); i += 4) {
    const float v = u(rng);
    std::memcpy(&row[i], &v, 4);
  }
  for (int c = 0; c < kChannels; ++c)
    (void)machine.Write(Space::Sbuf, c, 1, 0, row, static_cast<uint32_t>(row.size()));
  const std::vector<Instruction> program = workloads::TiledOpProgram(op, kChannels, elements, dt, Generation::Cayman);
  for (auto _ : state) {
    RunReport r = RunProgram(machine, program, RunOptions{});
    if (!r.status.ok()) {
      state.SkipWithError(std::string(r.status.message()).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * int64_t{kChannels} * elements);
}

void Register() {
  for (const char* op : {"Stats2", "GradAccum2", "BackProp", "TensorScalar", "Reciprocal"})
    for (Dtype dt : {Dtype::FP32, Dtype::BFLOAT16}) {
      const std::string name = std::string("interp/") + op + "/" + (dt == Dtype::FP32 ? "fp32" : "bf16");
      benchmark::RegisterBenchmark(name.c_str(), BM_Interpreter, std::string(op), dt)
          ->Arg(512)
          ->Arg(4096)
          ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace
}  // namespace dvejit

int main(int argc, char** argv) {
  dvejit::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
