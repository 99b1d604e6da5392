#include "bench/workloads.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <string_view>
#include <random>

#include "frontend/address.h"
#include "frontend/structs.h"
#include "kernels/numerics.h"

namespace dvejit::workloads {
namespace {

template <int D>
TensorPattern<D> Contiguous(uint32_t addr, uint16_t count) {
  TensorPattern<D> t{};
  t.addr = addr;
  t.num[0] = count;
  t.step[0] = 1;
  for (int d = 1; d < D; ++d) t.num[d] = 1;
  return t;
}
uint8_t D(Dtype d) { return static_cast<uint8_t>(d); }
uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint32_t Align64(uint32_t v) { return (v + 63) & ~63u; }

}  // namespace

uint32_t Sbuf(uint32_t partition, uint32_t offset, Generation gen) {
  return MakeAddress(Space::Sbuf, partition, offset, gen);
}

BnLayout MakeBnLayout(int channels, int elements, Dtype dtype) {
  BnLayout l;
  l.channels = channels;
  l.elements = elements;
  l.dtype = dtype;
  const uint32_t bytes = static_cast<uint32_t>(elements) * DtypeSize(dtype);
  l.x = 0;
  l.dy = Align64(l.x + bytes);
  l.dx = Align64(l.dy + bytes);
  l.stats = Align64(l.dx + bytes);
  l.mean = Align64(l.stats + static_cast<uint32_t>(l.tiles()) * 24);
  l.var_eps = l.mean + 8;
  l.vf = l.var_eps + 4;
  l.gamma = l.vf + 4;
  l.gamma_vf = l.gamma + 4;
  l.a = l.gamma_vf + 4;
  l.sums = Align64(l.a + 4);
  l.end = Align64(l.sums + static_cast<uint32_t>(l.tiles()) * 12);
  return l;
}

std::vector<Instruction> ReciprocalTable() {
  std::vector<Instruction> out;
  for (int base = 0; base < kParamRamEntries; base += 8) {
    CTRL_IM s{};
    s.param_ram_offset = static_cast<uint16_t>(base);
    for (int i = 0; i < 8; ++i) s.immediate[i] = static_cast<float>(1.0 / (base + i + 1));
    out.push_back(MakeInstruction(Opcode::LoadParameterRam, s));
  }
  return out;
}

std::vector<Instruction> BnForward(const BnLayout& l, Generation gen) {
  std::vector<Instruction> out;
  const int es = DtypeSize(l.dtype);
  const auto n = static_cast<uint8_t>(l.channels);
  for (int t = 0; t < l.tiles(); ++t) {
    S4D2_BN s{};
    s.src = Contiguous<4>(Sbuf(0, l.x + t * kStatsTile * es, gen), kStatsTile);
    s.in_dtype = D(l.dtype);
    s.out_dtype = D(Dtype::FP32);
    s.num_active_channels = n;
    s.even_count = kStatsTile / 2;
    s.odd_count = kStatsTile / 2;
    s.dst = Contiguous<2>(Sbuf(0, l.stats + t * 24, gen), 6);
    out.push_back(MakeInstruction(Opcode::BatchNormStats2, s));
  }
  S4D2_BN a{};
  a.src = Contiguous<4>(Sbuf(0, l.stats, gen), static_cast<uint16_t>(l.tiles() * 6));
  a.in_dtype = D(Dtype::FP32);
  a.out_dtype = D(Dtype::FP32);
  a.num_active_channels = n;
  a.dst = Contiguous<2>(Sbuf(0, l.mean, gen), 2);
  out.push_back(MakeInstruction(Opcode::BatchNormAggregate, a));
  return out;
}

std::vector<Instruction> BnBackward(const BnLayout& l, Generation gen, float eps) {
  std::vector<Instruction> out;
  const int es = DtypeSize(l.dtype);
  const auto n = static_cast<uint8_t>(l.channels);
  auto ts = [&](uint32_t src, uint32_t dst, AluOp op0, float imm0) {
    S3D3_TS s{};
    s.src = Contiguous<3>(Sbuf(0, src, gen), 1);
    s.dst = Contiguous<3>(Sbuf(0, dst, gen), 1);
    s.in_dtype = s.out_dtype = D(Dtype::FP32);
    s.num_active_channels = n;
    s.op0 = static_cast<uint8_t>(op0);
    s.op1 = static_cast<uint8_t>(AluOp::BYPASS);
    s.imm0 = op0 == AluOp::RSQRT ? 0 : Bits(imm0);
    return MakeInstruction(Opcode::TensorScalarArith, s);
  };
  auto tt = [&](uint32_t a, uint32_t b, uint32_t dst, uint16_t count, AluOp op) {
    S3S3D3_TT s{};
    s.in_dtypes = static_cast<uint8_t>(D(Dtype::FP32) | (D(Dtype::FP32) << 4));
    s.out_dtype = D(Dtype::FP32);
    s.op = static_cast<uint8_t>(op);
    s.num_active_channels = n;
    s.src0 = Contiguous<3>(Sbuf(0, a, gen), count);
    s.src1 = Contiguous<3>(Sbuf(0, b, gen), count);
    s.dst = Contiguous<3>(Sbuf(0, dst, gen), count);
    return MakeInstruction(Opcode::TensorTensorArith, s);
  };
  // vf = 1/sqrt(var + eps)
  out.push_back(ts(l.mean + 4, l.var_eps, AluOp::ADD, eps));
  out.push_back(ts(l.var_eps, l.vf, AluOp::RSQRT, 0.0f));
  // GradAccum2 per tile: sums of tile t at sums + 12t.
  for (int t = 0; t < l.tiles(); ++t) {
    S3S3D1_BN2 g{};
    g.imm0 = Sbuf(0, l.mean, gen);
    g.imm1 = Sbuf(0, l.vf, gen);
    g.src0 = Contiguous<3>(Sbuf(0, l.x + t * kStatsTile * es, gen), kStatsTile);
    g.src1 = Contiguous<3>(Sbuf(0, l.dy + t * kStatsTile * es, gen), kStatsTile);
    g.dst = Contiguous<1>(Sbuf(0, l.sums + t * 12, gen), 3);
    g.in_dtypes = static_cast<uint8_t>(D(l.dtype) | (D(l.dtype) << 4));
    g.imm_out_dtypes = static_cast<uint8_t>(D(Dtype::FP32) | (D(Dtype::FP32) << 4));
    g.imm_srcs = 0x11;  // both pointers
    g.num_active_channels = n;
    out.push_back(MakeInstruction(Opcode::BatchNormGradAccumulate2, g));
  }
  // Combine the tile sums into tile 0's slot.
  for (int t = 1; t < l.tiles(); ++t) out.push_back(tt(l.sums, l.sums + t * 12, l.sums, 3, AluOp::ADD));
  // A = γ·vf/N
  out.push_back(tt(l.gamma, l.vf, l.gamma_vf, 1, AluOp::MULT));
  out.push_back(ts(l.gamma_vf, l.a, AluOp::MULT, static_cast<float>(1.0 / l.elements)));
  // ParamLoad2: N, mean, A; B = s0 and C = s2 (elements 0 and 2 of the sums: step 2).
  S2_BNPL2 p{};
  p.src = Contiguous<2>(Sbuf(0, l.sums, gen), 2);
  p.src.step[0] = 2;
  p.element_count = static_cast<float>(l.elements);
  p.src_dtype = D(Dtype::FP32);
  p.immediate_dtype = D(Dtype::FP32);
  p.num_active_channels = n;
  p.imm0_ptr = Sbuf(0, l.mean, gen);
  p.imm1_ptr = Sbuf(0, l.a, gen);
  p.imm0_src = 1;
  p.imm1_src = 1;
  out.push_back(MakeInstruction(Opcode::BatchNormParamLoad2, p));
  for (int t = 0; t < l.tiles(); ++t) {
    S3S3D3_TT b{};
    b.in_dtypes = static_cast<uint8_t>(D(l.dtype) | (D(l.dtype) << 4));
    b.out_dtype = D(l.dtype);
    b.op = 0;
    b.num_active_channels = n;
    b.src0 = Contiguous<3>(Sbuf(0, l.x + t * kStatsTile * es, gen), kStatsTile);
    b.src1 = Contiguous<3>(Sbuf(0, l.dy + t * kStatsTile * es, gen), kStatsTile);
    b.dst = Contiguous<3>(Sbuf(0, l.dx + t * kStatsTile * es, gen), kStatsTile);
    out.push_back(MakeInstruction(Opcode::BatchNormBackProp, b));
  }
  return out;
}

std::vector<Instruction> BnTrainingStep(const BnLayout& l, Generation gen, float eps) {
  std::vector<Instruction> program = ReciprocalTable();
  for (const auto& part : {BnForward(l, gen), BnBackward(l, gen, eps)})
    program.insert(program.end(), part.begin(), part.end());
  return program;
}

template <int D>
TensorPattern<D> Row(uint32_t offset, uint16_t count, Generation gen) {
  TensorPattern<D> t{};
  t.addr = Sbuf(0, offset, gen);
  t.num[0] = count;
  t.step[0] = 1;
  for (int d = 1; d < D; ++d) t.num[d] = 1;
  return t;
}


std::vector<Instruction> TiledOpProgram(std::string_view op, int channels, int elements, Dtype dt,
                                        Generation gen) {
  std::vector<Instruction> p;
  const int tile = op == "Stats2" ? 512 : std::min(elements, 4096);
  const int es = DtypeSize(dt);
  for (int base = 0; base < elements; base += tile) {
    const uint32_t off = static_cast<uint32_t>(base * es);
    const auto n = static_cast<uint16_t>(tile);
    if (op == "Stats2") {
      S4D2_BN s{};
      s.src = Row<4>(kX + off, n, gen);
      s.in_dtype = D(dt);
      s.out_dtype = D(Dtype::FP32);
      s.num_active_channels = static_cast<uint8_t>(channels);
      s.even_count = s.odd_count = tile / 2.0f;
      s.dst = Row<2>(kOut + base / tile * 24, 6, gen);
      p.push_back(MakeInstruction(Opcode::BatchNormStats2, s));
    } else if (op == "GradAccum2") {
      S3S3D1_BN2 g{};
      g.imm0 = Sbuf(0, kScalars, gen);
      g.imm1 = Sbuf(0, kScalars + 4, gen);
      g.src0 = Row<3>(kX + off, n, gen);
      g.src1 = Row<3>(kDy + off, n, gen);
      g.dst = Row<1>(kOut + base / tile * 12, 3, gen);
      g.in_dtypes = static_cast<uint8_t>(D(dt) | D(dt) << 4);
      g.imm_out_dtypes = static_cast<uint8_t>(D(Dtype::FP32) | D(Dtype::FP32) << 4);
      g.imm_srcs = 0x11;
      g.num_active_channels = static_cast<uint8_t>(channels);
      p.push_back(MakeInstruction(Opcode::BatchNormGradAccumulate2, g));
    } else if (op == "BackProp") {
      S3S3D3_TT b{};
      b.in_dtypes = static_cast<uint8_t>(D(dt) | D(dt) << 4);
      b.out_dtype = D(dt);
      b.num_active_channels = static_cast<uint8_t>(channels);
      b.src0 = Row<3>(kX + off, n, gen);
      b.src1 = Row<3>(kDy + off, n, gen);
      b.dst = Row<3>(kOut + off, n, gen);
      p.push_back(MakeInstruction(Opcode::BatchNormBackProp, b));
    } else if (op == "TensorScalar") {
      S3D3_TS t{};
      t.src = Row<3>(kX + off, n, gen);
      t.dst = Row<3>(kOut + off, n, gen);
      t.in_dtype = t.out_dtype = D(dt);
      t.num_active_channels = static_cast<uint8_t>(channels);
      t.op0 = static_cast<uint8_t>(AluOp::MULT);
      t.op1 = static_cast<uint8_t>(AluOp::ADD);
      const float a = 1.5f, b = -0.25f;
      std::memcpy(&t.imm0, &a, 4);
      std::memcpy(&t.imm1, &b, 4);
      p.push_back(MakeInstruction(Opcode::TensorScalarArith, t));
    } else if (op == "TensorTensor") {
      S3S3D3_TT t{};
      t.in_dtypes = static_cast<uint8_t>(D(dt) | D(dt) << 4);
      t.out_dtype = D(dt);
      t.op = static_cast<uint8_t>(AluOp::ADD);
      t.num_active_channels = static_cast<uint8_t>(channels);
      t.src0 = Row<3>(kX + off, n, gen);
      t.src1 = Row<3>(kDy + off, n, gen);
      t.dst = Row<3>(kOut + off, n, gen);
      p.push_back(MakeInstruction(Opcode::TensorTensorArith, t));
    } else {  // Reciprocal
      S4D4_TR r{};
      r.src = Row<4>(kX + off, n, gen);
      r.dst = Row<4>(kOut + off, n, gen);
      r.in_dtype = r.out_dtype = D(dt);
      r.num_active_channels = static_cast<uint8_t>(channels);
      p.push_back(MakeInstruction(Opcode::Reciprocal, r));
    }
  }
  return p;
}

BnErrors BnErrorBounds(Dtype dtype) {
  // fp32 accumulation over up to 16384 elements; dx is rounded to its output dtype.
  return BnErrors{1e-5, 1e-4, 1e-4, 1e-4, dtype == Dtype::BFLOAT16 ? 1e-2 : 1e-4};
}


BnInputs LoadBnInputs(Machine& m, const BnLayout& l, uint64_t seed) {
  BnInputs in;
  std::vector<double>& x = in.x;
  std::vector<double>& dy = in.dy;
  std::vector<double>& gamma = in.gamma;
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
  return in;
}

namespace {
float ReadF32(const Machine& m, int c, uint32_t off) {
  float v = 0;
  (void)m.Read(Space::Sbuf, c, 1, off, 4, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&v), 4));
  return v;
}
}  // namespace

BnErrors CompareBnStep(const Machine& m, const BnLayout& l, const BnInputs& in, double eps) {
  const std::vector<double>& x = in.x;
  const std::vector<double>& dy = in.dy;
  const std::vector<double>& gamma = in.gamma;
  BnErrors e;
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

}  // namespace dvejit::workloads
