#include "frontend/generator.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <initializer_list>

#include "frontend/address.h"
#include "frontend/structs.h"

namespace dvejit {
namespace {

using Rng = std::mt19937_64;
using Set = std::vector<uint8_t>;

constexpr uint8_t D(Dtype d) { return static_cast<uint8_t>(d); }
constexpr uint8_t A(AluOp o) { return static_cast<uint8_t>(o); }

Set Dtypes(std::initializer_list<Dtype> l) {
  Set s;
  for (Dtype d : l) s.push_back(D(d));
  return s;
}
Set ValidDtypes(bool allow_fp32r) {
  Set s;
  for (int c = 0; c < 256; ++c)
    if (IsValidDtype(static_cast<uint8_t>(c), allow_fp32r)) s.push_back(static_cast<uint8_t>(c));
  return s;
}
Set AluOpsWith(Generation g, uint32_t flag) {
  Set s;
  for (int c = 0; c < 256; ++c)
    if (AluOpHas(static_cast<uint8_t>(c), g, flag)) s.push_back(static_cast<uint8_t>(c));
  return s;
}
int Size(uint8_t dtype) { return DtypeSize(static_cast<Dtype>(dtype)); }
Set Without(Set s, uint8_t v) {
  s.erase(std::remove(s.begin(), s.end(), v), s.end());
  return s;
}

const Set kStats = Dtypes({Dtype::FP32, Dtype::FP16, Dtype::BFLOAT16});
const Set kInts = Dtypes({Dtype::INT8, Dtype::UINT8, Dtype::INT16, Dtype::UINT16, Dtype::INT32,
                          Dtype::UINT32});
const Set kSInts = Dtypes({Dtype::INT8, Dtype::INT16, Dtype::INT32});
const Set kUInts = Dtypes({Dtype::UINT8, Dtype::UINT16, Dtype::UINT32});
const Set kDebugCmds = {0, 1, 3, 5, 7, 9};
const Set kWaitModes = {0, 1, 2, 3, 4, 5, 6, 7, 14, 15};
const Set kUpdateModes = {0, 1, 2, 3, 4, 5, 7, 9, 17, 18, 19, 20, 21, 23, 25};

enum class AddrKind : uint8_t { Immediate, Register, Unexecutable };
// Where one tensor operand goes.
struct Where {
  AddrKind kind = AddrKind::Immediate;
  Space space = Space::Sbuf;
  uint32_t p0 = 0;
};

class Gen {
 public:
  Gen(Rng& rng, const GeneratorOptions& o) : rng_(rng), o_(o), g_(o.gen) {
    max_channels_ = std::clamp(o.max_channels, 1, kPartitions);
    max_elements_ = std::clamp<int64_t>(o.max_elements, 1, 65535);
    const uint32_t active = GeometryOf(g_).sbuf_active_bytes;
    uint32_t lo = std::min(o.sbuf_lo, active);
    uint32_t hi = (o.sbuf_hi == 0 || o.sbuf_hi > active) ? active : o.sbuf_hi;
    if (hi < lo + 8) lo = 0, hi = active;
    sbuf_lo_ = lo;
    sbuf_hi_ = hi;
    has_psum_ = o.allow_psum && GeometryOf(g_).psum_size != 0;
  }

  Instruction Make(Opcode op) {
    inst_ = MakeInstruction(op);
    Header();
    const OpcodeInfo& info = InfoOf(op);
    switch (info.strct) {
      case StructKind::S4D2_BN: S4D2(op); break;
      case StructKind::S3S3D1_BN: GradAccum(); break;
      case StructKind::S3S3D1_BN2: GradAccum2(); break;
      case StructKind::S2_BN: S2(op); break;
      case StructKind::S2_BNPL2: ParamLoad2(); break;
      case StructKind::S3S3D3_TT: TensorTensor(op); break;
      case StructKind::S3D3_TS: TensorScalar(op); break;
      case StructKind::S4D4_TSM: PtrMulti(op); break;
      case StructKind::S4D4_MR: MatchReplace(); break;
      case StructKind::S4D4_TR: CopyCastRecip(op); break;
      case StructKind::D4_MR: MemsetReadIndices(op); break;
      case StructKind::D1_RD: ReadAccumulator(); break;
      case StructKind::CTRL_IM: CtrlIm(op); break;
    }
    return inst_;
  }

 private:
  // ---- randomness (platform independent) ----
  uint64_t Below(uint64_t n) {  // uniform in [0, n), n > 0
    return static_cast<uint64_t>((static_cast<unsigned __int128>(rng_()) * n) >> 64);
  }
  int64_t Range(int64_t lo, int64_t hi) {  // uniform in [lo, hi]
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool Chance(uint64_t num, uint64_t den) { return Below(den) < num; }
  uint8_t Pick(const Set& s) { return s[Below(s.size())]; }
  uint32_t Bits32() { return static_cast<uint32_t>(rng_()); }
  // A random value in [lo, hi], biased towards the ends and towards small values.
  int64_t Count(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    switch (Below(8)) {
      case 0: return lo;
      case 1: return hi;
      case 2:
      case 3: return Range(lo, std::min(hi, lo + 16));
      case 4: {  // log-uniform
        const int bits = std::bit_width(static_cast<uint64_t>(hi));
        const int64_t top = std::min<int64_t>(hi, int64_t{1} << Range(0, bits));
        return Range(lo, std::max(lo, top));
      }
      default: return Range(lo, hi);
    }
  }
  uint32_t FiniteF32Bits() {
    switch (Below(4)) {
      case 0: return std::bit_cast<uint32_t>(static_cast<float>(Range(-1000, 1000)));
      case 1: return Chance(1, 2) ? 0u : 0x80000000u;
      default: {
        uint32_t b = Bits32();
        if (((b >> 23) & 0xFF) == 0xFF) b &= ~(1u << 23);
        return b;
      }
    }
  }
  uint32_t ZeroF32Bits() { return Chance(1, 4) ? 0x80000000u : 0u; }  // ±0.0

  // ---- header and events ----
  void Header() {
    inst_.bytes[2] = Chance(1, 2) ? 0 : Pick(kDebugCmds);
    inst_.bytes[3] = static_cast<uint8_t>(Chance(1, 2) ? 0 : rng_());
    if (!o_.allow_events) return;
    auto mode = [&](const Set& modes, int at) {
      const uint8_t m = Chance(1, 3) ? 0 : Pick(modes);
      inst_.bytes[at] = m;
      inst_.bytes[at + 1] = static_cast<uint8_t>(m == 0 ? (Chance(1, 2) ? 0 : rng_()) : Below(32));
    };
    mode(kWaitModes, 4);
    mode(kUpdateModes, 6);
    const uint32_t sem = Chance(1, 2) ? static_cast<uint32_t>(Below(16)) : Bits32();
    std::memcpy(&inst_.bytes[8], &sem, 4);
  }

  // ---- channels, partitions, spaces ----
  int Channels(int multiple = 1) {
    if (multiple > 1) {
      const int k = std::max(1, max_channels_ / multiple);
      return multiple * static_cast<int>(Count(1, k));
    }
    if (Chance(1, 8)) return max_channels_;
    return static_cast<int>(Count(1, max_channels_));
  }
  uint32_t StartPartition() {
    const int last = kPartitions - n_;
    switch (Below(6)) {
      case 0: return 0;
      case 1: return static_cast<uint32_t>(last);
      default: return static_cast<uint32_t>(Range(0, last));
    }
  }
  AddrKind ChooseKind() {
    if (o_.allow_unexecutable && Chance(1, 16)) return AddrKind::Unexecutable;
    if (o_.allow_register_addresses && Chance(1, 8)) return AddrKind::Register;
    return AddrKind::Immediate;
  }
  // PSUM holds a destination only in a 4-byte dtype; a pattern that cannot fit densely goes to
  // SBUF unless broadcast is allowed (then it may compress with step-0 dimensions).
  Where Choose(bool is_dst, int size, int64_t count) {
    Where w;
    w.kind = ChooseKind();
    const bool psum_ok = has_psum_ && (!is_dst || size == 4) &&
                         (o_.allow_broadcast ||
                          count * size <= static_cast<int64_t>(GeometryOf(g_).psum_active_bytes));
    w.space = psum_ok && Chance(1, 4) ? Space::Psum : Space::Sbuf;
    w.p0 = StartPartition();
    return w;
  }
  // Two sources of one tt_valid_partitions check: at most one in PSUM; both in SBUF → same
  // quadrant.
  std::pair<Where, Where> ChoosePair(int size0, int size1, int64_t count) {
    Where a = Choose(false, size0, count), b = Choose(false, size1, count);
    if (a.kind == AddrKind::Immediate && b.kind == AddrKind::Immediate) {
      if (a.space == Space::Psum && b.space == Space::Psum) b.space = Space::Sbuf;
      if (a.space == Space::Sbuf && b.space == Space::Sbuf) {
        const uint32_t q = a.p0 / 32 * 32;
        const uint32_t hi = std::min<uint32_t>(q + 31, static_cast<uint32_t>(kPartitions - n_));
        b.p0 = static_cast<uint32_t>(Range(q, hi));
      }
    }
    return {a, b};
  }

  // The byte window of a space inside one partition.
  void Window(Space s, uint32_t* lo, uint32_t* hi) const {
    if (s == Space::Sbuf) {
      *lo = sbuf_lo_;
      *hi = sbuf_hi_;
    } else {
      *lo = 0;
      *hi = GeometryOf(g_).psum_active_bytes;
    }
  }

  // ---- shapes and steps ----
  // `count` split over `dims` dimensions, a random number of them > 1.
  void Shape(int64_t count, int dims, uint16_t* num) {
    for (int d = 0; d < dims; ++d) num[d] = 1;
    int order[4] = {0, 1, 2, 3};
    for (int i = dims - 1; i > 0; --i) std::swap(order[i], order[Below(i + 1)]);
    const int active = static_cast<int>(Range(1, dims));
    int64_t rest = count;
    for (int i = 0; i < active - 1; ++i) {
      std::vector<int64_t> divisors;
      for (int64_t k = 1; k * k <= rest; ++k)
        if (rest % k == 0) {
          divisors.push_back(k);
          if (k != rest / k) divisors.push_back(rest / k);
        }
      const int64_t f = divisors[Below(divisors.size())];
      num[order[i]] = static_cast<uint16_t>(f);
      rest /= f;
    }
    num[order[active - 1]] = static_cast<uint16_t>(rest);
  }
  static int64_t Extent(int dims, const uint16_t* num, const int16_t* step, int64_t* lo_out) {
    int64_t lo = 0, hi = 0;
    for (int d = 0; d < dims; ++d) {
      const int64_t span = static_cast<int64_t>(step[d]) * (num[d] - 1);
      (span < 0 ? lo : hi) += span;
    }
    if (lo_out) *lo_out = lo;
    return hi - lo + 1;
  }
  static int16_t ClampStep(int64_t s) {
    return static_cast<int16_t>(std::clamp<int64_t>(s, -32768, 32767));
  }
  int16_t Sign(int64_t s) {
    return ClampStep(o_.allow_negative_steps && Chance(1, 4) ? -s : s);
  }
  // Steps whose touched extent (in elements) is at most `cap` (≥ 1).
  void Steps(int dims, const uint16_t* num, int64_t cap, int16_t* step) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      int64_t dense = 1;
      for (int d = 0; d < dims; ++d) {
        int64_t s;
        if (num[d] == 1) {
          s = Range(0, 3);  // never moves; any value is valid
        } else {
          switch (Below(attempt < 4 ? 8 : 4)) {
            case 0:
            case 1: s = dense; break;
            case 2: s = o_.allow_broadcast ? 0 : dense; break;
            case 3: s = Range(1, 4); break;
            case 4:
            case 5: s = dense * Range(1, 3); break;
            default: s = Range(1, std::max<int64_t>(1, cap / (num[d] - 1))); break;
          }
        }
        step[d] = Sign(s);
        dense *= num[d];
      }
      if (Extent(dims, num, step, nullptr) <= cap) return;
    }
    // Dense, then step 0 on outer dimensions until it fits (always fits with all zero).
    int64_t dense = 1;
    for (int d = 0; d < dims; ++d) {
      step[d] = num[d] == 1 ? 0 : ClampStep(dense);
      dense *= num[d];
    }
    for (int d = dims - 1; d >= 0 && Extent(dims, num, step, nullptr) > cap; --d) step[d] = 0;
    for (int d = 0; d < dims && Extent(dims, num, step, nullptr) > cap; ++d) step[d] = 0;
  }
  // An aligned element index in [lo_e, hi_e], biased to the ends.
  int64_t Position(int64_t lo_e, int64_t hi_e) {
    switch (Below(6)) {
      case 0: return lo_e;
      case 1: return hi_e;
      default: return Range(lo_e, hi_e);
    }
  }
  uint32_t UnexecutableWord() {
    static const uint8_t kMarkers[] = {0x40, 0xC0, 0x20, 0xA0};
    return (static_cast<uint32_t>(kMarkers[Below(4)]) << 24) | (Bits32() & 0xFFFFFF);
  }

  // Fills one tensor operand with shape `num`, dtype size `size`, placed at `w`.
  template <int N>
  void Fill(TensorPattern<N>& t, const uint16_t* num, int size, const Where& w) {
    for (int d = 0; d < N; ++d) t.num[d] = num[d];
    if (w.kind != AddrKind::Immediate) {
      for (int d = 0; d < N; ++d) t.step[d] = Sign(Range(o_.allow_broadcast ? 0 : 1, 64));
      t.addr = w.kind == AddrKind::Register ? MakeRegisterAddress(static_cast<uint8_t>(Below(kRegisters)))
                                            : UnexecutableWord();
      return;
    }
    uint32_t lo, hi;
    Window(w.space, &lo, &hi);
    const int64_t lo_e = (lo + size - 1) / size, hi_e = hi / size;  // elements [lo_e, hi_e)
    Steps(N, num, hi_e - lo_e, t.step);
    int64_t neg = 0;
    const int64_t extent = Extent(N, num, t.step, &neg);
    // start + neg >= lo_e and start + neg + extent <= hi_e
    const int64_t start = Position(lo_e - neg, hi_e - extent - neg);
    t.addr = MakeAddress(w.space, w.p0, static_cast<uint32_t>(start * size), g_);
  }
  template <int N>
  void FillCount(TensorPattern<N>& t, int64_t count, int size, const Where& w) {
    uint16_t num[4];
    Shape(count, N, num);
    Fill(t, num, size, w);
  }

  // ---- pointer immediates ----
  // An ADDR4 pointer to one `size`-byte value per channel: immediate (SBUF/PSUM, aligned, in
  // range, p0 + n <= 128) or, when allowed, register form.
  uint32_t Pointer(int size) {
    if (o_.allow_register_addresses && Chance(1, 6))
      return MakeRegisterAddress(static_cast<uint8_t>(Below(kRegisters)));
    const Space s = has_psum_ && Chance(1, 4) ? Space::Psum : Space::Sbuf;
    uint32_t lo, hi;
    Window(s, &lo, &hi);
    const int64_t lo_e = (lo + size - 1) / size, hi_e = hi / size;
    const int64_t at = Position(lo_e, hi_e - 1);
    return MakeAddress(s, StartPartition(), static_cast<uint32_t>(at * size), g_);
  }
  uint32_t ImmReg() { return static_cast<uint32_t>(Below(kRegisters)); }
  // An IMM_SRC choice among `choices` (register pointer only when allowed).
  uint8_t Source(std::initializer_list<uint8_t> choices) {
    Set s;
    for (uint8_t c : choices)
      if (c != 2 || o_.allow_register_addresses) s.push_back(c);
    return Pick(s);
  }
  // The word of an immediate with source `src`: 1 (or 0 where `zero_is_pointer`) → pointer,
  // 2 → IMM_REG, 0 → an instruction value `value`.
  uint32_t ImmWord(uint8_t src, int ptr_size, bool zero_is_pointer, uint32_t value) {
    if (src == 1 || (src == 0 && zero_is_pointer)) return Pointer(ptr_size);
    if (src == 2) return ImmReg();
    return value;
  }

  int64_t Cap(int64_t limit) const { return std::min(limit, max_elements_); }

  // ---- per struct ----
  void S4D2(Opcode op) {
    auto s = inst_.as<S4D2_BN>();
    int64_t src_count, dst_count;
    uint8_t in, out;
    bool finite_counts = false;
    switch (op) {
      case Opcode::BatchNormStats2:
        n_ = Channels();
        src_count = Count(1, Cap(512));
        dst_count = 6;
        in = Pick(kStats), out = Pick(kStats);
        finite_counts = true;
        break;
      case Opcode::TransposeBatchNormStats2:
        n_ = Channels(32);
        src_count = 32 * Count(1, std::max<int64_t>(1, Cap(512) / 32));
        dst_count = 6;
        in = Pick(kStats), out = Pick(kStats);
        finite_counts = true;
        break;
      case Opcode::BatchNormStats:
        n_ = Channels();
        src_count = Count(1, Cap(256));
        dst_count = 3;
        in = Pick(kStats), out = Pick(kStats);
        finite_counts = true;
        break;
      case Opcode::BatchNormAggregate:
        n_ = Channels();
        src_count = 3 * Count(1, std::max<int64_t>(1, Cap(65535) / 3));
        dst_count = 2;
        in = Pick(kStats), out = Pick(kStats);
        break;
      case Opcode::Max8:
        n_ = Channels();
        src_count = Count(8, std::max<int64_t>(8, Cap(16384)));
        dst_count = 8;
        in = Pick(ValidDtypes(false)), out = Pick(ValidDtypes(true));
        break;
      default:  // FindIndex8
        n_ = Channels();
        src_count = Count(8, std::max<int64_t>(8, Cap(16384)));
        dst_count = 8;
        in = Pick(ValidDtypes(false)), out = Pick(Dtypes({Dtype::UINT16, Dtype::UINT32}));
        break;
    }
    s.in_dtype = in;
    s.out_dtype = out;
    s.num_active_channels = static_cast<uint8_t>(n_);
    FillCount(s.src, src_count, Size(in), Choose(false, Size(in), src_count));
    FillCount(s.dst, dst_count, Size(out), Choose(true, Size(out), dst_count));
    const uint32_t even = finite_counts ? FiniteF32Bits() : ZeroF32Bits();
    const uint32_t odd = finite_counts ? FiniteF32Bits() : ZeroF32Bits();
    std::memcpy(&s.even_count, &even, 4);
    std::memcpy(&s.odd_count, &odd, 4);
    StoreTo(s, inst_.bytes.data());
  }

  // The shared part of GradAccum v1/v2: x, dy, dst and the channel count.
  template <typename S>
  void GradAccumTensors(S& s, uint8_t x, uint8_t dy, uint8_t out) {
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    s.in_dtypes = static_cast<uint8_t>(x | dy << 4);
    const int64_t count = Count(1, max_elements_);
    auto [wx, wdy] = ChoosePair(Size(x), Size(dy), count);
    FillCount(s.src0, count, Size(x), wx);
    FillCount(s.src1, count, Size(dy), wdy);
    const uint16_t three[1] = {3};
    Fill(s.dst, three, Size(out), Choose(true, Size(out), 3));
  }
  void GradAccum() {
    auto s = inst_.as<S3S3D1_BN>();
    const Set in = Dtypes({Dtype::FP16, Dtype::BFLOAT16, Dtype::FP32, Dtype::INT32});
    const uint8_t x = Pick(in), dy = Pick(in), out = Pick(kStats);
    const uint8_t imm = Pick(Dtypes({Dtype::INVALID, Dtype::FP16, Dtype::BFLOAT16, Dtype::FP32,
                                     Dtype::INT32}));
    s.immediate_dtype = imm;
    s.out_dtype = out;
    GradAccumTensors(s, x, dy, out);
    const int imm_size = imm == 0 ? 4 : Size(imm);
    s.imm0 = Pointer(imm_size);
    s.imm1 = Pointer(imm_size);
    StoreTo(s, inst_.bytes.data());
  }
  void GradAccum2() {
    auto s = inst_.as<S3S3D1_BN2>();
    const Set in = Dtypes({Dtype::FP16, Dtype::BFLOAT16, Dtype::FP32, Dtype::INT32});
    const uint8_t x = Pick(in), dy = Pick(in), out = Pick(kStats), imm = Pick(in);
    s.imm_out_dtypes = static_cast<uint8_t>(imm | out << 4);
    GradAccumTensors(s, x, dy, out);
    const uint8_t src0 = Source({1, 2}), src1 = Source({1, 2});
    s.imm_srcs = static_cast<uint8_t>(src0 | src1 << 4);
    s.imm0 = ImmWord(src0, Size(imm), false, 0);
    s.imm1 = ImmWord(src1, Size(imm), false, 0);
    StoreTo(s, inst_.bytes.data());
  }

  void S2(Opcode op) {
    auto s = inst_.as<S2_BN>();
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    uint16_t num[2];
    switch (op) {
      case Opcode::BatchNormParamLoad: {
        s.dtype = Pick(kStats);
        const bool row = Chance(1, 2);
        num[0] = row ? 3 : 1;
        num[1] = row ? 1 : 3;
        Fill(s.src, num, Size(s.dtype), Choose(false, Size(s.dtype), 3));
        s.imm1 = FiniteF32Bits();
        s.imm0_src = Source({0, 1, 2});
        s.imm0_ptr = ImmWord(s.imm0_src, 4, true, 0);
        break;
      }
      case Opcode::MatchValueLoad:
        s.dtype = Pick(ValidDtypes(false));
        FillCount(s.src, 8, Size(s.dtype), Choose(false, Size(s.dtype), 8));
        s.imm1 = ZeroF32Bits();
        break;
      default: {  // ImmLdArith / ImmLdBitvec
        s.dtype = op == Opcode::TensorScalarImmLdArith
                      ? Pick(Dtypes({Dtype::FP32, Dtype::FP16, Dtype::BFLOAT16, Dtype::FP8_EXP3,
                                     Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::UINT32,
                                     Dtype::UINT16, Dtype::UINT8, Dtype::INT32, Dtype::INT16,
                                     Dtype::INT8}))
                      : Pick(Dtypes({Dtype::UINT32, Dtype::UINT16, Dtype::UINT8, Dtype::INT32}));
        const int64_t count = Count(1, Cap(8));
        FillCount(s.src, count, Size(s.dtype), Choose(false, Size(s.dtype), count));
        s.imm1 = ZeroF32Bits();
        break;
      }
    }
    StoreTo(s, inst_.bytes.data());
  }

  void ParamLoad2() {
    auto s = inst_.as<S2_BNPL2>();
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    s.src_dtype = Pick(kStats);
    s.immediate_dtype = Pick(kStats);
    const bool row = Chance(1, 2);
    const uint16_t num[2] = {static_cast<uint16_t>(row ? 2 : 1), static_cast<uint16_t>(row ? 1 : 2)};
    Fill(s.src, num, Size(s.src_dtype), Choose(false, Size(s.src_dtype), 2));
    const uint32_t ec = FiniteF32Bits();
    std::memcpy(&s.element_count, &ec, 4);
    s.imm0_src = Source({0, 1, 2});
    s.imm1_src = Source({0, 1, 2});
    s.imm0_ptr = ImmWord(s.imm0_src, Size(s.immediate_dtype), true, 0);
    s.imm1_ptr = ImmWord(s.imm1_src, Size(s.immediate_dtype), true, 0);
    StoreTo(s, inst_.bytes.data());
  }

  // Three integer dtypes of one signedness allowed by an op's SGN/UNS flags.
  void IntTriple(uint32_t flags, uint8_t* a, uint8_t* b, uint8_t* out) {
    const bool sgn = flags & SGN, uns = flags & UNS;
    const Set& set = (sgn && uns) ? (Chance(1, 2) ? kSInts : kUInts) : sgn ? kSInts : kUInts;
    *a = Pick(set), *b = Pick(set), *out = Pick(set);
  }

  void TensorTensor(Opcode op) {
    auto s = inst_.as<S3S3D3_TT>();
    uint8_t a, b, out, alu = 0;
    switch (op) {
      case Opcode::TensorTensorArith: {
        Set ops = AluOpsWith(g_, GAR);
        for (uint8_t o : AluOpsWith(g_, VINT)) ops.push_back(o);
        ops.push_back(A(AluOp::POW));
        alu = Pick(ops);
        const uint32_t flags = LookupAluOp(alu)->flags;
        if (flags & INT) {
          IntTriple(flags, &a, &b, &out);
        } else if (alu == A(AluOp::MOD)) {
          if (Chance(1, 2)) {
            IntTriple(flags, &a, &b, &out);
          } else {  // neither source an integer: MOD on floats, any output
            Set floats;
            for (uint8_t d : ValidDtypes(false))
              if (!IsIntDtype(static_cast<Dtype>(d))) floats.push_back(d);
            a = Pick(floats), b = Pick(floats), out = Pick(ValidDtypes(true));
          }
        } else {
          a = Pick(ValidDtypes(false)), b = Pick(ValidDtypes(false)), out = Pick(ValidDtypes(true));
        }
        break;
      }
      case Opcode::TensorTensorBitvec:
        alu = Pick(AluOpsWith(g_, GBV));
        a = b = out = Pick(kInts);
        break;
      case Opcode::BatchNormBackProp:
        a = Pick(kStats), b = Pick(kStats), out = Pick(kStats);
        break;
      case Opcode::CopyPredicated:
        a = Pick(kInts), b = Pick(ValidDtypes(false)), out = b;
        break;
      default:  // CastPredicated
        a = Pick(kInts), b = Pick(ValidDtypes(false)), out = Pick(ValidDtypes(false));
        break;
    }
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    s.op = alu;
    s.in_dtypes = static_cast<uint8_t>(a | b << 4);
    s.out_dtype = out;
    const int64_t count = Count(1, max_elements_);
    auto [w0, w1] = ChoosePair(Size(a), Size(b), count);
    FillCount(s.src0, count, Size(a), w0);
    FillCount(s.src1, count, Size(b), w1);
    FillCount(s.dst, count, Size(out), Choose(true, Size(out), count));
    StoreTo(s, inst_.bytes.data());
  }

  // op0, op1 from `ops` with (op0 != BYPASS) || (op1 == BYPASS).
  void OpPair(const Set& ops, uint8_t* op0, uint8_t* op1) {
    *op0 = Pick(ops);
    *op1 = Chance(1, 6) ? 0 : Pick(ops);
    if (*op0 == 0) *op1 = 0;
  }
  uint32_t InstructionValue(bool bitvec, uint8_t in) {
    if (!bitvec) return Chance(3, 4) ? FiniteF32Bits() : Bits32();
    const int size = Size(in);
    const uint32_t v = Chance(1, 3) ? static_cast<uint32_t>(Below(33)) : Bits32();
    return size == 1 ? v & 0xFF : size == 2 ? v & 0xFFFF : v;
  }

  void TensorScalar(Opcode op) {
    auto s = inst_.as<S3D3_TS>();
    const bool bitvec = InfoOf(op).alu_class == AluClass::Bitvec;
    const bool ptr_form = op == Opcode::TensorScalarPtrArith || op == Opcode::TensorScalarPtrBitvec;
    const bool cache =
        op == Opcode::TensorScalarCacheReduce || op == Opcode::TensorScalarCacheCumulative;
    const bool transpose = op == Opcode::TransposeTensorScalarArith;
    bool rsqrt = false;
    n_ = Channels(transpose ? 32 : 1);  // first: pointers depend on it
    s.num_active_channels = static_cast<uint8_t>(n_);
    // ops
    if (cache) {
      s.op0 = Pick(AluOpsWith(g_, GAR));
      s.op1 = Pick({A(AluOp::ADD), A(AluOp::SUBTRACT), A(AluOp::MULT), A(AluOp::MAX),
                    A(AluOp::MIN)});
    } else if (bitvec) {
      OpPair(AluOpsWith(g_, GBV), &s.op0, &s.op1);
    } else if (op == Opcode::TensorScalarArith && Chance(1, 8)) {
      rsqrt = true;
      s.op0 = A(AluOp::RSQRT);
      s.op1 = 0;
    } else if (op == Opcode::TensorScalarArith && g_ == Generation::Maverick &&
               o_.allow_unexecutable && Chance(1, 6)) {
      OpPair(AluOpsWith(g_, DVEINT), &s.op0, &s.op1);
    } else {
      OpPair(AluOpsWith(g_, GAR), &s.op0, &s.op1);
    }
    // dtypes
    if (cache) {
      s.in_dtype = Pick(Dtypes({Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP16,
                                Dtype::BFLOAT16, Dtype::FP32, Dtype::INT8, Dtype::INT16,
                                Dtype::UINT8, Dtype::UINT16}));
      s.out_dtype = Pick(ValidDtypes(true));
    } else if (bitvec) {
      auto left = [](uint8_t o) { return o == 0x02 || o == 0x10; };
      auto right = [](uint8_t o) { return o == 0x03 || o == 0x11; };
      const bool needs4 = (left(s.op0) && right(s.op1)) || s.op0 == 0x03 || s.op1 == 0x03;
      s.in_dtype = s.out_dtype = needs4 ? Pick(Dtypes({Dtype::INT32, Dtype::UINT32})) : Pick(kInts);
    } else {
      s.in_dtype = Pick(ValidDtypes(false));
      s.out_dtype = Pick(ValidDtypes(true));
    }
    // immediates
    const int ptr_size = bitvec ? Size(s.in_dtype) : 4;
    if (ptr_form) {
      s.imm0_src = s.imm1_src = 0;
      s.imm0 = Pointer(ptr_size);
      s.imm1 = Pointer(ptr_size);
    } else if (!rsqrt) {
      s.imm0_src = Source({0, 1, 2});
      s.imm0 = ImmWord(s.imm0_src, ptr_size, false, InstructionValue(bitvec, s.in_dtype));
      s.imm1_src = Source({0, 1, 2});
      s.imm1 = ImmWord(s.imm1_src, ptr_size, false, InstructionValue(bitvec, s.in_dtype));
    }
    // accumulator / reverse
    if (cache) {
      s.accumulator_cmd = static_cast<uint8_t>(Range(2, 4));
      if (s.accumulator_cmd != static_cast<uint8_t>(AccumCmd::LoadAccumulate))
        s.imm1 = s.imm1_src = 0;
      s.reverse_operands = 0;
    } else {
      s.reverse_operands = rsqrt ? 0 : static_cast<uint8_t>(Below(4));
    }
    // tensors
    const int64_t count =
        transpose ? 32 * Count(1, std::max<int64_t>(1, max_elements_ / 32)) : Count(1, max_elements_);
    FillCount(s.src, count, Size(s.in_dtype), Choose(false, Size(s.in_dtype), count));
    FillCount(s.dst, count, Size(s.out_dtype), Choose(true, Size(s.out_dtype), count));
    StoreTo(s, inst_.bytes.data());
  }

  void PtrMulti(Opcode op) {
    auto s = inst_.as<S4D4_TSM>();
    const bool bitvec = op == Opcode::TensorScalarPtrMultiBitvec;
    if (bitvec) {
      Set ops = AluOpsWith(g_, BV);
      if (!o_.allow_unexecutable) ops = Without(ops, A(AluOp::CRC32));
      s.op = Pick(ops);
      s.in_dtype = s.out_dtype =
          Pick(Dtypes({Dtype::INT32, Dtype::UINT32, Dtype::UINT16, Dtype::UINT8}));
    } else {
      s.op = Pick(AluOpsWith(g_, GAR));
      s.in_dtype = Pick(ValidDtypes(false));
      s.out_dtype = Pick(ValidDtypes(true));
    }
    s.op_dim = static_cast<uint8_t>(TensorSubdim::XYZ);
    s.reverse_operands = Chance(1, 2) ? 0 : 3;
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    const int64_t w = Range(1, std::min<int64_t>(8, max_elements_));
    const int64_t inner = Count(1, std::max<int64_t>(1, max_elements_ / w));
    uint16_t num[4];
    Shape(inner, 3, num);
    num[3] = static_cast<uint16_t>(w);
    Fill(s.src, num, Size(s.in_dtype), Choose(false, Size(s.in_dtype), inner * w));
    FillCount(s.dst, inner * w, Size(s.out_dtype), Choose(true, Size(s.out_dtype), inner * w));
    StoreTo(s, inst_.bytes.data());
  }

  void MatchReplace() {
    auto s = inst_.as<S4D4_MR>();
    const Set types = Dtypes({Dtype::FP16, Dtype::BFLOAT16, Dtype::UINT8, Dtype::UINT16,
                              Dtype::UINT32, Dtype::FP32, Dtype::INT32});
    s.in_dtype = Pick(types);
    s.out_dtype = Pick(types);
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    const uint32_t r = Chance(1, 2) ? FiniteF32Bits() : Bits32();
    std::memcpy(&s.replacement, &r, 4);
    const int64_t count = Count(1, Cap(16384));
    FillCount(s.src, count, Size(s.in_dtype), Choose(false, Size(s.in_dtype), count));
    FillCount(s.dst, count, Size(s.out_dtype), Choose(true, Size(s.out_dtype), count));
    StoreTo(s, inst_.bytes.data());
  }

  void CopyCastRecip(Opcode op) {
    auto s = inst_.as<S4D4_TR>();
    switch (op) {
      case Opcode::Copy:
        s.in_dtype = s.out_dtype = Pick(ValidDtypes(false));
        s.negated = static_cast<uint8_t>(Below(2));
        break;
      case Opcode::Cast:
        s.in_dtype = Pick(ValidDtypes(false));
        s.out_dtype = Pick(ValidDtypes(true));
        s.negated = static_cast<uint8_t>(Below(2));
        break;
      default:  // Reciprocal
        s.in_dtype = Pick(kStats);
        s.out_dtype = Pick(kStats);
        s.negated = 0;
        break;
    }
    s.op = 0;
    s.mask_enable = 0;
    s.op_dim = Chance(1, 2) ? 0 : static_cast<uint8_t>(TensorSubdim::X);
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    const int64_t count = Count(1, max_elements_);
    FillCount(s.src, count, Size(s.in_dtype), Choose(false, Size(s.in_dtype), count));
    FillCount(s.dst, count, Size(s.out_dtype), Choose(true, Size(s.out_dtype), count));
    StoreTo(s, inst_.bytes.data());
  }

  void MemsetReadIndices(Opcode op) {
    auto s = inst_.as<D4_MR>();
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    s.serialization_mode = 0;
    int64_t count;
    if (op == Opcode::Memset) {
      s.dtype = Pick(ValidDtypes(true));
      count = Count(1, max_elements_);
      const uint32_t v = Chance(1, 2) ? FiniteF32Bits() : Bits32();
      const int size = Size(s.dtype);
      s.set_value = size == 1 ? v & 0xFF : size == 2 ? v & 0xFFFF : v;
    } else {
      s.dtype = Pick(Dtypes({Dtype::UINT16, Dtype::UINT32}));
      count = 8;
      s.set_value = 0;
    }
    s.dst_element_count = static_cast<uint32_t>(count);
    FillCount(s.dst, count, Size(s.dtype), Choose(true, Size(s.dtype), count));
    StoreTo(s, inst_.bytes.data());
  }

  void ReadAccumulator() {
    auto s = inst_.as<D1_RD>();
    n_ = Channels();
    s.num_active_channels = static_cast<uint8_t>(n_);
    s.dtype = Pick(Dtypes({Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP16,
                           Dtype::BFLOAT16, Dtype::FP32, Dtype::FP32R}));
    s.negated = static_cast<uint8_t>(Below(2));
    s.dst_element_count = 1;
    const uint16_t one[1] = {1};
    Fill(s.dst, one, Size(s.dtype), Choose(true, Size(s.dtype), 1));
    StoreTo(s, inst_.bytes.data());
  }

  void CtrlIm(Opcode op) {
    if (op == Opcode::EngineNop) return;  // every payload byte zero
    auto s = inst_.as<CTRL_IM>();
    s.param_ram_offset = static_cast<uint16_t>(Count(0, 248));
    s.imm_ptr_select = 0;
    for (float& f : s.immediate) {
      const uint32_t b = Chance(3, 4) ? FiniteF32Bits() : Bits32();
      std::memcpy(&f, &b, 4);
    }
    StoreTo(s, inst_.bytes.data());
  }

  Rng& rng_;
  const GeneratorOptions& o_;
  const Generation g_;
  int max_channels_;
  int64_t max_elements_;
  uint32_t sbuf_lo_, sbuf_hi_;
  bool has_psum_;
  int n_ = 1;  // num_active_channels of the record being built
  Instruction inst_;
};

}  // namespace

bool IsGeneratable(Opcode op, Generation gen) {
  const OpcodeInfo* info = LookupOpcode(static_cast<uint8_t>(op));
  if (info == nullptr || info->tier == Tier::Unsupported) return false;
  if (op == Opcode::BatchNormGradAccumulate && gen == Generation::Maverick) return false;
  if (op == Opcode::DveReadIndices && gen == Generation::Sunda) return false;
  return true;
}

std::vector<Opcode> GeneratableOpcodes(Generation gen) {
  int n = 0;
  const OpcodeInfo* all = AllOpcodes(&n);
  std::vector<Opcode> out;
  for (int i = 0; i < n; ++i)
    if (IsGeneratable(all[i].opcode, gen)) out.push_back(all[i].opcode);
  return out;
}

Instruction GenerateValid(Opcode op, std::mt19937_64& rng, const GeneratorOptions& opts) {
  if (!IsGeneratable(op, opts.gen)) return MakeInstruction(op);
  return Gen(rng, opts).Make(op);
}

Instruction GenerateRandomValid(std::mt19937_64& rng, const GeneratorOptions& opts) {
  const std::vector<Opcode> ops = GeneratableOpcodes(opts.gen);
  const uint64_t i =
      static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * ops.size()) >> 64);
  return GenerateValid(ops[i], rng, opts);
}

}  // namespace dvejit
