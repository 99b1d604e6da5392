// Google Benchmark suite of the reference interpreter (tier 0): elements/s for Stats2,
// GradAccum2, BackProp, TensorScalar and Reciprocal on 128 channels × {512, 4096} elements,
// fp32 and bf16. One "element" is one element of one channel's source tensor.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "bench/workloads.h"
#include "frontend/structs.h"
#include "runtime/executor.h"

namespace dvejit {
namespace {

using workloads::Sbuf;
constexpr int kChannels = 128;

template <int D>
TensorPattern<D> Row(uint32_t offset, uint16_t count) {
  TensorPattern<D> t{};
  t.addr = Sbuf(0, offset, Generation::Cayman);
  t.num[0] = count;
  t.step[0] = 1;
  for (int d = 1; d < D; ++d) t.num[d] = 1;
  return t;
}
template <typename S>
Instruction Record(Opcode op, const S& s) {
  Instruction inst;
  StoreTo(s, inst.bytes.data());
  inst.bytes[0] = static_cast<uint8_t>(op);
  inst.bytes[1] = 0x10;
  return inst;
}
uint8_t D(Dtype d) { return static_cast<uint8_t>(d); }

// Tiles of `tile` elements covering `elements` per channel: x at 0, dy at 64 KiB, out at
// 128 KiB, scalars at 192 KiB.
constexpr uint32_t kX = 0, kDy = 64 << 10, kOut = 128 << 10, kScalars = 192 << 10;

std::vector<Instruction> Program(const std::string& op, int elements, Dtype dt) {
  std::vector<Instruction> p;
  const int tile = op == "Stats2" ? 512 : std::min(elements, 4096);
  const int es = DtypeSize(dt);
  for (int base = 0; base < elements; base += tile) {
    const uint32_t off = static_cast<uint32_t>(base * es);
    const auto n = static_cast<uint16_t>(tile);
    if (op == "Stats2") {
      S4D2_BN s{};
      s.src = Row<4>(kX + off, n);
      s.in_dtype = D(dt);
      s.out_dtype = D(Dtype::FP32);
      s.num_active_channels = kChannels;
      s.even_count = s.odd_count = tile / 2.0f;
      s.dst = Row<2>(kOut + base / tile * 24, 6);
      p.push_back(Record(Opcode::BatchNormStats2, s));
    } else if (op == "GradAccum2") {
      S3S3D1_BN2 g{};
      g.imm0 = Sbuf(0, kScalars, Generation::Cayman);
      g.imm1 = Sbuf(0, kScalars + 4, Generation::Cayman);
      g.src0 = Row<3>(kX + off, n);
      g.src1 = Row<3>(kDy + off, n);
      g.dst = Row<1>(kOut + base / tile * 12, 3);
      g.in_dtypes = static_cast<uint8_t>(D(dt) | D(dt) << 4);
      g.imm_out_dtypes = static_cast<uint8_t>(D(Dtype::FP32) | D(Dtype::FP32) << 4);
      g.imm_srcs = 0x11;
      g.num_active_channels = kChannels;
      p.push_back(Record(Opcode::BatchNormGradAccumulate2, g));
    } else if (op == "BackProp") {
      S3S3D3_TT b{};
      b.in_dtypes = static_cast<uint8_t>(D(dt) | D(dt) << 4);
      b.out_dtype = D(dt);
      b.num_active_channels = kChannels;
      b.src0 = Row<3>(kX + off, n);
      b.src1 = Row<3>(kDy + off, n);
      b.dst = Row<3>(kOut + off, n);
      p.push_back(Record(Opcode::BatchNormBackProp, b));
    } else if (op == "TensorScalar") {
      S3D3_TS t{};
      t.src = Row<3>(kX + off, n);
      t.dst = Row<3>(kOut + off, n);
      t.in_dtype = t.out_dtype = D(dt);
      t.num_active_channels = kChannels;
      t.op0 = static_cast<uint8_t>(AluOp::MULT);
      t.op1 = static_cast<uint8_t>(AluOp::ADD);
      const float a = 1.5f, b = -0.25f;
      std::memcpy(&t.imm0, &a, 4);
      std::memcpy(&t.imm1, &b, 4);
      p.push_back(Record(Opcode::TensorScalarArith, t));
    } else {  // Reciprocal
      S4D4_TR r{};
      r.src = Row<4>(kX + off, n);
      r.dst = Row<4>(kOut + off, n);
      r.in_dtype = r.out_dtype = D(dt);
      r.num_active_channels = kChannels;
      p.push_back(Record(Opcode::Reciprocal, r));
    }
  }
  return p;
}

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
  const std::vector<Instruction> program = Program(op, elements, dt);
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
