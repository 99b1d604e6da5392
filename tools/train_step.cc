#include "tools/train_step.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "bench/workloads.h"
#include "frontend/strcat.h"
#include "runtime/executor.h"
#include "runtime/machine.h"
#include "tools/program_io.h"

namespace dvejit {

using workloads::BnErrors;

int TrainStepMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int elements = 4096, steps = 5, threads = 1;
  Dtype dtype = Dtype::FP32;
  Generation gen = Generation::Cayman;
  ExecutionTier tier = ExecutionTier::Interp;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      out << "usage: dvejit train-step [--elements N] [--dtype fp32|bf16] [--steps S] [--gen G]\n"
             "                         [--tier interp|jit] [--threads T]\n"
             "Replays a batch-norm training step (forward statistics + backward chain) on 128\n"
             "channels x N elements (N a multiple of 512, default 4096) and reports the error\n"
             "against float64 math and the time per step. Exit 1 when an error bound is missed.\n"
             "--threads T (1-256, default 1): the JIT splits each region's channel blocks across\n"
             "up to T threads.\n";
      return 0;
    } else if (a == "--tier" && has_value) {
      const std::string t = args[++i];
      if (t == "interp") tier = ExecutionTier::Interp;
      else if (t == "jit") tier = ExecutionTier::Jit;
      else return err << "dvejit: --tier is interp or jit\n", 2;
    } else if (a == "--threads") {
      const std::optional<int> n = ParseThreadCount(has_value ? std::optional<std::string>(args[++i]) : std::nullopt);
      if (!n) return err << "dvejit: " << kThreadsRange << "\n", 2;
      threads = *n;
    } else if (a == "--elements" && has_value) {
      elements = std::atoi(args[++i].c_str());
    } else if (a == "--steps" && has_value) {
      steps = std::atoi(args[++i].c_str());
    } else if (a == "--dtype" && has_value) {
      const std::string d = args[++i];
      if (d == "fp32") dtype = Dtype::FP32;
      else if (d == "bf16") dtype = Dtype::BFLOAT16;
      else return err << "dvejit: --dtype is fp32 or bf16\n", 2;
    } else if (a == "--gen" && has_value) {
      auto g = ParseGeneration(args[++i]);
      if (!g) return err << "dvejit: --gen needs sunda|cayman|mariana|maverick\n", 2;
      gen = *g;
    } else {
      return err << "dvejit: train-step: unexpected argument '" << a << "'\n", 2;
    }
  }
  const workloads::BnLayout l = workloads::MakeBnLayout(128, elements, dtype);
  if (elements < workloads::kStatsTile || elements % workloads::kStatsTile != 0 || steps < 1 ||
      l.end > GeometryOf(gen).sbuf_active_bytes)
    return err << "dvejit: train-step: --elements must be a multiple of 512 that fits one SBUF "
                  "partition, --steps >= 1\n",
           2;
  const float eps = 1e-5f;
  std::vector<Instruction> program = workloads::ReciprocalTable();
  const std::vector<Instruction> fwd = workloads::BnForward(l, gen);
  const std::vector<Instruction> bwd = workloads::BnBackward(l, gen, eps);
  program.insert(program.end(), fwd.begin(), fwd.end());
  program.insert(program.end(), bwd.begin(), bwd.end());

  Machine machine(gen);
  workloads::BnInputs in = workloads::LoadBnInputs(machine, l, 42);
  std::vector<double> ms;
  RunReport report;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    RunOptions options;
    options.tier = tier;
    options.threads = threads;
    report = RunProgram(machine, program, options);
    const auto t1 = std::chrono::steady_clock::now();
    if (!report.status.ok()) return err << "dvejit: " << report.status.message() << "\n", 1;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const BnErrors e = workloads::CompareBnStep(machine, l, in, eps);
  const BnErrors bound = workloads::BnErrorBounds(dtype);
  out << "dvejit train-step: batch-norm training step, 128 channels x " << elements << " elements, "
      << DtypeName(static_cast<uint8_t>(dtype)) << ", " << GenerationName(gen) << ", " << (tier == ExecutionTier::Jit ? "jit" : "interpreter")
      << (threads > 1 ? Cat(", ", threads, " threads") : "") << "\n";
  out << "program: " << program.size() << " instructions (32 LoadParameterRam, " << fwd.size()
      << " forward, " << bwd.size() << " backward)\n";
  out << "accuracy vs float64 (max over channels, relative):\n";
  auto line = [&](const char* name, double v, double b) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-8s %.3e  (bound %.0e) %s\n", name, v, b, v <= b ? "ok" : "FAIL");
    out << buf;
    return v <= b;
  };
  bool ok = line("mean", e.mean, bound.mean);
  ok &= line("var", e.var, bound.var);
  ok &= line("dbeta", e.dbeta, bound.dbeta);
  ok &= line("dgamma", e.dgamma, bound.dgamma);
  ok &= line("dx", e.dx, bound.dx);
  const double elems = 128.0 * elements;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "speed: %d steps, median %.2f ms/step, %.1f M elements/s per pass (x read by the "
                "forward pass; x and dy read, dx written by the backward pass)\n",
                steps, median, elems / (median * 1e-3) / 1e6);
  out << buf;
  out << report.Summary();
  return ok ? 0 : 1;
}

}  // namespace dvejit
