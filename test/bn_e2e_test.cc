// End-to-end batch norm on the interpreter: the forward statistics (Stats2 tiles + Aggregate)
// and the backward chain (GradAccum2 per tile, TensorTensor adds, A = γ·vf/N, ParamLoad2,
// BackProp per tile) over 128 channels × 4096 elements, compared with float64 math within the
// stated bounds (bench/workloads.cc BnErrorBounds: mean 1e-5, var/dβ/dγ 1e-4, dx 1e-4 for fp32
// and 1e-2 for bf16 outputs).
#include <gtest/gtest.h>

#include "bench/workloads.h"
#include "runtime/executor.h"

namespace dvejit {
namespace {

class BnEndToEnd : public ::testing::TestWithParam<Dtype> {};

TEST_P(BnEndToEnd, ForwardAndBackwardMatchFloat64) {
  const Dtype dtype = GetParam();
  const Generation gen = Generation::Cayman;
  const workloads::BnLayout l = workloads::MakeBnLayout(128, 4096, dtype);
  Machine machine(gen);
  const workloads::BnInputs in = workloads::LoadBnInputs(machine, l, 7);
  const float eps = 1e-5f;
  const std::vector<Instruction> program = workloads::BnTrainingStep(l, gen, eps);
  const RunReport report = RunProgram(machine, program, RunOptions{});
  ASSERT_TRUE(report.status.ok()) << report.status;
  EXPECT_EQ(report.executed, static_cast<int64_t>(program.size()));
  const workloads::BnErrors e = workloads::CompareBnStep(machine, l, in, eps);
  const workloads::BnErrors bound = workloads::BnErrorBounds(dtype);
  EXPECT_LE(e.mean, bound.mean);
  EXPECT_LE(e.var, bound.var);
  EXPECT_LE(e.dbeta, bound.dbeta);
  EXPECT_LE(e.dgamma, bound.dgamma);
  EXPECT_LE(e.dx, bound.dx);
  // The results are not trivially zero: the errors are measured, not vacuous.
  EXPECT_GT(e.var + e.dx, 0.0);
}

TEST_P(BnEndToEnd, ReplayIsBitIdentical) {
  const Dtype dtype = GetParam();
  const Generation gen = Generation::Cayman;
  const workloads::BnLayout l = workloads::MakeBnLayout(128, 1024, dtype);
  const std::vector<Instruction> program = workloads::BnTrainingStep(l, gen, 1e-5f);
  std::vector<uint8_t> first, second;
  for (std::vector<uint8_t>* out : {&first, &second}) {
    Machine machine(gen);
    workloads::LoadBnInputs(machine, l, 11);
    ASSERT_TRUE(RunProgram(machine, program, RunOptions{}).status.ok());
    out->resize(static_cast<size_t>(l.end) * 128);
    ASSERT_TRUE(machine.Read(Space::Sbuf, 0, 128, 0, l.end, *out).ok());
  }
  EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BnEndToEnd, ::testing::Values(Dtype::FP32, Dtype::BFLOAT16),
                         [](const auto& info) {
                           return std::string(info.param == Dtype::FP32 ? "fp32" : "bf16");
                         });

}  // namespace
}  // namespace dvejit
