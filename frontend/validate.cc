#include "frontend/validate.h"

#include <cmath>
#include <cstring>
#include <string>

#include "frontend/address.h"
#include "frontend/fields.h"
#include "frontend/operands.h"
#include "frontend/strcat.h"

namespace dvejit {
namespace {

template <typename Int>
std::string Num(Int v) { return std::to_string(v); }
std::string F32Text(float f) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  return buf;
}
std::string DtName(uint8_t d) { return std::string(DtypeName(d)); }
std::string OpName(uint8_t op) {
  return Cat(AluOpName(op), " (", Hex(op, 2), ")");
}
float BitsToF32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

bool In(uint8_t d, std::initializer_list<Dtype> set) {
  for (Dtype x : set)
    if (d == static_cast<uint8_t>(x)) return true;
  return false;
}
std::string SetText(std::initializer_list<Dtype> set) {
  std::string s = "one of {";
  bool first = true;
  for (Dtype x : set) {
    s += Cat(first ? "" : ", ", DtypeName(static_cast<uint8_t>(x)));
    first = false;
  }
  return s + "}";
}

constexpr auto kStatsTypes = {Dtype::FP32, Dtype::FP16, Dtype::BFLOAT16};
constexpr auto kIntTypes = {Dtype::INT8, Dtype::UINT8, Dtype::INT16, Dtype::UINT16,
                            Dtype::INT32, Dtype::UINT32};

bool IsNonImmediateMarker(uint32_t word) {
  const AddrMode m = AddrModeOf(word);
  return m == AddrMode::ShapeRegister || m == AddrMode::AddrShapeRegister ||
         m == AddrMode::Indirect;
}

// Runs the checks of one instruction in the spec's order; the first failure sticks.
class Checker {
 public:
  Checker(const Instruction& inst, Generation gen)
      : inst_(inst), gen_(gen), info_(inst.info()), ops_(OperandsOf(inst)) {}

  std::optional<Violation> Run() {
    if (!Common()) return failure_;
    PerOpcode();
    return failure_;
  }

 private:
  bool Fail(std::string_view pred, std::string_view field, std::string_view value,
            std::string_view expected, ErrorKind kind = ErrorKind::Invalid) {
    if (!failure_) failure_ = MakeViolation(kind, pred, field, value, expected);
    return false;
  }
  bool Require(bool ok, std::string_view pred, std::string_view field, std::string_view value,
               std::string_view expected) {
    return ok || Fail(pred, field, value, expected);
  }
  bool RequireDtype(uint8_t d, std::initializer_list<Dtype> set, std::string_view pred,
                    std::string_view field) {
    return Require(In(d, set), pred, field, DtName(d), SetText(set));
  }
  bool RequireValidDtype(uint8_t d, bool allow_fp32r, std::string_view pred,
                         std::string_view field) {
    return Require(IsValidDtype(d, allow_fp32r), pred, field, DtName(d),
                   allow_fp32r ? "a supported dtype" : "a supported dtype other than FP32R");
  }

  const TensorOperand* Tensor(std::string_view name) const {
    for (int i = 0; i < ops_.num_tensors; ++i)
      if (ops_.tensors[i].name == name) return &ops_.tensors[i];
    return nullptr;
  }
  // Element-count rows skip operands whose shape comes from a register (validation.md §2,
  // address_mode_supported), except on SUNDA where that escape does not exist.
  bool CountKnown(const TensorOperand* t) const {
    return gen_ == Generation::Sunda || !IsNonImmediateMarker(t->pattern.addr);
  }
  uint64_t Count(std::string_view name) const { return Tensor(name)->pattern.Count(); }
  bool CountRow(std::initializer_list<std::string_view> operands) const {
    for (std::string_view n : operands)
      if (!CountKnown(Tensor(n))) return false;
    return true;
  }
  bool RequireCount(std::initializer_list<std::string_view> operands, bool ok,
                    std::string_view pred, std::string_view field, uint64_t value,
                    std::string_view expected) {
    if (!CountRow(operands)) return true;
    return Require(ok, pred, field, Num(value), expected);
  }

  // ---- validation.md §2 ----
  bool Common() {
    const Header h = inst_.header();
    if (!Require(h.inst_word_len == 0x10, "has_valid_neuron_header", "inst_word_len",
                 Hex(h.inst_word_len, 2), "0x10"))
      return false;
    if (!Require(!DebugCmdName(h.debug_cmd).empty(), "has_valid_neuron_header", "debug_cmd",
                 Num(h.debug_cmd), "one of NONE=0, NOTIFY=1, START=3, END=5, START_END=7, INS_FIELD=9"))
      return false;
    const Events e = inst_.events();
    if (!Require(!WaitModeName(e.wait_mode).empty(), "has_valid_neuron_events", "wait_mode",
                 Hex(e.wait_mode, 2), "a listed wait mode (encoding.md 1.2)") ||
        !Require(!UpdateModeName(e.update_mode).empty(), "has_valid_neuron_events",
                 "update_mode", Hex(e.update_mode, 2), "a listed update mode (encoding.md 1.2)") ||
        !Require(e.wait_mode == 0 || e.wait_idx <= 31, "has_valid_neuron_events", "wait_idx",
                 Num(e.wait_idx), "<= 31") ||
        !Require(e.update_mode == 0 || e.update_idx <= 31, "has_valid_neuron_events",
                 "update_idx", Num(e.update_idx), "<= 31"))
      return false;
    if ((e.wait_mode & 0x80) != 0)
      return Fail("events_mode_supported", "wait_mode", Hex(e.wait_mode, 2),
                  "no register-compare form (bit 0x80)", ErrorKind::Unsupported);
    if ((e.update_mode & 0x80) != 0)
      return Fail("events_mode_supported", "update_mode", Hex(e.update_mode, 2),
                  "no register-compare form (bit 0x80)", ErrorKind::Unsupported);
    const Opcode op = inst_.opcode();
    if (op == Opcode::BatchNormGradAccumulate && gen_ == Generation::Maverick)
      return Fail("opcode_in_generation", "opcode", "BatchNormGradAccumulate (0x63)",
                  "an opcode of maverick (use BatchNormGradAccumulate2)");
    if (op == Opcode::DveReadIndices && gen_ == Generation::Sunda)
      return Fail("opcode_in_generation", "opcode", "DveReadIndices (0xE9)",
                  "an opcode of sunda");
    if (info_.tier == Tier::Unsupported)
      return Fail("opcode_supported", "opcode", Cat(info_.name, " (", Hex(inst_.bytes[0], 2), ")"),
                  "a tier A or B opcode", ErrorKind::Unsupported);
    if (ops_.has_channels &&
        !Require(ops_.channels >= 1 && ops_.channels <= kPartitions, "check_active_channels",
                 "num_active_channels", Num(ops_.channels), "1..128"))
      return false;
    return StartPartitions() && TensorsValid() && ReservedZero();
  }

  bool StartPartitions() {
    if (!ops_.has_channels) return true;
    auto check = [&](std::string_view name, uint32_t word) {
      auto place = ResolveImmediate(word, gen_);
      if (!place) return true;  // tensorNd_valid / the immediate predicate report it
      return Require(place->partition + ops_.channels <= kPartitions,
                     "start_addr_active_channels", Cat(name, " start partition + channels"),
                     Cat(place->partition, " + ", ops_.channels), "<= 128");
    };
    for (int i = 0; i < ops_.num_tensors; ++i)
      if (!check(ops_.tensors[i].name, ops_.tensors[i].pattern.addr)) return false;
    for (int i = 0; i < ops_.num_pointers; ++i)
      if (!ops_.pointers[i].is_register && !check(ops_.pointers[i].name, ops_.pointers[i].word))
        return false;
    return true;
  }

  bool TensorsValid() {
    for (int i = 0; i < ops_.num_tensors; ++i)
      if (!TensorValid(ops_.tensors[i])) return false;
    return true;
  }

  bool TensorValid(const TensorOperand& t) {
    const std::string pred = Cat("tensor", t.pattern.dims, "d_valid");
    const Pattern& p = t.pattern;
    const AddrMode mode = AddrModeOf(p.addr);
    if (mode == AddrMode::Invalid)
      return Fail(pred, Cat(t.name, " address"), Hex(p.addr, 8),
                  "an immediate (marker 0x00-0x1F), register (0x80, register < 64), "
                  "shape-register (0x40/0xC0) or indirect (0x20/0xA0) ADDR4");
    for (int d = 0; d < p.dims; ++d)
      if (!Require(p.num[d] >= 1, pred, Cat(t.name, " num[", d, "]"), "0", ">= 1"))
        return false;
    if (mode != AddrMode::Immediate) return true;  // resolved at run time, or unsupported
    auto place = ResolveImmediate(p.addr, gen_);
    if (!place)
      return Fail(pred, Cat(t.name, " address"), Hex(p.addr, 8),
                  gen_ == Generation::Maverick ? "an SBUF address (maverick has no PSUM)"
                                               : "an SBUF or PSUM address");
    const int size = IsSupportedDtype(t.dtype) ? DtypeSize(static_cast<Dtype>(t.dtype)) : 0;
    if (size == 0) return true;  // the opcode's dtype row reports the dtype
    const uint32_t active = ActiveBytes(place->space, gen_);
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < p.dims; ++d) {
      const int64_t span = static_cast<int64_t>(p.step[d]) * (p.num[d] - 1);
      (span < 0 ? lo : hi) += span;
    }
    const int64_t first = place->offset + lo * size;
    const int64_t last = place->offset + hi * size + size - 1;
    if (!Require(first >= 0 && last < active, pred, Cat(t.name, " bytes"),
                 Cat("[", first, ", ", last, "] in ", SpaceName(place->space), " partition"),
                 Cat("inside the ", active, " active bytes of each partition")))
      return false;
    if (!Require(place->offset % size == 0, pred, Cat(t.name, " start offset"),
                 Hex(place->offset), Cat("aligned to ", size, " bytes (", DtName(t.dtype), ")")))
      return false;
    if (t.is_dst && place->space == Space::Psum)
      return Require(size == 4, pred, Cat(t.name, " dtype"), DtName(t.dtype),
                     "a 4-byte dtype (INT32, UINT32, FP32, FP32R) for a PSUM destination");
    return true;
  }

  bool ReservedZero() {
    if (inst_.opcode() == Opcode::EngineNop) return true;  // engine_nop_zero_payload covers it
    std::string pred = Cat(StructName(info_.strct), "_reserved_zero");
    for (char& c : pred) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const FieldInfo& f : FieldsOf(info_.strct)) {
      if (f.kind != FieldKind::Reserved) continue;
      for (int b = f.offset; b < f.offset + f.size; ++b)
        if (inst_.bytes[b] != 0)
          return Fail(pred, Cat(f.name, " byte ", b), Hex(inst_.bytes[b], 2), "0");
    }
    return true;
  }

  // A pointer immediate (validation.md §2, last paragraph), reported under `pred`.
  bool PointerImmediate(std::string_view pred, std::string_view name, uint32_t word,
                        uint8_t dtype) {
    const AddrMode mode = AddrModeOf(word);
    if (mode == AddrMode::Register) return true;
    if (mode != AddrMode::Immediate)
      return Fail(pred, Cat(name, " address"), Hex(word, 8),
                  "an immediate or register-form ADDR4 (no shape-register or indirect marker)");
    auto place = ResolveImmediate(word, gen_);
    if (!place)
      return Fail(pred, Cat(name, " address"), Hex(word, 8), "an SBUF or PSUM address");
    if (!Require(place->partition + ops_.channels <= kPartitions, pred,
                 Cat(name, " start partition + channels"),
                 Cat(place->partition, " + ", ops_.channels), "<= 128"))
      return false;
    const int size = IsSupportedDtype(dtype) ? DtypeSize(static_cast<Dtype>(dtype)) : 0;
    if (size == 0) return true;
    if (!Require(place->offset % size == 0, pred, Cat(name, " offset"), Hex(place->offset),
                 Cat("aligned to ", size, " bytes")))
      return false;
    return Require(place->offset + size <= ActiveBytes(place->space, gen_), pred,
                   Cat(name, " offset"), Hex(place->offset),
                   Cat("inside the ", ActiveBytes(place->space, gen_), " active bytes"));
  }
  bool RegisterPointer(std::string_view pred, std::string_view name, uint32_t word) {
    return Require((word & 0xFFFFFF00u) == 0 && (word & 0xFF) < kRegisters, pred,
                   Cat(name, " (IMM_REG)"), Hex(word, 8),
                   "a register number < 64 with bytes 1..3 zero");
  }
  // source 1 (or 0 where `zero_is_pointer`) → pointer immediate; 2 → register pointer.
  bool ImmBySource(std::string_view pred, std::string_view name, uint8_t src, uint32_t word,
                   uint8_t dtype, bool zero_is_pointer) {
    if (src == 1 || (src == 0 && zero_is_pointer))
      return PointerImmediate(pred, name, word, dtype);
    if (src == 2) return RegisterPointer(pred, name, word);
    return Fail(pred, Cat(name, " source"), Num(src),
                zero_is_pointer ? "0 or 1 (pointer) or 2 (register)"
                                : "1 (pointer) or 2 (register)");
  }

  bool TtValidPartitions(std::string_view a, std::string_view b) {
    const uint32_t wa = Tensor(a)->pattern.addr, wb = Tensor(b)->pattern.addr;
    // A register-sourced (or shape-from-register) start is only known at run time.
    if (AddrModeOf(wa) != AddrMode::Immediate || AddrModeOf(wb) != AddrMode::Immediate)
      return true;
    auto pa = ResolveImmediate(wa, gen_), pb = ResolveImmediate(wb, gen_);
    if (!pa || !pb) return true;
    if (pa->space == Space::Psum && pb->space == Space::Psum)
      return Fail("tt_valid_partitions", Cat(a, ", ", b), "both in PSUM",
                  "at most one source in PSUM");
    if (pa->space == Space::Sbuf && pb->space == Space::Sbuf)
      return Require(pa->partition / 32 == pb->partition / 32, "tt_valid_partitions",
                     Cat(a, ", ", b, " start partitions"),
                     Cat(pa->partition, ", ", pb->partition), "the same quadrant");
    return true;
  }

  // ---- validation.md §3 ----
  void PerOpcode() {
    switch (info_.strct) {
      case StructKind::S4D2_BN: return S4D2();
      case StructKind::S3S3D1_BN:
      case StructKind::S3S3D1_BN2: return GradAccum();
      case StructKind::S2_BN: return S2();
      case StructKind::S2_BNPL2: return ParamLoad2();
      case StructKind::S3S3D3_TT: return TensorTensor();
      case StructKind::S3D3_TS: return TensorScalar();
      case StructKind::S4D4_TSM: return PtrMulti();
      case StructKind::S4D4_MR: return MatchReplace();
      case StructKind::S4D4_TR: return CopyCastRecip();
      case StructKind::D4_MR: return MemsetReadIndices();
      case StructKind::D1_RD: return ReadAccumulator();
      case StructKind::CTRL_IM: return CtrlIm();
    }
  }

  bool FiniteCounts(const S4D2_BN& s) {
    return Require(std::isfinite(s.even_count), "has_bns_finite_even_count", "even_count",
                   F32Text(s.even_count), "a finite value") &&
           Require(std::isfinite(s.odd_count), "has_bns_finite_odd_count", "odd_count",
                   F32Text(s.odd_count), "a finite value");
  }
  bool ZeroCounts(const S4D2_BN& s) {
    return Require(s.even_count == 0.0f && s.odd_count == 0.0f, "s4d2_bn_zero_counts",
                   "even_count, odd_count", Cat(F32Text(s.even_count), ", ", F32Text(s.odd_count)),
                   "0, 0");
  }

  void S4D2() {
    const auto s = inst_.as<S4D2_BN>();
    const uint64_t src = Count("src"), dst = Count("dst");
    switch (inst_.opcode()) {
      case Opcode::BatchNormStats2:
      case Opcode::TransposeBatchNormStats2:
        if (!RequireCount({"src"}, src <= 512, "has_bnstats2_src_element_cnt", "src elements",
                          src, "<= 512") ||
            !RequireCount({"dst"}, dst == 6, "has_bnstats2_dst_element_cnt", "dst elements",
                          dst, "== 6") ||
            !FiniteCounts(s) ||
            !RequireDtype(s.in_dtype, kStatsTypes, "s4d2_bn_stats_in_type", "in_dtype") ||
            !RequireDtype(s.out_dtype, kStatsTypes, "s4d2_bn_stats_out_type", "out_dtype"))
          return;
        if (inst_.opcode() == Opcode::TransposeBatchNormStats2) {
          if (!RequireCount({"src"}, src % 32 == 0, "has_transpose_src_element_cnt",
                            "src elements", src, "a multiple of 32"))
            return;
          Require(s.num_active_channels % 32 == 0, "has_multiple_32_channels",
                  "num_active_channels", Num(s.num_active_channels), "a multiple of 32");
        }
        return;
      case Opcode::BatchNormStats:
        RequireCount({"src"}, src <= 256, "has_bnstats_src_element_cnt", "src elements", src,
                     "<= 256") &&
            RequireCount({"dst"}, dst == 3, "has_bnstats_dst_element_cnt", "dst elements", dst,
                         "== 3") &&
            FiniteCounts(s) &&
            RequireDtype(s.in_dtype, kStatsTypes, "s4d2_bn_stats_in_type", "in_dtype") &&
            RequireDtype(s.out_dtype, kStatsTypes, "s4d2_bn_stats_out_type", "out_dtype");
        return;
      case Opcode::BatchNormAggregate:
        RequireCount({"src"}, src % 3 == 0 && src >= 3, "has_bnstats_agg_src_element_cnt",
                     "src elements", src, "a multiple of 3, >= 3") &&
            RequireCount({"dst"}, dst == 2, "has_bnstats_agg_dst_element_cnt", "dst elements",
                         dst, "== 2") &&
            ZeroCounts(s) &&
            RequireDtype(s.in_dtype, kStatsTypes, "s4d2_bn_agg_in_type", "in_dtype") &&
            RequireDtype(s.out_dtype, kStatsTypes, "s4d2_bn_agg_out_type", "out_dtype");
        return;
      case Opcode::Max8:
        RequireCount({"src"}, src >= 8 && src <= 16384, "has_max8_src_element_cnt",
                     "src elements", src, "8..16384") &&
            RequireCount({"dst"}, dst == 8, "has_max8_dst_element_cnt", "dst elements", dst,
                         "== 8") &&
            ZeroCounts(s) && RequireValidDtype(s.in_dtype, false, "s4d2_bn_in_dtype", "in_dtype") &&
            RequireValidDtype(s.out_dtype, true, "max8_out_type", "out_dtype");
        return;
      case Opcode::FindIndex8:
        RequireCount({"src"}, src >= 8 && src <= 16384, "has_find_index8_src_element_cnt",
                     "src elements", src, "8..16384") &&
            RequireCount({"dst"}, dst == 8, "has_find_index8_dst_element_cnt", "dst elements",
                         dst, "== 8") &&
            ZeroCounts(s) && RequireValidDtype(s.in_dtype, false, "s4d2_bn_in_dtype", "in_dtype") &&
            RequireDtype(s.out_dtype, {Dtype::UINT16, Dtype::UINT32}, "has_find_index8_dst_type",
                         "out_dtype");
        return;
      default: return;
    }
  }

  void GradAccum() {
    const bool v2 = inst_.opcode() == Opcode::BatchNormGradAccumulate2;
    const uint8_t in = inst_.bytes[60];
    const uint8_t x = in & 0xF, dy = in >> 4;
    const uint8_t out = v2 ? inst_.bytes[61] >> 4 : inst_.bytes[62];
    const uint8_t imm = v2 ? inst_.bytes[61] & 0xF : inst_.bytes[61];
    const std::initializer_list<Dtype> kIn = {Dtype::FP16, Dtype::BFLOAT16, Dtype::FP32, Dtype::INT32};
    if (!RequireDtype(x, kIn, "bnga_valid_input_type", "x dtype") ||
        !RequireDtype(dy, kIn, "bnga_valid_input_type", "dy dtype") ||
        !RequireDtype(out, kStatsTypes, "bnga_valid_output_type", "out dtype"))
      return;
    if (v2) {
      if (!RequireDtype(imm, kIn, "bnga_valid_immediate_type", "immediate dtype")) return;
    } else if (!RequireDtype(imm, {Dtype::INVALID, Dtype::FP16, Dtype::BFLOAT16, Dtype::FP32,
                                   Dtype::INT32},
                             "bnga_valid_immediate_type", "immediate_dtype")) {
      return;
    }
    const uint64_t cx = Count("src0"), cdy = Count("src1");
    if (!RequireCount({"src0", "src1"}, cx == cdy, "bnga_src_element_cnt_check",
                      "x elements vs dy elements", cx, Cat("== ", cdy)))
      return;
    const uint16_t dst0 = Tensor("dst")->pattern.num[0];
    if (!RequireCount({"dst"}, dst0 == 3, "bnga_dst_element_cnt_check", "dst num[0]", dst0,
                      "== 3"))
      return;
    const uint32_t w0 = inst_.as<S3S3D1_BN>().imm0, w1 = inst_.as<S3S3D1_BN>().imm1;
    if (v2) {
      const uint8_t srcs = inst_.bytes[62];
      if (!ImmBySource("bnga2_imm_check", "imm0", srcs & 0xF, w0, imm, false) ||
          !ImmBySource("bnga2_imm_check", "imm1", srcs >> 4, w1, imm, false))
        return;
    } else {
      const uint8_t d = imm == 0 ? static_cast<uint8_t>(Dtype::FP32) : imm;
      if (!PointerImmediate("bnga_imm_check", "imm0", w0, d) ||
          !PointerImmediate("bnga_imm_check", "imm1", w1, d))
        return;
    }
    TtValidPartitions("src0", "src1");
  }

  bool ZeroImmediates(const S2_BN& s) {
    float imm1 = BitsToF32(s.imm1);
    return Require(s.imm0_ptr == 0, "has_s2_bn_zero_immediates", "imm0_ptr", Hex(s.imm0_ptr, 8),
                   "0") &&
           Require(s.imm0_src == 0, "has_s2_bn_zero_immediates", "imm0_src", Num(s.imm0_src),
                   "0") &&
           Require(imm1 == 0.0f, "has_s2_bn_zero_immediates", "imm1", Hex(s.imm1, 8),
                   "0.0 as fp32");
  }

  void S2() {
    const auto s = inst_.as<S2_BN>();
    const TensorOperand* src = Tensor("src");
    const uint64_t count = src->pattern.Count();
    switch (inst_.opcode()) {
      case Opcode::BatchNormParamLoad: {
        const uint16_t n0 = src->pattern.num[0], n1 = src->pattern.num[1];
        if (!RequireCount({"src"}, (n0 == 3 && n1 == 1) || (n0 == 1 && n1 == 3),
                          "has_bn_param_load_src_element_cnt", "src shape",
                          0, "{3x1} or {1x3}")) {
          failure_->detail = Cat("src shape = {", n0, "x", n1, "}, expected {3x1} or {1x3}");
          return;
        }
        if (!Require(std::isfinite(BitsToF32(s.imm1)), "s2_bn_finite_n", "imm1 (N)",
                     F32Text(BitsToF32(s.imm1)), "a finite value") ||
            !ImmBySource("has_valid_bn_param_load_imm0", "imm0_ptr", s.imm0_src, s.imm0_ptr,
                         static_cast<uint8_t>(Dtype::FP32), true))
          return;
        RequireDtype(s.dtype, kStatsTypes, "s2_bn_dtype", "dtype");
        return;
      }
      case Opcode::MatchValueLoad:
        RequireCount({"src"}, count == 8, "has_match_value_load_src_element_cnt",
                     "src elements", count, "== 8") &&
            ZeroImmediates(s) && RequireValidDtype(s.dtype, false, "s2_bn_mvl_dtype", "dtype");
        return;
      case Opcode::TensorScalarImmLdArith:
      case Opcode::TensorScalarImmLdBitvec: {
        if (!RequireCount({"src"}, count >= 1 && count <= 8,
                          "has_tsm_immediates_load_src_element_cnt", "src elements", count,
                          "1..8") ||
            !ZeroImmediates(s))
          return;
        if (inst_.opcode() == Opcode::TensorScalarImmLdArith)
          RequireDtype(s.dtype,
                       {Dtype::FP32, Dtype::FP16, Dtype::BFLOAT16, Dtype::FP8_EXP3,
                        Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::UINT32, Dtype::UINT16,
                        Dtype::UINT8, Dtype::INT32, Dtype::INT16, Dtype::INT8},
                       "tsm_immld_dtypes", "dtype");
        else
          RequireDtype(s.dtype, {Dtype::UINT32, Dtype::UINT16, Dtype::UINT8, Dtype::INT32},
                       "tsm_immld_dtypes", "dtype");
        return;
      }
      default: return;
    }
  }

  void ParamLoad2() {
    const auto s = inst_.as<S2_BNPL2>();
    const uint16_t n0 = s.src.num[0], n1 = s.src.num[1];
    if (CountRow({"src"}) && !((n0 == 1 && n1 == 2) || (n0 == 2 && n1 == 1))) {
      Fail("has_bnpl2_src_element_cnt", "src shape", Cat("{", n0, "x", n1, "}"),
           "{1x2} or {2x1}");
      return;
    }
    Require(std::isfinite(s.element_count), "s2_bnpl2_finite_element_count", "element_count",
            F32Text(s.element_count), "a finite value") &&
        RequireDtype(s.src_dtype, kStatsTypes, "s2_bnpl2_src_dtype", "src_dtype") &&
        RequireDtype(s.immediate_dtype, kStatsTypes, "s2_bnpl2_immediate_dtype",
                     "immediate_dtype") &&
        ImmBySource("has_valid_s2_bnpl2_imm_ptr", "imm0_ptr", s.imm0_src, s.imm0_ptr,
                    s.immediate_dtype, true) &&
        ImmBySource("has_valid_s2_bnpl2_imm_ptr", "imm1_ptr", s.imm1_src, s.imm1_ptr,
                    s.immediate_dtype, true);
  }

  bool TtCounts() {
    const uint64_t c0 = Count("src0"), c1 = Count("src1"), cd = Count("dst");
    return RequireCount({"src0", "src1"}, c0 == c1, "s3s3d3_tt_src_element_cnt_check",
                        "src0 elements vs src1 elements", c0, Cat("== ", c1)) &&
           RequireCount({"src0", "dst"}, c0 == cd, "s3s3d3_tt_dst_element_cnt_check",
                        "dst elements vs src0 elements", cd, Cat("== ", c0)) &&
           TtValidPartitions("src0", "src1");
  }

  void TensorTensor() {
    const auto s = inst_.as<S3S3D3_TT>();
    const uint8_t a = s.in_dtypes & 0xF, b = s.in_dtypes >> 4, out = s.out_dtype;
    switch (inst_.opcode()) {
      case Opcode::TensorTensorArith: {
        const bool op_ok = AluOpHas(s.op, gen_, GAR) || AluOpHas(s.op, gen_, VINT) ||
                           (AluOpExists(s.op, gen_) && s.op == static_cast<uint8_t>(AluOp::POW));
        if (!Require(op_ok, "tensor_tensor_arith_op", "op", OpName(s.op),
                     Cat("a general arith op, POW, MOD or an integer op of ",
                         GenerationName(gen_))) ||
            !RequireValidDtype(a, false, "tensor_tensor_dtypes", "src0 dtype") ||
            !RequireValidDtype(b, false, "tensor_tensor_dtypes", "src1 dtype") ||
            !RequireValidDtype(out, true, "tensor_tensor_dtypes", "out dtype"))
          return;
        const bool int_band = AluOpHas(s.op, gen_, INT);
        const bool int_mod = s.op == static_cast<uint8_t>(AluOp::MOD) &&
                             (IsIntDtype(static_cast<Dtype>(a)) || IsIntDtype(static_cast<Dtype>(b)));
        if (int_band || int_mod) {
          const uint32_t flags = LookupAluOp(s.op)->flags;
          const bool sgn = flags & SGN, uns = flags & UNS;
          auto kind = [](uint8_t d) { return LookupDtype(d)->kind; };
          const bool all_s = kind(a) == DtypeKind::SInt && kind(b) == DtypeKind::SInt &&
                             kind(out) == DtypeKind::SInt;
          const bool all_u = kind(a) == DtypeKind::UInt && kind(b) == DtypeKind::UInt &&
                             kind(out) == DtypeKind::UInt;
          if (!Require((sgn && all_s) || (uns && all_u), "tensor_tensor_int_signedness",
                       "src0, src1, out dtypes", Cat(DtName(a), ", ", DtName(b), ", ", DtName(out)),
                       sgn && uns ? "integer dtypes all of one signedness"
                       : sgn      ? "signed integer dtypes"
                                  : "unsigned integer dtypes"))
            return;
        }
        TtCounts();
        return;
      }
      case Opcode::TensorTensorBitvec:
        Require(AluOpHas(s.op, gen_, GBV), "tensor_tensor_bitvec_op", "op", OpName(s.op),
                "a general bitvec op") &&
            Require(a == b && b == out && In(a, kIntTypes), "tensor_tensor_bitvec_dtypes",
                    "src0, src1, out dtypes", Cat(DtName(a), ", ", DtName(b), ", ", DtName(out)),
                    "all equal, one of {INT8, UINT8, INT16, UINT16, INT32, UINT32}") &&
            TtCounts();
        return;
      case Opcode::BatchNormBackProp:
        Require(s.op == 0, "s3s3d3_tt_is_zero_op", "op", OpName(s.op), "BYPASS") &&
            RequireDtype(a, kStatsTypes, "bn_backprop_dtypes", "x dtype") &&
            RequireDtype(b, kStatsTypes, "bn_backprop_dtypes", "dy dtype") &&
            RequireDtype(out, kStatsTypes, "bn_backprop_dtypes", "out dtype") && TtCounts();
        return;
      case Opcode::CopyPredicated:
      case Opcode::CastPredicated:
        Require(s.op == 0, "s3s3d3_tt_is_zero_op", "op", OpName(s.op), "BYPASS") &&
            RequireDtype(a, kIntTypes, "s3s3d3_copy_pred_src0_dtype", "predicate dtype") &&
            RequireValidDtype(b, false, "s3s3d3_copy_cast_pred_src1_dst_dtype", "data dtype") &&
            RequireValidDtype(out, false, "s3s3d3_copy_cast_pred_src1_dst_dtype", "out dtype") &&
            (inst_.opcode() == Opcode::CastPredicated ||
             Require(b == out, "s3s3d3_copy_cast_pred_src1_dst_dtype", "out dtype", DtName(out),
                     Cat("== data dtype ", DtName(b)))) &&
            TtCounts();
        return;
      default: return;
    }
  }

  // tensor_scalar_immediates_check / ts_ptr_imm_chk
  bool TsImmediates(const S3D3_TS& s) {
    const Opcode op = inst_.opcode();
    const bool bitvec = info_.alu_class == AluClass::Bitvec;
    const uint8_t ptr_dtype = bitvec ? s.in_dtype : static_cast<uint8_t>(Dtype::FP32);
    if (op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec) {
      return Require(s.imm0_src == 0, "ts_ptr_imm_chk", "imm0_src", Num(s.imm0_src), "0") &&
             Require(s.imm1_src == 0, "ts_ptr_imm_chk", "imm1_src", Num(s.imm1_src), "0") &&
             PointerImmediate("ts_ptr_imm_chk", "imm0", s.imm0, ptr_dtype) &&
             PointerImmediate("ts_ptr_imm_chk", "imm1", s.imm1, ptr_dtype);
    }
    auto one = [&](std::string_view name, uint8_t src, uint32_t word) {
      constexpr std::string_view pred = "tensor_scalar_immediates_check";
      if (src == 0) {
        if (!bitvec || !IsSupportedDtype(s.in_dtype)) return true;
        const int size = DtypeSize(static_cast<Dtype>(s.in_dtype));
        const uint32_t limit = size == 1 ? 0xFF : size == 2 ? 0xFFFF : 0xFFFFFFFF;
        return Require(word <= limit, pred, name, Hex(word),
                       Cat("<= ", Hex(limit), " (fits ", DtName(s.in_dtype), ")"));
      }
      return ImmBySource(pred, name, src, word, ptr_dtype, false) ||
             (src != 1 && src != 2 && (failure_->detail = Cat(name, "_src = ", src,
                                            ", expected 0 (value), 1 (pointer) or 2 (register)"),
                                       false));
    };
    return one("imm0", s.imm0_src, s.imm0) && one("imm1", s.imm1_src, s.imm1);
  }

  void TensorScalar() {
    const auto s = inst_.as<S3D3_TS>();
    const Opcode op = inst_.opcode();
    const uint64_t src = Count("src"), dst = Count("dst");
    if (op == Opcode::TensorScalarCacheReduce || op == Opcode::TensorScalarCacheCumulative) {
      const uint8_t op1 = s.op1;
      const bool op1_ok = AluOpExists(op1, gen_) &&
                          (op1 == 4 || op1 == 5 || op1 == 6 || op1 == 8 || op1 == 9);
      const bool load = s.accumulator_cmd == static_cast<uint8_t>(AccumCmd::LoadAccumulate);
      Require(AluOpHas(s.op0, gen_, GAR), "ts_cache_valid_ops", "op0", OpName(s.op0),
              "a general arith op") &&
          Require(op1_ok, "ts_cache_valid_ops", "op1", OpName(op1),
                  "one of ADD, SUBTRACT, MULT, MAX, MIN") &&
          Require(s.accumulator_cmd >= 2 && s.accumulator_cmd <= 4, "ts_cache_accum_cmd",
                  "accumulator_cmd", Num(s.accumulator_cmd),
                  "ACCUMULATE, ZERO_ACCUMULATE or LOAD_ACCUMULATE") &&
          Require(load || (s.imm1 == 0 && s.imm1_src == 0), "ts_cache_imm1", "imm1, imm1_src",
                  Cat(Hex(s.imm1), ", ", s.imm1_src), "0, 0 unless LOAD_ACCUMULATE") &&
          RequireDtype(s.in_dtype,
                       {Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP16,
                        Dtype::BFLOAT16, Dtype::FP32, Dtype::INT8, Dtype::INT16, Dtype::UINT8,
                        Dtype::UINT16},
                       "ts_cache_dtypes", "in_dtype") &&
          RequireValidDtype(s.out_dtype, true, "ts_cache_dtypes", "out_dtype") &&
          Require(s.reverse_operands == 0, "tensor_scalar_reverse_chk", "reverse_operands",
                  Num(s.reverse_operands), "0 (None)") &&
          TsImmediates(s) &&
          RequireCount({"src", "dst"}, src == dst, "tensor_scalar_tensor_chk",
                       "dst elements vs src elements", dst, Cat("== ", src));
      return;
    }
    const bool bitvec = info_.alu_class == AluClass::Bitvec;
    const bool rsqrt_form = op == Opcode::TensorScalarArith &&
                            s.op0 == static_cast<uint8_t>(AluOp::RSQRT) && s.op1 == 0 &&
                            s.imm0 == 0 && s.imm1 == 0 && s.imm0_src == 0 && s.imm1_src == 0;
    if (!TsOps(s, bitvec, rsqrt_form)) return;
    // tensor_scalar_valid_types
    if (bitvec && !Require(s.in_dtype == s.out_dtype && In(s.in_dtype, kIntTypes),
                           "tensor_scalar_valid_types", "in_dtype, out_dtype",
                           Cat(DtName(s.in_dtype), ", ", DtName(s.out_dtype)),
                           "equal, one of {INT8, UINT8, INT16, UINT16, UINT32, INT32}"))
      return;
    if (!RequireValidDtype(s.in_dtype, false, "tensor_scalar_valid_types", "in_dtype") ||
        !RequireValidDtype(s.out_dtype, true, "tensor_scalar_valid_types", "out_dtype") ||
        !TsImmediates(s))
      return;
    if (bitvec) {
      auto left = [](uint8_t o) { return o == 0x02 || o == 0x10; };
      auto right = [](uint8_t o) { return o == 0x03 || o == 0x11; };
      const bool needs4 = (left(s.op0) && right(s.op1)) || s.op0 == 0x03 || s.op1 == 0x03;
      if (needs4 && !Require(DtypeSize(static_cast<Dtype>(s.in_dtype)) == 4,
                             "tensor_scalar_shift_chk", "in_dtype", DtName(s.in_dtype),
                             "a 4-byte dtype for this shift combination"))
        return;
    }
    if (!RequireCount({"src", "dst"}, src == dst, "tensor_scalar_tensor_chk",
                      "dst elements vs src elements", dst, Cat("== ", src)) ||
        !Require(s.reverse_operands <= 3, "tensor_scalar_reverse_chk", "reverse_operands",
                 Num(s.reverse_operands), "<= 3") ||
        !Require(!rsqrt_form || s.reverse_operands == 0, "tensor_scalar_reverse_chk",
                 "reverse_operands", Num(s.reverse_operands), "0 (None) for the RSQRT form") ||
        !Require(s.accumulator_cmd == 0, "has_zero_accum_cmd_field", "accumulator_cmd",
                 Num(s.accumulator_cmd), "0 (IDLE)"))
      return;
    if (op == Opcode::TransposeTensorScalarArith) {
      if (!RequireCount({"src"}, src % 32 == 0, "s3d3_transpose_check", "src elements", src,
                        "a multiple of 32"))
        return;
      Require(s.num_active_channels % 32 == 0, "s3d3_transpose_check", "num_active_channels",
              Num(s.num_active_channels), "a multiple of 32");
    }
  }

  bool TsOps(const S3D3_TS& s, bool bitvec, bool rsqrt_form) {
    constexpr std::string_view pred = "tensor_scalar_valid_ops";
    for (auto [name, o] : {std::pair<std::string_view, uint8_t>{"op0", s.op0}, {"op1", s.op1}}) {
      if (!Require(AluOpExists(o, gen_), pred, name, OpName(o),
                   Cat("an ALU op of ", GenerationName(gen_))) ||
          !Require(o != 0x07 && o != 0x1A && o != 0x1B, pred, name, OpName(o),
                   "not DIVIDE, POW or MOD"))
        return false;
    }
    if (bitvec) {
      if (!Require(AluOpHas(s.op0, gen_, GBV), pred, "op0", OpName(s.op0), "a general bitvec op") ||
          !Require(AluOpHas(s.op1, gen_, GBV), pred, "op1", OpName(s.op1), "a general bitvec op"))
        return false;
    } else {
      const bool general = AluOpHas(s.op0, gen_, GAR) && AluOpHas(s.op1, gen_, GAR);
      const bool int_arm = gen_ == Generation::Maverick &&
                           inst_.opcode() == Opcode::TensorScalarArith &&
                           AluOpHas(s.op0, gen_, DVEINT) && AluOpHas(s.op1, gen_, DVEINT);
      if (!general && !rsqrt_form && !int_arm) {
        const bool first_bad = !AluOpHas(s.op0, gen_, GAR);
        return Fail(pred, first_bad ? "op0" : "op1", OpName(first_bad ? s.op0 : s.op1),
                    s.op0 == static_cast<uint8_t>(AluOp::RSQRT)
                        ? "the RSQRT form (0x43 only: op1 BYPASS, immediates and sources zero)"
                        : "a general arith op");
      }
    }
    return Require(s.op0 != 0 || s.op1 == 0, pred, "op0, op1",
                   Cat(OpName(s.op0), ", ", OpName(s.op1)), "op0 != BYPASS or op1 == BYPASS");
  }

  void PtrMulti() {
    const auto s = inst_.as<S4D4_TSM>();
    const bool bitvec = inst_.opcode() == Opcode::TensorScalarPtrMultiBitvec;
    const uint64_t src = Count("src"), dst = Count("dst");
    RequireCount({"src"}, s.src.num[3] >= 1 && s.src.num[3] <= 8, "has_tsm_num_scalars",
                 "W = src num[3]", s.src.num[3], "1..8") &&
        (bitvec ? Require(AluOpHas(s.op, gen_, BV), "tsm_valid_op", "op", OpName(s.op),
                          "a bitvec op")
                : Require(AluOpHas(s.op, gen_, GAR), "tsm_valid_op", "op", OpName(s.op),
                          "a general arith op")) &&
        (!bitvec ||
         Require(s.in_dtype == s.out_dtype &&
                     In(s.in_dtype, {Dtype::INT32, Dtype::UINT32, Dtype::UINT16, Dtype::UINT8}),
                 "tsm_valid_types", "in_dtype, out_dtype",
                 Cat(DtName(s.in_dtype), ", ", DtName(s.out_dtype)),
                 "equal, one of {INT32, UINT32, UINT16, UINT8}")) &&
        RequireValidDtype(s.in_dtype, false, "tsm_valid_types", "in_dtype") &&
        RequireValidDtype(s.out_dtype, true, "tsm_valid_types", "out_dtype") &&
        Require(s.op_dim == static_cast<uint8_t>(TensorSubdim::XYZ), "tsm_op_dim_xyz", "op_dim",
                Hex(s.op_dim, 2), "XYZ (0x04)") &&
        Require(s.reverse_operands == 0 || s.reverse_operands == 3, "tsm_reverse_chk",
                "reverse_operands", Num(s.reverse_operands), "0 (None) or 3 (Both)") &&
        RequireCount({"src", "dst"}, src == dst, "same_element_count_t4d",
                     "dst elements vs src elements", dst, Cat("== ", src));
  }

  void MatchReplace() {
    const auto s = inst_.as<S4D4_MR>();
    const uint64_t src = Count("src"), dst = Count("dst");
    const std::initializer_list<Dtype> kTypes = {Dtype::FP16,   Dtype::BFLOAT16, Dtype::UINT8, Dtype::UINT16,
                             Dtype::UINT32, Dtype::FP32,     Dtype::INT32};
    RequireCount({"src"}, src <= 16384, "has_match_replace8_src_element_cnt", "src elements",
                 src, "<= 16384") &&
        RequireCount({"src", "dst"}, src == dst, "match_replace8_same_element_count",
                     "dst elements vs src elements", dst, Cat("== ", src)) &&
        RequireDtype(s.in_dtype, kTypes, "match_replace_dtypes", "in_dtype") &&
        RequireDtype(s.out_dtype, kTypes, "match_replace_dtypes", "out_dtype");
  }

  void CopyCastRecip() {
    const auto s = inst_.as<S4D4_TR>();
    const Opcode op = inst_.opcode();
    const uint64_t src = Count("src"), dst = Count("dst");
    if (!Require(s.op == 0, "s4d4_tr_zero_op", "op", OpName(s.op), "BYPASS") ||
        !Require(s.mask_enable == 0, "s4d4_tr_mask_disabled", "mask_enable",
                 Num(s.mask_enable), "0") ||
        !Require(s.op_dim == 0 || s.op_dim == 2, "s4d4_tr_op_dim", "op_dim", Hex(s.op_dim, 2),
                 "UNUSED (0x00) or X (0x02)") ||
        !RequireCount({"src", "dst"}, src == dst, "s4d4_tr_same_element_count",
                      "dst elements vs src elements", dst, Cat("== ", src)) ||
        !RequireValidDtype(s.in_dtype, false, "s4d4_tr_dtypes", "in_dtype") ||
        !RequireValidDtype(s.out_dtype, true, "s4d4_tr_dtypes", "out_dtype"))
      return;
    if (op == Opcode::Copy &&
        !Require(s.in_dtype == s.out_dtype, "s4d4_tr_dtypes", "out_dtype", DtName(s.out_dtype),
                 Cat("== in_dtype ", DtName(s.in_dtype), " for Copy")))
      return;
    if (op == Opcode::Reciprocal &&
        (!RequireDtype(s.in_dtype, kStatsTypes, "s4d4_tr_dtypes", "in_dtype") ||
         !RequireDtype(s.out_dtype, kStatsTypes, "s4d4_tr_dtypes", "out_dtype")))
      return;
    if (op == Opcode::Reciprocal)
      Require(s.negated == 0, "s4d4_tr_negated", "negated", Num(s.negated), "0 for Reciprocal");
    else
      Require(s.negated <= 1, "s4d4_tr_negated", "negated", Num(s.negated), "0 or 1");
  }

  void MemsetReadIndices() {
    const auto s = inst_.as<D4_MR>();
    const uint64_t dst = Count("dst");
    if (inst_.opcode() == Opcode::Memset) {
      if (!RequireValidDtype(s.dtype, true, "memset_dtype", "dtype") ||
          !RequireCount({"dst"}, s.dst_element_count == dst, "d4_mr_element_count",
                        "dst_element_count", s.dst_element_count, Cat("== dst elements ", dst)))
        return;
      const int size = DtypeSize(static_cast<Dtype>(s.dtype));
      const uint32_t mask = size == 1 ? 0xFFFFFF00u : size == 2 ? 0xFFFF0000u : 0u;
      Require((s.set_value & mask) == 0, "memset_value_width", "set_value", Hex(s.set_value),
              Cat("a value that fits ", size, " byte(s)")) &&
          Require(s.serialization_mode == 0, "d4_mr_serial_mode", "serialization_mode",
                  Num(s.serialization_mode), "0 (Serial)");
      return;
    }
    RequireDtype(s.dtype, {Dtype::UINT16, Dtype::UINT32}, "read_indices_dtype", "dtype") &&
        RequireCount({"dst"}, dst == 8, "d4_mr_element_count", "dst elements", dst, "== 8") &&
        Require(s.dst_element_count == 8, "d4_mr_element_count", "dst_element_count",
                Num(s.dst_element_count), "== 8") &&
        Require(s.set_value == 0, "read_indices_zero_value", "set_value", Hex(s.set_value), "0") &&
        Require(s.serialization_mode == 0, "d4_mr_serial_mode", "serialization_mode",
                Num(s.serialization_mode), "0 (Serial)");
  }

  void ReadAccumulator() {
    const auto s = inst_.as<D1_RD>();
    const uint64_t dst = Count("dst");
    Require(s.dst_element_count == 1, "d1_rd_element_count", "dst_element_count",
            Num(s.dst_element_count), "== 1") &&
        RequireCount({"dst"}, dst == 1, "d1_rd_element_count", "dst elements", dst, "== 1") &&
        RequireDtype(s.dtype,
                     {Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP16,
                      Dtype::BFLOAT16, Dtype::FP32, Dtype::FP32R},
                     "read_accumulator_dtype", "dtype") &&
        Require(s.negated <= 1, "d1_rd_negated", "negated", Num(s.negated), "0 or 1");
  }

  void CtrlIm() {
    const auto s = inst_.as<CTRL_IM>();
    if (inst_.opcode() == Opcode::EngineNop) {
      for (int b = 12; b < 64; ++b)
        if (inst_.bytes[b] != 0) {
          Fail("engine_nop_zero_payload", Cat("byte ", b), Hex(inst_.bytes[b], 2), "0");
          return;
        }
      return;
    }
    Require(s.imm_ptr_select == 0, "ctrl_im_imm_ptr_select_zero", "imm_ptr_select",
            Num(s.imm_ptr_select), "0") &&
        Require(s.param_ram_offset <= 248, "param_ram_offset_range", "param_ram_offset",
                Num(s.param_ram_offset), "<= 248");
  }

  const Instruction& inst_;
  const Generation gen_;
  const OpcodeInfo& info_;
  const Operands ops_;
  std::optional<Violation> failure_;
};

// An Instruction built from raw bytes (not through Decode) may carry an unlisted opcode byte:
// report it as a decode error rather than dereferencing a missing table row.
std::optional<Violation> UnlistedOpcode(const Instruction& inst) {
  if (LookupOpcode(inst.bytes[0]) != nullptr) return std::nullopt;
  return MakeViolation(ErrorKind::Decode, "", "opcode", Hex(inst.bytes[0], 2),
                       "an opcode listed in encoding.md section 8");
}

}  // namespace

std::optional<Violation> CheckInstruction(const Instruction& inst, Generation gen) {
  if (auto v = UnlistedOpcode(inst)) return v;
  return Checker(inst, gen).Run();
}

std::optional<Violation> CheckExecutable(const Instruction& inst, Generation gen) {
  if (auto v = UnlistedOpcode(inst)) return v;
  const Operands ops = OperandsOf(inst);
  for (int i = 0; i < ops.num_tensors; ++i) {
    const TensorOperand& t = ops.tensors[i];
    const AddrMode m = AddrModeOf(t.pattern.addr);
    if (m == AddrMode::ShapeRegister || m == AddrMode::AddrShapeRegister ||
        m == AddrMode::Indirect)
      return MakeViolation(ErrorKind::Unsupported, "address_mode_supported",
                           Cat(t.name, " address"), Hex(t.pattern.addr, 8),
                           "an immediate or register address (shape-register and indirect "
                           "addressing are not implemented)");
  }
  const Opcode op = inst.opcode();
  if (op == Opcode::TensorScalarPtrMultiBitvec &&
      inst.as<S4D4_TSM>().op == static_cast<uint8_t>(AluOp::CRC32))
    return MakeViolation(ErrorKind::Unsupported, "alu_op_supported", "op", "CRC32 (0x1C)",
                         "an implemented ALU op (CRC32 is not implemented)");
  if (op == Opcode::TensorScalarArith && gen == Generation::Maverick) {
    const auto s = inst.as<S3D3_TS>();
    const bool general = AluOpHas(s.op0, gen, GAR) && AluOpHas(s.op1, gen, GAR);
    const bool rsqrt = s.op0 == static_cast<uint8_t>(AluOp::RSQRT);
    if (!general && !rsqrt)
      return MakeViolation(ErrorKind::Unsupported, "alu_op_supported", "op0, op1",
                           Cat(AluOpName(s.op0), ", ", AluOpName(s.op1)),
                           "general arith ops (MAVERICK's TensorScalar integer arm is not "
                           "implemented)");
  }
  return std::nullopt;
}

absl::Status Validate(const Instruction& inst, Generation gen, int64_t index) {
  if (auto v = CheckInstruction(inst, gen)) return ToStatus(*v, Location{index, inst.bytes[0]});
  return absl::OkStatus();
}

absl::Status ValidateProgram(std::span<const Instruction> program, Generation gen,
                             bool for_execution) {
  for (size_t i = 0; i < program.size(); ++i) {
    const Location where{static_cast<int64_t>(i), program[i].bytes[0]};
    if (auto v = CheckInstruction(program[i], gen)) return ToStatus(*v, where);
    if (for_execution)
      if (auto v = CheckExecutable(program[i], gen)) return ToStatus(*v, where);
  }
  return absl::OkStatus();
}

}  // namespace dvejit
