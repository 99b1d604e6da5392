#include "tools/train_step.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "bench/workloads.h"
#include "frontend/strcat.h"
#include "kernels/numerics.h"
#include "runtime/executor.h"
#include "runtime/machine.h"

namespace dvejit {
namespace {

struct Errors {
  double mean = 0, var = 0, dbeta = 0, dgamma = 0, dx = 0;
};

// Writes x, dy (in the layout's dtype) and γ for every channel; returns the values as stored.
void LoadInputs(Machine& m, const workloads::BnLayout& l, std::vector<double>& x,
                std::vector<double>& dy, std::vector<double>& gamma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int E = l.elements, C = l.channels, es = DtypeSize(l.dtype);
  x.assign(static_cast<size_t>(C) * E, 0);
  dy.assign(static_cast<size_t>(C) * E, 0);
  gamma.assign(C, 0);
  std::vector<uint8_t> row(static_cast<size_t>(E) * es);
  auto store = [&](uint32_t off, int c, std::vector<double>& dst, double shift, double scale) {
    for (int k = 0; k < E; ++k) {
      const float v = static_cast<float>(shift + scale * normal(rng));
      const uint32_t raw = num::StoreFromF32(l.dtype, v);
      std::memcpy(&row[static_cast<size_t>(k) * es], &raw, es);
      dst[static_cast<size_t>(c) * E + k] = num::LoadAsF32(l.dtype, raw);
    }
    (void)m.Write(Space::Sbuf, c, 1, off, row, static_cast<uint32_t>(row.size()));
  };
  for (int c = 0; c < C; ++c) {
    store(l.x, c, x, 0.5 * (c % 7) - 1.0, 0.5 + 0.25 * (c % 5));
    store(l.dy, c, dy, 0.01 * (c % 3), 1.0);
    const float g = static_cast<float>(0.5 + 0.01 * c);
    gamma[c] = g;
    const uint8_t* gb = reinterpret_cast<const uint8_t*>(&g);
    (void)m.Write(Space::Sbuf, c, 1, l.gamma, std::span<const uint8_t>(gb, 4), 4);
  }
}

float ReadF32(const Machine& m, int c, uint32_t off) {
  float v = 0;
  (void)m.Read(Space::Sbuf, c, 1, off, 4, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&v), 4));
  return v;
}

Errors Compare(const Machine& m, const workloads::BnLayout& l, const std::vector<double>& x,
               const std::vector<double>& dy, const std::vector<double>& gamma, double eps) {
  Errors e;
  const int E = l.elements, es = DtypeSize(l.dtype);
  std::vector<uint8_t> row(static_cast<size_t>(E) * es);
  for (int c = 0; c < l.channels; ++c) {
    const double* xc = &x[static_cast<size_t>(c) * E];
    const double* dyc = &dy[static_cast<size_t>(c) * E];
    double mean = 0, var = 0;
    for (int k = 0; k < E; ++k) mean += xc[k];
    mean /= E;
    for (int k = 0; k < E; ++k) var += (xc[k] - mean) * (xc[k] - mean);
    var /= E;
    const double vf = 1.0 / std::sqrt(var + eps);
    double sdy = 0, sdyx = 0, abs_dy = 0, abs_dyx = 0;
    for (int k = 0; k < E; ++k) {
      const double xh = (xc[k] - mean) * vf;
      sdy += dyc[k];
      sdyx += dyc[k] * xh;
      abs_dy += std::fabs(dyc[k]);
      abs_dyx += std::fabs(dyc[k] * xh);
    }
    e.mean = std::max(e.mean, std::fabs(ReadF32(m, c, l.mean) - mean) / (std::fabs(mean) + std::sqrt(var)));
    e.var = std::max(e.var, std::fabs(ReadF32(m, c, l.mean + 4) - var) / var);
    e.dbeta = std::max(e.dbeta, std::fabs(ReadF32(m, c, l.sums) - sdy) / abs_dy);
    e.dgamma = std::max(e.dgamma, std::fabs(ReadF32(m, c, l.sums + 4) - sdyx) / abs_dyx);
    (void)m.Read(Space::Sbuf, c, 1, l.dx, static_cast<uint32_t>(row.size()), row);
    double max_ref = 0, max_err = 0;
    for (int k = 0; k < E; ++k) {
      const double xh = (xc[k] - mean) * vf;
      const double ref = gamma[c] * vf / E * (E * dyc[k] - sdy - xh * sdyx);
      uint32_t raw = 0;
      std::memcpy(&raw, &row[static_cast<size_t>(k) * es], es);
      max_ref = std::max(max_ref, std::fabs(ref));
      max_err = std::max(max_err, std::fabs(num::LoadAsF32(l.dtype, raw) - ref));
    }
    e.dx = std::max(e.dx, max_err / max_ref);
  }
  return e;
}

}  // namespace

int TrainStepMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  int elements = 4096, steps = 5;
  Dtype dtype = Dtype::FP32;
  Generation gen = Generation::Cayman;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      out << "usage: dvejit train-step [--elements N] [--dtype fp32|bf16] [--steps S] [--gen G]\n"
             "Replays a batch-norm training step (forward statistics + backward chain) on 128\n"
             "channels x N elements (N a multiple of 512, default 4096) and reports the error\n"
             "against float64 math and the time per step. Exit 1 when an error bound is missed.\n";
      return 0;
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
  std::vector<double> x, dy, gamma;
  LoadInputs(machine, l, x, dy, gamma, 42);
  std::vector<double> ms;
  RunReport report;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    report = Run(machine, program, RunOptions{});
    const auto t1 = std::chrono::steady_clock::now();
    if (!report.status.ok()) return err << "dvejit: " << report.status.message() << "\n", 1;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const Errors e = Compare(machine, l, x, dy, gamma, eps);
  const bool bf16 = dtype == Dtype::BFLOAT16;
  // Bounds: fp32 accumulation over 4096-16384 elements; dx rounded to the output dtype.
  const Errors bound{1e-5, 1e-4, 1e-4, 1e-4, bf16 ? 1e-2 : 1e-4};
  out << "dvejit train-step: batch-norm training step, 128 channels x " << elements << " elements, "
      << DtypeName(static_cast<uint8_t>(dtype)) << ", " << GenerationName(gen) << ", interpreter\n";
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
