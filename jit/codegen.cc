#include "jit/codegen.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include "frontend/strcat.h"
#include "kernels/alu.h"
#include "kernels/numerics.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#pragma GCC diagnostic pop

namespace dvejit::jit {

void RunBlocksInline(const RtTable* rt, RegionFn region, const uint64_t* args, MachineState* m, int64_t blocks,
                     int64_t /*bytes*/) {
  region(args, m, rt, 0, blocks);
}

const RtTable& DefaultRtTable(void (*interp)(void*, int32_t)) {
  static thread_local RtTable table;
  table.interp = interp;
  table.pow = num::PowF;
  table.fmod = [](float a, float b) { return std::fmod(a, b); };
  table.run_blocks = RunBlocksInline;
  table.threads = 1;
  table.min_split_bytes = 0;
  return table;
}

namespace {

using namespace llvm;
using ir::Op;
using ir::Stmt;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
constexpr uint64_t kPramOffset = offsetof(MachineState, pram);
constexpr uint64_t kLanesOffset = offsetof(MachineState, lanes);
constexpr uint64_t kLaneSize = sizeof(LaneState);
constexpr uint64_t kSaturateOffset = offsetof(MachineState, saturate);
constexpr uint64_t kImmCountOffset = offsetof(LaneState, imm_count);
constexpr uint64_t kImmBitvecOffset = offsetof(LaneState, imm_bitvec);
uint64_t LaneFieldOffset(ir::LaneField f) {
  switch (f) {
    case ir::LaneField::N: return offsetof(LaneState, bn_n);
    case ir::LaneField::Mean: return offsetof(LaneState, bn_mean);
    case ir::LaneField::A: return offsetof(LaneState, bn_a);
    case ir::LaneField::B: return offsetof(LaneState, bn_b);
    case ir::LaneField::C: return offsetof(LaneState, bn_c);
    default: break;
  }
  const int i = static_cast<int>(f);
  if (i < static_cast<int>(ir::LaneField::Idx0))
    return offsetof(LaneState, mv) + 4 * static_cast<uint64_t>(i - static_cast<int>(ir::LaneField::Mv0));
  if (i < static_cast<int>(ir::LaneField::Imm0))
    return offsetof(LaneState, idx) + 4 * static_cast<uint64_t>(i - static_cast<int>(ir::LaneField::Idx0));
  return offsetof(LaneState, imm) + 4 * static_cast<uint64_t>(i - static_cast<int>(ir::LaneField::Imm0));
}
#pragma GCC diagnostic pop

std::vector<int64_t> ElementOffsets(const Pattern& p) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(p.Count()));
  const int n1 = p.dims > 1 ? p.num[1] : 1, n2 = p.dims > 2 ? p.num[2] : 1,
            n3 = p.dims > 3 ? p.num[3] : 1;
  for (int i3 = 0; i3 < n3; ++i3)
    for (int i2 = 0; i2 < n2; ++i2)
      for (int i1 = 0; i1 < n1; ++i1)
        for (int i0 = 0; i0 < p.num[0]; ++i0)
          out.push_back(int64_t{i0} * p.step[0] + int64_t{i1} * p.step[1] +
                        int64_t{i2} * p.step[2] + int64_t{i3} * p.step[3]);
  return out;
}

class Emitter {
 public:
  Emitter(const ir::Function& f, Module& m, const CodegenTarget& target)
      : f_(f),
        m_(m),
        ctx_(m.getContext()),
        b_(ctx_),
        W_(target.width),
        byte_permute_(target.byte_permute),
        fma_unit_(target.fma) {
    f32_ = Type::getFloatTy(ctx_);
    i8_ = Type::getInt8Ty(ctx_);
    i16_ = Type::getInt16Ty(ctx_);
    i32_ = Type::getInt32Ty(ctx_);
    i64_ = Type::getInt64Ty(ctx_);
    ptr_ = PointerType::get(ctx_, 0);
    SetWidth(W_);
    values_.assign(f.stmts.size(), nullptr);
  }

  absl::Status Emit(const std::string& symbol) {
    symbol_ = symbol;
    auto* type = FunctionType::get(Type::getVoidTy(ctx_), {ptr_, ptr_, ptr_, ptr_}, false);
    StartFunction(Function::Create(type, Function::ExternalLinkage, symbol, m_));
    ctxp_ = fn_->getArg(3);
    for (size_t ri = 0; ri < f_.regions.size(); ++ri) {
      const ir::Region& r = f_.regions[ri];
      if (r.channel_major) {
        if (auto s = ChannelMajorRegion(r); !s.ok()) return s;
        continue;
      }
      int end = r.end;  // global regions next to each other run as one span of statements
      while (ri + 1 < f_.regions.size() && !f_.regions[ri + 1].channel_major) end = f_.regions[++ri].end;
      for (int i = r.begin; i < end;) i = GlobalStmts(i, end);
    }
    FinishFunction();
    if (no_transpose_plan_) return absl::InternalError(Cat("no transpose plan for width ", W_));
    return absl::OkStatus();
  }

 private:
  // Makes `fn` (its first arguments: args, state, rt) the function being emitted, at the start of
  // its body; FinishFunction returns from it and has its entry block, where Reg() and Var() put
  // their allocas, branch to the body.
  void StartFunction(Function* fn) {
    fn_ = fn;
    args_ = fn->getArg(0);
    state_ = fn->getArg(1);
    rt_ = fn->getArg(2);
    entry_ = BasicBlock::Create(ctx_, "entry", fn);
    b_.SetInsertPoint(BasicBlock::Create(ctx_, "body", fn));
  }
  void FinishFunction() {
    b_.CreateRetVoid();
    IRBuilder<>(entry_).CreateBr(&*std::next(fn_->begin()));
  }

  // ---- vector shapes ----
  // Values are vectors of n_ lanes: a block's channels (L = one or two hardware vectors) in
  // channel-major statements, W consecutive elements of one row in row-wise loops.
  void SetWidth(int n) {
    n_ = n;
    vf_ = FixedVectorType::get(f32_, n);
    vi32_ = FixedVectorType::get(i32_, n);
    vi64_ = FixedVectorType::get(i64_, n);
  }
  class WidthScope {
   public:
    WidthScope(Emitter* e, int n) : e_(e), saved_(e->n_) { e->SetWidth(n); }
    ~WidthScope() { e_->SetWidth(saved_); }
    WidthScope(const WidthScope&) = delete;
    WidthScope& operator=(const WidthScope&) = delete;

   private:
    Emitter* e_;
    int saved_;
  };
  static int Lanes(Value* v) { return static_cast<int>(cast<FixedVectorType>(v->getType())->getNumElements()); }

  // ---- helpers ----
  Value* Splat(Value* scalar) { return b_.CreateVectorSplat(n_, scalar); }
  Constant* F(float v) { return ConstantFP::get(vf_, v); }
  // A constant as an opaque value in a register. LLVM folds a select's constant operand into a
  // masked load from the constant pool; on these VMs a masked-off load from a page whose
  // accessed bit the kernel has cleared costs a ~160 ns microcode assist every time, and such a
  // page is never touched otherwise (a 40x slowdown that came and went with the page's age).
  // A volatile copy through the stack, made once at entry, keeps the constant in a register or on
  // the stack, which every call touches.
  Value* Reg(Constant* c) {
    if (auto it = regs_.find(c); it != regs_.end()) return it->second;
    IRBuilder<> eb(entry_);
    Value* slot = eb.CreateAlloca(c->getType());
    eb.CreateStore(c, slot, /*isVolatile=*/true);
    Value* v = eb.CreateLoad(c->getType(), slot, /*isVolatile=*/true);
    regs_[c] = v;
    return v;
  }
  Value* CanonicalNaN() {
    return Reg(ConstantFP::get(vf_, APFloat(APFloat::IEEEsingle(), APInt(32, num::kCanonicalNaNBits))));
  }
  Value* IsNaN(Value* v) { return b_.CreateFCmpUNO(v, v); }
  Value* Canon(Value* v) { return b_.CreateSelect(IsNaN(v), CanonicalNaN(), v); }
  Value* Call(Intrinsic::ID id, std::vector<Value*> ops) {
    Function* fn = Intrinsic::getDeclaration(&m_, id, {ops[0]->getType()});
    return b_.CreateCall(fn, ops);
  }
  Value* Fma(Value* a, Value* b, Value* c) {
    return fma_unit_ ? Call(Intrinsic::fma, {a, b, c}) : EmitFmaWithoutFmaUnit(b_, a, b, c);
  }
  Value* Fabs(Value* a) { return Call(Intrinsic::fabs, {a}); }
  Value* SignBit(Value* v) { return b_.CreateICmpSLT(b_.CreateBitCast(v, vi32_), ConstantInt::get(vi32_, 0)); }
  // A variable living across loop iterations (promoted to SSA by the engine's pipeline).
  Value* Var(Type* t, Value* init) {
    IRBuilder<> eb(entry_, entry_->begin());
    Value* slot = eb.CreateAlloca(t);
    b_.CreateStore(init, slot);
    return slot;
  }
  Value* Get(Value* slot, Type* t) { return b_.CreateLoad(t, slot); }
  template <typename Body>
  void Loop(Value* count, Body body) {
    // Constant trip counts of 0 and 1 (short tensors, single tiles): no loop to emit and then
    // fold away, which keeps compile time down.
    if (auto* c = dyn_cast<ConstantInt>(count); c != nullptr && c->getZExtValue() <= 1) {
      if (c->getZExtValue() == 1) body(static_cast<Value*>(ConstantInt::get(count->getType(), 0)));
      return;
    }
    Loop(ConstantInt::get(count->getType(), 0), count, body);
  }
  // The loop over [begin, end).
  template <typename Body>
  void Loop(Value* begin, Value* end, Body body) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* hdr = BasicBlock::Create(ctx_, "loop", fn_);
    BasicBlock* bb = BasicBlock::Create(ctx_, "loop.body", fn_);
    BasicBlock* exit = BasicBlock::Create(ctx_, "loop.exit", fn_);
    b_.CreateBr(hdr);
    b_.SetInsertPoint(hdr);
    PHINode* i = b_.CreatePHI(end->getType(), 2);
    i->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpULT(i, end), bb, exit);
    b_.SetInsertPoint(bb);
    body(static_cast<Value*>(i));
    i->addIncoming(b_.CreateAdd(i, ConstantInt::get(end->getType(), 1)), b_.GetInsertBlock());
    b_.CreateBr(hdr);
    b_.SetInsertPoint(exit);
  }
  Value* ArgWord(int slot) {
    Value* index = b_.getInt64(slot);
    if (arg_shift_ != nullptr) index = b_.CreateAdd(index, arg_shift_);  // inside a repeat
    // The argument words never change during a call: marked invariant, their loads leave the
    // loops (otherwise every store in a row loop might alias them and they reload each chunk).
    LoadInst* word = b_.CreateLoad(i64_, b_.CreateGEP(i64_, block_args_ != nullptr ? block_args_ : args_, index));
    word->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(ctx_, {}));
    return word;
  }
  Value* ArgPtr(int slot) { return b_.CreateIntToPtr(ArgWord(slot), ptr_); }
  Value* ArgF32(int slot) {
    return b_.CreateBitCast(b_.CreateTrunc(ArgWord(slot), i32_), f32_);
  }
  uint32_t Pitch(Space s) const { return HostPitch(s, f_.gen); }
  Type* RawType(Dtype d) {
    switch (DtypeSize(d)) {
      case 1: return i8_;
      case 2: return i16_;
      default: return i32_;
    }
  }
  // Per-lane pointers `base + (cb + lane) · stride`: a scalar base for the block and constant
  // 32-bit lane offsets, so gathers and scatters use dword indices (16 lanes per instruction).
  Value* LaneStrided(Value* base, uint64_t stride) {
    std::vector<Constant*> offs;
    for (int l = 0; l < n_; ++l) offs.push_back(ConstantInt::get(i32_, static_cast<uint64_t>(l) * stride));
    Value* block = b_.CreateGEP(i8_, base, b_.CreateMul(cb_, b_.getInt64(stride)));
    return b_.CreateGEP(i8_, block, ConstantVector::get(offs));
  }
  // Pointers to element `elem_offset` (an i64 scalar, in elements) of tensor t, per lane.
  Value* ElementPtrs(const ir::TensorRef& t, Value* elem_offset) {
    Value* base = b_.CreateGEP(i8_, ArgPtr(t.arg), b_.CreateMul(elem_offset, b_.getInt64(DtypeSize(t.dtype))));
    return LaneStrided(base, Pitch(t.space));
  }
  Value* Gather(Type* elem, Value* ptrs, int align) {
    auto* vt = FixedVectorType::get(elem, n_);
    return b_.CreateMaskedGather(vt, ptrs, Align(align), mask_, Constant::getNullValue(vt));
  }
  // Raw element bits → fp32, numerics LoadAsF32 lane-wise (any vector length: rows are W wide
  // even inside L-lane statements). Narrow floats widen by integer operations (exact; a NaN keeps
  // its sign and mantissa), integers by the exact or round-to-nearest-even conversion.
  Value* Widen(Dtype d, Value* raw) {
    const int n = Lanes(raw);
    auto* vi32 = FixedVectorType::get(i32_, n);
    auto* vf = FixedVectorType::get(f32_, n);
    switch (d) {
      case Dtype::INT8: case Dtype::INT16: case Dtype::INT32: return b_.CreateSIToFP(raw, vf);
      case Dtype::UINT8: case Dtype::UINT16: case Dtype::UINT32: return b_.CreateUIToFP(raw, vf);
      case Dtype::BFLOAT16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(raw, vi32), ConstantInt::get(vi32, 16)), vf);
      case Dtype::FP16: return b_.CreateBitCast(WidenFormat(num::detail::kF16, b_.CreateZExt(raw, vi32)), vf);
      case Dtype::FP8_EXP3: return b_.CreateBitCast(WidenFormat(num::detail::kE3M4, b_.CreateZExt(raw, vi32)), vf);
      case Dtype::FP8_EXP4: return b_.CreateBitCast(WidenFormat(num::detail::kE4M3, b_.CreateZExt(raw, vi32)), vf);
      case Dtype::FP8_EXP5: return b_.CreateBitCast(WidenFormat(num::detail::kE5M2, b_.CreateZExt(raw, vi32)), vf);
      default: return b_.CreateBitCast(raw, vf);  // FP32, FP32R
    }
  }
  // numerics detail::WidenBits<F>, lane-wise on i32 vectors.
  Value* WidenFormat(const num::detail::Fmt& f, Value* v) {
    auto* vt = cast<FixedVectorType>(v->getType());
    auto k = [&](int64_t c) { return ConstantInt::get(vt, static_cast<uint64_t>(c)); };
    const uint32_t emask = (1u << f.ebits) - 1u, mmask = (1u << f.mbits) - 1u;
    Value* sign = b_.CreateShl(b_.CreateAnd(b_.CreateLShr(v, k(f.ebits + f.mbits)), k(1)), k(31));
    Value* e = b_.CreateAnd(b_.CreateLShr(v, k(f.mbits)), k(emask));
    Value* m = b_.CreateAnd(v, k(mmask));
    Value* top = b_.CreateShl(m, k(23 - f.mbits));  // the mantissa at the top of fp32's
    Value* special = b_.CreateICmpEQ(e, k(emask));
    if (f.fn) special = b_.CreateAnd(special, b_.CreateICmpEQ(m, k(mmask)));
    Value* inf_nan = b_.CreateOr(b_.CreateOr(sign, k(0x7F800000)), top);
    Value* normal = b_.CreateOr(b_.CreateOr(sign, b_.CreateShl(b_.CreateAdd(e, k(127 - f.bias)), k(23))), top);
    // Subnormal: normalise on the leading one p; value = 1.f × 2^(p + 1 − bias − M).
    Function* ctlz = Intrinsic::getDeclaration(&m_, Intrinsic::ctlz, {vt});
    Value* p = b_.CreateSub(k(31), b_.CreateCall(ctlz, {b_.CreateOr(m, k(1)), b_.getFalse()}));  // m | 1: p ≥ 0
    Value* exp32 = b_.CreateAdd(p, k(1 - f.bias - f.mbits + 127));
    Value* frac = b_.CreateShl(b_.CreateXor(m, b_.CreateShl(k(1), p)), b_.CreateSub(k(23), p));
    Value* sub = b_.CreateOr(b_.CreateOr(sign, b_.CreateShl(exp32, k(23))), frac);
    Value* zero_e = b_.CreateICmpEQ(e, k(0));
    Value* r = b_.CreateSelect(zero_e, b_.CreateSelect(b_.CreateICmpEQ(m, k(0)), sign, sub), normal);
    return b_.CreateSelect(special, inf_nan, r);
  }
  // numerics detail::NarrowBits<F> (round to nearest even, overflow and NaN per F), lane-wise.
  Value* NarrowFormat(const num::detail::Fmt& f, Value* b) {
    auto* vt = cast<FixedVectorType>(b->getType());
    auto k = [&](int64_t c) { return ConstantInt::get(vt, static_cast<uint64_t>(c)); };
    const int M = f.mbits;
    Value* sign = b_.CreateShl(b_.CreateLShr(b, k(31)), k(f.ebits + f.mbits));
    Value* abs = b_.CreateAnd(b, k(0x7FFFFFFF));
    Value* e32 = b_.CreateLShr(abs, k(23));
    Value* sig = b_.CreateAnd(abs, k(0x7FFFFF));
    Value* normal32 = b_.CreateICmpNE(e32, k(0));
    sig = b_.CreateSelect(normal32, b_.CreateOr(sig, k(0x800000)), sig);
    e32 = b_.CreateSelect(normal32, e32, k(1));  // fp32 subnormal: the scale of exponent 1
    Value* E = b_.CreateAdd(e32, k(f.bias - 127));
    Value* below = b_.CreateICmpSLT(E, k(1));
    Value* Eeff = b_.CreateSelect(below, k(1), E);
    Value* shift = b_.CreateAdd(k(23 - M), b_.CreateSub(Eeff, E));
    shift = b_.CreateSelect(b_.CreateICmpSGT(shift, k(31)), k(31), shift);
    Value* q = b_.CreateLShr(sig, shift);
    Value* rem = b_.CreateAnd(sig, b_.CreateSub(b_.CreateShl(k(1), shift), k(1)));
    Value* half = b_.CreateShl(k(1), b_.CreateSub(shift, k(1)));
    Value* up = b_.CreateOr(b_.CreateICmpUGT(rem, half),
                            b_.CreateAnd(b_.CreateICmpEQ(rem, half), b_.CreateICmpNE(b_.CreateAnd(q, k(1)), k(0))));
    q = b_.CreateAdd(q, b_.CreateZExt(up, vt));
    Value* enc = b_.CreateAdd(b_.CreateShl(b_.CreateSub(Eeff, k(1)), k(M)), q);
    Value* r = b_.CreateOr(sign, b_.CreateSelect(b_.CreateICmpUGT(enc, k(num::detail::MaxFiniteEnc(f))),
                                                 Reg(k(f.overflow_enc)), enc));
    r = b_.CreateSelect(b_.CreateICmpEQ(abs, k(0x7F800000)), b_.CreateOr(sign, k(f.inf_enc)), r);
    return b_.CreateSelect(b_.CreateICmpUGT(abs, k(0x7F800000)), Reg(k(f.canon_nan)), r);
  }
  // The store conversion (numerics StoreFromF32) to d's raw bits.
  Value* Narrow(Dtype d, Value* v) {
    const int n = Lanes(v);
    auto* vi32 = FixedVectorType::get(i32_, n);
    auto* raw = FixedVectorType::get(RawType(d), n);
    Value* bits = b_.CreateBitCast(v, vi32);
    Value* nan = b_.CreateFCmpUNO(v, v);
    auto sat = [&](Intrinsic::ID id) {  // round toward zero, saturate, NaN → 0
      Function* fn = Intrinsic::getDeclaration(&m_, id, {raw, v->getType()});
      return b_.CreateCall(fn, {v});
    };
    switch (d) {
      case Dtype::INT8: case Dtype::INT16: case Dtype::INT32: return sat(Intrinsic::fptosi_sat);
      case Dtype::UINT8: case Dtype::UINT16: case Dtype::UINT32: return sat(Intrinsic::fptoui_sat);
      case Dtype::BFLOAT16: {
        Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, ConstantInt::get(vi32, 16)), ConstantInt::get(vi32, 1));
        Value* r = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(bits, ConstantInt::get(vi32, 0x7FFF)), lsb),
                                 ConstantInt::get(vi32, 16));
        // Selected in 32 bits, then truncated: a paired store packs the dwords in-lane.
        return b_.CreateTrunc(b_.CreateSelect(nan, Reg(ConstantInt::get(vi32, num::kBf16CanonicalNaN)), r), raw);
      }
      case Dtype::FP16: return b_.CreateTrunc(NarrowFormat(num::detail::kF16, bits), raw);
      case Dtype::FP8_EXP3: return b_.CreateTrunc(NarrowFormat(num::detail::kE3M4, bits), raw);
      case Dtype::FP8_EXP4: return b_.CreateTrunc(NarrowFormat(num::detail::kE4M3, bits), raw);
      case Dtype::FP8_EXP5: return b_.CreateTrunc(NarrowFormat(num::detail::kE5M2, bits), raw);
      default: return b_.CreateSelect(nan, Reg(ConstantInt::get(vi32, num::kCanonicalNaNBits)), bits);  // FP32, FP32R
    }
  }
  // Element `elem_offset` of every active lane, raw (the dtype's integer type) or widened to fp32.
  Value* LoadElemRaw(const ir::TensorRef& t, Value* elem_offset) {
    return Gather(RawType(t.dtype), ElementPtrs(t, elem_offset), DtypeSize(t.dtype));
  }
  Value* LoadElem(const ir::TensorRef& t, Value* elem_offset) { return Widen(t.dtype, LoadElemRaw(t, elem_offset)); }
  // Raw elements (the dtype's integer type) to element `elem_offset` of the lanes in `mask`, or
  // fp32 values narrowed to every active lane.
  void StoreElemRaw(const ir::TensorRef& t, Value* elem_offset, Value* raw, Value* mask) {
    b_.CreateMaskedScatter(raw, ElementPtrs(t, elem_offset), Align(DtypeSize(t.dtype)), mask);
  }
  void StoreElem(const ir::TensorRef& t, Value* elem_offset, Value* v) {
    StoreElemRaw(t, elem_offset, Narrow(t.dtype, v), mask_);
  }
  // Element k's offset for a runtime k: linear patterns by arithmetic, others through a table.
  std::function<Value*(Value*)> OffsetFn(const ir::TensorRef& t) {
    const std::vector<int64_t> offs = ElementOffsets(t.pattern);
    bool linear = true;
    const int64_t stride = offs.size() > 1 ? offs[1] : 0;
    for (size_t k = 0; k < offs.size() && linear; ++k) linear = offs[k] == static_cast<int64_t>(k) * stride;
    if (linear)
      return [this, stride](Value* k) { return b_.CreateMul(k, b_.getInt64(stride)); };
    std::vector<int32_t> table(offs.begin(), offs.end());
    auto* arr = ConstantDataArray::get(ctx_, ArrayRef<int32_t>(table));
    auto* g = new GlobalVariable(m_, arr->getType(), true, GlobalValue::PrivateLinkage, arr, "offsets");
    auto* at = arr->getType();
    return [this, g, at](Value* k) {
      Value* p = b_.CreateGEP(at, g, {b_.getInt64(0), k});
      return b_.CreateSExt(b_.CreateLoad(i32_, p), i64_);
    };
  }
  Value* ConstOffset(const ir::TensorRef& t, int64_t k) {
    const std::vector<int64_t> offs = ElementOffsets(t.pattern);
    return b_.getInt64(offs[static_cast<size_t>(k)]);
  }
  // The RtTable entry at byte `offset` (offsetof(RtTable, member)).
  Value* RtFn(size_t offset) {
    return b_.CreateLoad(ptr_, b_.CreateGEP(i8_, rt_, b_.getInt64(static_cast<int64_t>(offset))));
  }
  // A float(float, float) routine of the RtTable (at byte `offset`) applied lane by lane.
  Value* LaneWiseCall(size_t offset, Value* a, Value* b) {
    auto* ft = FunctionType::get(f32_, {f32_, f32_}, false);
    Value* fn = RtFn(offset);
    Value* out = PoisonValue::get(a->getType());
    for (int l = 0; l < Lanes(a); ++l)
      out = b_.CreateInsertElement(
          out, b_.CreateCall(ft, fn, {b_.CreateExtractElement(a, l), b_.CreateExtractElement(b, l)}), l);
    return out;
  }
  // nrecip (numerics NRecip) inline, lane-wise: the seed from RECIP8 by integer operations, two
  // Newton steps with fma; outside the Newton range the IEEE quotient 1/d.
  Value* NRecip(Value* d) {
    Value* b = b_.CreateBitCast(d, vi32_);
    auto k = [&](uint32_t v) { return ConstantInt::get(vi32_, v); };
    Value* in_range = InNewtonRange(b_.CreateAnd(b, k(0x7FFFFFFFu)));
    Value* idx = b_.CreateAnd(b_.CreateLShr(b, k(16)), k(0x7F));
    Value* r = ByteTable(recip8_, std::vector<uint8_t>(num::RECIP8.begin(), num::RECIP8.end()), "recip8", idx);
    Value* biased = b_.CreateAnd(b_.CreateLShr(b, k(23)), k(0xFF));
    Value* seed_bits = b_.CreateOr(b_.CreateOr(b_.CreateAnd(b, k(0x80000000u)),
                                               b_.CreateShl(b_.CreateSub(k(253), biased), k(23))),
                                   b_.CreateShl(b_.CreateSub(r, k(128)), k(16)));
    Value* x = b_.CreateBitCast(seed_bits, vf_);
    for (int step = 0; step < 2; ++step) {
      Value* e = Fma(b_.CreateFNeg(d), x, F(1.0f));
      x = Fma(x, e, x);
    }
    return UnlessAllFast(in_range, x, [&] { return Canon(b_.CreateFDiv(F(1.0f), d)); });
  }
  // `fast` in the lanes where use_fast holds, slow() in the others. slow() (an IEEE division or
  // square root: a long-latency, low-throughput instruction that the Newton paths exist to avoid)
  // runs in a branch taken only when some lane needs it; for data inside the Newton range, never.
  Value* UnlessAllFast(Value* use_fast, Value* fast, const std::function<Value*()>& slow) {
    return FastUnless(b_.CreateNot(b_.CreateAndReduce(use_fast)), fast,
                      [&] { return b_.CreateSelect(use_fast, fast, slow()); });
  }
  // Whether any lane of any of these i1 vectors is set, tested in a general register: the masks
  // moved out (kmov) and or-ed there. LLVM's or-reduction of a 16-lane mask is a kortestw, which
  // on this host is slower: BackProp's bf16 loop (two masks) in isolation ran at 6.2 cycles per
  // 32 elements with kortestw and a second branch, 5.8 with kmov, or and test. (A single
  // 16-lane mask still becomes a kortestw: LLVM folds the zext and the compare back.)
  Value* AnyLane(std::initializer_list<Value*> masks) {
    Value* any = nullptr;
    for (Value* m : masks) {
      Value* bits = b_.CreateZExt(b_.CreateBitCast(m, b_.getIntNTy(static_cast<unsigned>(Lanes(m)))), i64_);
      any = any ? b_.CreateOr(any, bits) : bits;
    }
    return b_.CreateICmpNE(any, ConstantInt::get(i64_, 0));
  }
  // `fast`, or slow() where `needs_slow` (an i1) holds: slow() runs in a branch of its own.
  Value* FastUnless(Value* needs_slow, Value* fast, const std::function<Value*()>& slow) {
    BasicBlock* from = b_.GetInsertBlock();
    BasicBlock* slow_bb = BasicBlock::Create(ctx_, "slow", fn_);
    BasicBlock* done = BasicBlock::Create(ctx_, "slow.done", fn_);
    b_.CreateCondBr(needs_slow, slow_bb, done, MDBuilder(ctx_).createBranchWeights(1, 1 << 20));  // laid out aside
    b_.SetInsertPoint(slow_bb);
    Value* slow_value = slow();
    BasicBlock* slow_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    PHINode* merged = b_.CreatePHI(fast->getType(), 2);
    merged->addIncoming(fast, from);
    merged->addIncoming(slow_value, slow_end);
    return merged;
  }
  // table[idx] for a 128-entry byte table and idx lanes (i32 in [0, 128)): one vpermi2b per 16
  // lanes with AVX512-VBMI (a gather costs about a cycle per lane), else a gather.
  Value* ByteTable(GlobalVariable*& slot, const std::vector<uint8_t>& table, const char* name, Value* idx) {
    if (!byte_permute_ || n_ % 16 != 0 || table.size() != 128) {
      std::vector<uint32_t> wide(table.begin(), table.end());
      return GatherAll(i32_, b_.CreateGEP(i32_, Table(slot, wide, name), idx));
    }
    auto* v64 = FixedVectorType::get(i8_, 64);
    Constant* lo = ConstantDataVector::get(ctx_, ArrayRef<uint8_t>(table.data(), 64));
    Constant* hi = ConstantDataVector::get(ctx_, ArrayRef<uint8_t>(table.data() + 64, 64));
    Function* perm = Intrinsic::getDeclaration(&m_, Intrinsic::x86_avx512_vpermi2var_qi_512);
    auto* v16 = FixedVectorType::get(i32_, 16);
    std::vector<Value*> pieces;
    for (int p = 0; p < n_; p += 16) {
      std::vector<int> lanes(16);
      for (int i = 0; i < 16; ++i) lanes[i] = p + i;
      Value* piece = n_ == 16 ? idx : b_.CreateShuffleVector(idx, idx, lanes);
      // Each dword's low byte indexes the table; the other bytes' lookups are masked off.
      Value* bytes = b_.CreateCall(perm, {lo, b_.CreateBitCast(piece, v64), hi});
      pieces.push_back(b_.CreateAnd(b_.CreateBitCast(bytes, v16), ConstantInt::get(v16, 0xFF)));
    }
    return Concat(std::move(pieces));
  }
  // A private constant table of 32-bit entries, made once per module.
  GlobalVariable* Table(GlobalVariable*& slot, const std::vector<uint32_t>& entries, const char* name) {
    if (slot == nullptr) {
      auto* arr = ConstantDataArray::get(ctx_, ArrayRef<uint32_t>(entries));
      slot = new GlobalVariable(m_, arr->getType(), true, GlobalValue::PrivateLinkage, arr, name);
    }
    return slot;
  }
  Value* GatherAll(Type* elem, Value* ptrs) {
    auto* vt = FixedVectorType::get(elem, n_);
    auto* all = ConstantVector::getSplat(ElementCount::getFixed(n_), b_.getTrue());
    return b_.CreateMaskedGather(vt, ptrs, Align(4), all, Constant::getNullValue(vt));
  }
  Value* InNewtonRange(Value* abs_bits) {
    return b_.CreateAnd(b_.CreateICmpUGE(abs_bits, ConstantInt::get(vi32_, 0x01000000u)),
                        b_.CreateICmpULE(abs_bits, ConstantInt::get(vi32_, 0x7E000000u)));
  }
  // ndiv (numerics NDiv) lane-wise: integral divisors 1..256 through the Parameter RAM; the
  // Newton quotient with one fma correction; IEEE division outside the Newton range.
  Value* NDiv(Value* a, Value* b) {
    auto k = [&](uint32_t v) { return ConstantInt::get(vi32_, v); };
    Value* whole = b_.CreateFPToSI(b_.CreateSelect(b_.CreateAnd(b_.CreateFCmpOGE(b, F(1.0f)),
                                                                b_.CreateFCmpOLE(b, F(256.0f))),
                                                   b, Reg(F(1.0f))),
                                   vi32_);  // in [1, 256]: never out of range for fptosi
    Value* pram_path = b_.CreateAnd(b_.CreateAnd(b_.CreateFCmpOGE(b, F(1.0f)), b_.CreateFCmpOLE(b, F(256.0f))),
                                    b_.CreateFCmpOEQ(b_.CreateSIToFP(whole, vf_), b));
    Value* entry = b_.CreateGEP(f32_, b_.CreateGEP(i8_, state_, b_.getInt64(kPramOffset - 4)),
                                b_.CreateSExt(whole, vi64_));
    Value* by_pram = Canon(b_.CreateFMul(a, GatherAll(f32_, entry)));
    Value* aa = b_.CreateAnd(b_.CreateBitCast(a, vi32_), k(0x7FFFFFFFu));
    Value* ieee_path = b_.CreateOr(b_.CreateOr(b_.CreateICmpEQ(aa, k(0)), b_.CreateICmpUGE(aa, k(0x7F800000u))),
                                   b_.CreateNot(InNewtonRange(b_.CreateAnd(b_.CreateBitCast(b, vi32_), k(0x7FFFFFFFu)))));
    Value* x = NRecip(b);
    Value* q0 = b_.CreateFMul(a, x);
    Value* overflow = b_.CreateFCmpUGE(Fabs(q0), F(std::numeric_limits<float>::infinity()));  // !isfinite
    Value* r = Fma(b_.CreateFNeg(b), q0, a);
    Value* newton = b_.CreateSelect(overflow, q0, Canon(Fma(r, x, q0)));
    return UnlessAllFast(b_.CreateOr(pram_path, b_.CreateNot(ieee_path)), b_.CreateSelect(pram_path, by_pram, newton),
                         [&] { return Canon(b_.CreateFDiv(a, b)); });
  }
  // nrsqrt (numerics NRsqrt) lane-wise: the seed from RSQ_EVEN/RSQ_ODD by integer operations, two
  // Newton steps; the special values and the outside of the Newton range as the interpreter.
  Value* NRsqrt(Value* a) {
    auto k = [&](uint32_t v) { return ConstantInt::get(vi32_, v); };
    std::vector<uint8_t> rsq(num::RSQ_EVEN.begin(), num::RSQ_EVEN.end());  // [even | odd]
    rsq.insert(rsq.end(), num::RSQ_ODD.begin(), num::RSQ_ODD.end());
    Value* bits = b_.CreateBitCast(a, vi32_);
    Value* e = b_.CreateSub(b_.CreateLShr(bits, k(23)), k(127));
    Value* odd = b_.CreateAnd(e, k(1));
    Value* j = b_.CreateAnd(b_.CreateLShr(bits, k(17)), k(0x3F));
    Value* t = ByteTable(rsq_, rsq, "rsq", b_.CreateOr(b_.CreateShl(odd, k(6)), j));
    Value* half_e = b_.CreateAShr(e, k(1));  // (e − 1) / 2 for odd e, e / 2 for even e
    Value* y = b_.CreateBitCast(b_.CreateOr(b_.CreateShl(b_.CreateSub(k(126), half_e), k(23)),
                                            b_.CreateShl(b_.CreateSub(t, k(128)), k(16))),
                                vf_);
    for (int it = 0; it < 2; ++it) {
      Value* h = b_.CreateFMul(F(0.5f), a);
      Value* g = Fma(b_.CreateFNeg(h), b_.CreateFMul(y, y), F(0.5f));
      y = Fma(y, g, y);
    }
    Value* r = UnlessAllFast(InNewtonRange(bits), y, [&] {
      return b_.CreateFDiv(F(1.0f), Call(Intrinsic::sqrt, {a}));  // two roundings
    });
    r = b_.CreateSelect(b_.CreateICmpEQ(bits, k(0x7F800000u)), F(0.0f), r);
    Value* signed_inf = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, k(0x80000000u)), k(0x7F800000u)), vf_);
    r = b_.CreateSelect(b_.CreateFCmpOEQ(a, F(0.0f)), signed_inf, r);
    return b_.CreateSelect(b_.CreateOr(IsNaN(a), b_.CreateFCmpOLT(a, F(0.0f))), CanonicalNaN(), r);
  }

  Value* MaxNum(Value* a, Value* b) {
    Value* eq_pick = b_.CreateSelect(SignBit(a), b, a);  // equal: prefer +0
    Value* r = b_.CreateSelect(b_.CreateFCmpOEQ(a, b), eq_pick, b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b));
    r = b_.CreateSelect(IsNaN(b), a, r);
    return b_.CreateSelect(IsNaN(a), b, r);  // both NaN: b (a NaN); Canon() follows
  }
  Value* MinNum(Value* a, Value* b) {
    Value* eq_pick = b_.CreateSelect(SignBit(a), a, b);  // equal: prefer −0
    Value* r = b_.CreateSelect(b_.CreateFCmpOEQ(a, b), eq_pick, b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b));
    r = b_.CreateSelect(IsNaN(b), a, r);
    return b_.CreateSelect(IsNaN(a), b, r);
  }
  Value* Bool(Value* c) { return b_.CreateSelect(c, Reg(F(1.0f)), F(0.0f)); }
  // kernels/alu.h Arith, lane-wise.
  // An ALU op on fp32 vectors. Its NaN results are canonical only with `canonical`: the stores
  // canonicalise NaNs anyway (Narrow), and every op but SYMMETRIC_CLAMP (the sign of its first
  // operand) gives the same bits for any NaN operand, so a stage whose result goes to a store or
  // to another such op skips the compare and blend per vector (on this host vcmpps shares the
  // FMA pipes, and its chain to the store limited TensorScalar to about 14 cycles per 32 bf16
  // elements against 5.5 without).
  Value* Arith(uint8_t op, Value* a, Value* b, bool canonical = true) {
    auto Canon = [&](Value* v) { return canonical ? this->Canon(v) : v; };
    switch (static_cast<AluOp>(op)) {
      case AluOp::BYPASS: return a;
      case AluOp::ADD: return Canon(b_.CreateFAdd(a, b));
      case AluOp::SUBTRACT: return Canon(b_.CreateFSub(a, b));
      case AluOp::MULT: return Canon(b_.CreateFMul(a, b));
      case AluOp::MAX: return Canon(MaxNum(a, b));
      case AluOp::MIN: return Canon(MinNum(a, b));
      case AluOp::LOGICAL_AND: return Bool(b_.CreateAnd(b_.CreateFCmpUNE(a, F(0)), b_.CreateFCmpUNE(b, F(0))));
      case AluOp::LOGICAL_OR: return Bool(b_.CreateOr(b_.CreateFCmpUNE(a, F(0)), b_.CreateFCmpUNE(b, F(0))));
      case AluOp::LOGICAL_XOR: return Bool(b_.CreateXor(b_.CreateFCmpUNE(a, F(0)), b_.CreateFCmpUNE(b, F(0))));
      case AluOp::IS_EQ: return Bool(b_.CreateFCmpOEQ(a, b));
      case AluOp::IS_GT: return Bool(b_.CreateFCmpOGT(a, b));
      case AluOp::IS_GE: return Bool(b_.CreateFCmpOGE(a, b));
      case AluOp::IS_LE: return Bool(b_.CreateFCmpOLE(a, b));
      case AluOp::IS_LT: return Bool(b_.CreateFCmpOLT(a, b));
      case AluOp::IS_NE: return Bool(b_.CreateFCmpUNE(a, b));
      case AluOp::ABSOLUTE_DIFF: return Canon(Fabs(b_.CreateFSub(a, b)));
      case AluOp::ABSOLUTE_VALUE: return Canon(Fabs(a));
      case AluOp::ABS_MAX: return Canon(MaxNum(Fabs(a), Fabs(b)));
      case AluOp::ABS_MIN: return Canon(MinNum(Fabs(a), Fabs(b)));
      case AluOp::RE_LU: return Canon(MaxNum(a, F(0.0f)));
      case AluOp::SQUARE: return Canon(b_.CreateFMul(a, a));
      case AluOp::SYMMETRIC_CLAMP:
        // Copies a's sign: a stage before this one keeps its NaNs canonical (SeesNaNBits).
        return Canon(Call(Intrinsic::copysign, {MaxNum(Fabs(a), Fabs(b)), a}));
      case AluOp::POW: return Canon(LaneWiseCall(offsetof(RtTable, pow), a, b));
      case AluOp::MOD: return Canon(LaneWiseCall(offsetof(RtTable, fmod), a, b));
      default: return CanonicalNaN();  // not lowered (ir::JitSupportsAluOp)
    }
  }
  // One ALU stage; `canonical` as for Arith.
  Value* Stage(uint8_t op, Value* entering, Value* scalar, bool reversed, bool canonical = true) {
    if (alu::IsUnary(op)) return Arith(op, entering, F(0.0f), canonical);
    return reversed ? Arith(op, scalar, entering, canonical) : Arith(op, entering, scalar, canonical);
  }
  // Whether a stage `op` sees the NaN bits (not only NaN-ness) of its entering value: the sign
  // of SYMMETRIC_CLAMP's first operand.
  static bool SeesNaNBits(uint8_t op, bool reversed) {
    return static_cast<AluOp>(op) == AluOp::SYMMETRIC_CLAMP && !reversed;
  }
  Value* Val(ir::ValueId v) { return values_[v]; }

  // ---- regions ----
  // The statements of region r whose code is emitted: live ones, a repeat's body once.
  int EmittedStatements(const ir::Region& r) const {
    int n = 0;
    size_t next_repeat = 0;
    for (int i = r.begin; i < r.end;) {
      if (next_repeat < r.repeats.size() && r.repeats[next_repeat].begin == i) {
        const ir::Repeat& rp = r.repeats[next_repeat++];
        for (int k = rp.begin; k < rp.begin + rp.period; ++k) n += f_.stmts[k].dead ? 0 : 1;
        i = rp.end();
        continue;
      }
      n += f_.stmts[i++].dead ? 0 : 1;
    }
    return n;
  }
  absl::Status ChannelMajorRegion(const ir::Region& r) {
    int max_n = 0;
    bool welford = false, narrow_welford = true;
    for (int i = r.begin; i < r.end; ++i) {
      if (f_.stmts[i].dead) continue;
      max_n = std::max(max_n, f_.stmts[i].channels);
      if (f_.stmts[i].op != Op::Stats) continue;
      welford = true;
      narrow_welford &= DtypeSize(f_.stmts[i].tensors[0].dtype) == 2;
    }
    if (max_n == 0) return absl::OkStatus();
    // Channels per block: WelfordVectorsPerBlock hardware vectors where the region has Welford
    // statistics (their step is a 6-7 cycle chain, and StagedChunks steps every vector of a
    // block together). One vector otherwise: the block streams half as many rows at once, and a
    // BN backward chain's second sweep finds a 16-channel block's rows in the L2 (measured
    // against two: the chain 4-10 % faster at 128 × 8192 and 16384, fp32 and bf16; the sums
    // alone 10 % faster).
    const int welford_vectors = WelfordVectorsPerBlock(narrow_welford);
    const int L = max_n > W_ && welford ? welford_vectors * W_ : W_;
    WidthScope lanes(this, L);
    const int blocks = (max_n + L - 1) / L;
    auto block_body = [&](Value* block) {
      Value* cb = b_.CreateMul(block, b_.getInt64(L));
      std::vector<Constant*> iota;
      for (int l = 0; l < L; ++l) iota.push_back(ConstantInt::get(i64_, l));
      lanes_ = b_.CreateAdd(Splat(cb), ConstantVector::get(iota));
      cb_ = cb;
      // In a region of many statements, the argument words are loaded through a copy of the
      // pointer made in each block (an empty asm, opaque to LLVM), so they leave the row loops
      // but not the block loop: hoisted to the region's entry, every statement's words were live
      // across the whole region, and the register allocator's spill placement grew with
      // statements × blocks. Element-wise instructions in one region, compile time: 256 of them
      // 0.43 → 0.29 s, 512 1.27 → 0.65 s, 1024 4.3 → 1.4 s (now in proportion to the count).
      // Smaller regions (the BN chains, their tiles rerolled) keep the hoisted words and the code
      // they were measured with: a first form that loaded per block in every region changed the
      // BN backward chain's code, and its speed could not be told apart from the noise here.
      if (EmittedStatements(r) > kBlockArgsMinStatements) {
        auto* asm_type = FunctionType::get(ptr_, {ptr_}, false);
        block_args_ = b_.CreateCall(asm_type, InlineAsm::get(asm_type, "", "=r,0", /*hasSideEffects=*/true), {args_});
      }
      // The lanes that run statement s: its channels' mask, and whether whole blocks do. Blocks
      // start at multiples of L, so with a multiple of L channels every lane of a block that runs
      // the statement is active: one that covers all blocks, or one that skips the blocks past
      // its channels (statement, below).
      auto enter = [&](const Stmt& s) {
        mask_ = b_.CreateICmpULT(lanes_, ConstantInt::get(vi64_, s.channels));
        channels_ = s.channels;
        full_blocks_ = s.channels % L == 0 && (s.channels >= max_n || !ProducesValue(s.op));
      };
      // Statement i, or the element-wise chain it starts; returns the next index to emit.
      auto statement = [&](int i) {
        const Stmt& s = f_.stmts[i];
        if (s.dead) return i + 1;
        std::vector<int> chain = {i};
        int last = i;
        for (int j = i + 1; j < r.end && !ProducesValue(s.op); ++j) {
          const Stmt& t = f_.stmts[j];
          if (t.dead || t.op == Op::Const || t.op == Op::LaneGet) continue;
          if (!t.fused_with_previous) break;
          chain.push_back(j);
          last = j;
        }
        if (chain.size() > 1) {  // the chain's constants and lane reads first, then its loop
          for (int j = i + 1; j < last; ++j)
            if (!f_.stmts[j].dead && ProducesValue(f_.stmts[j].op)) {
              enter(f_.stmts[j]);
              full_blocks_ = false;
              values_[j] = Statement(f_.stmts[j]);
            }
        }
        enter(s);
        auto run = [&] {
          if (chain.size() > 1) return FusedRows(chain);
          Value* v = Statement(s);
          if (ProducesValue(s.op)) values_[i] = v;  // values are needed by later statements
        };
        if (ProducesValue(s.op) || s.channels >= max_n) run();
        else If(b_.CreateICmpULT(cb, b_.getInt64(s.channels)), run);  // no active channel: skip
        return last + 1;
      };
      size_t next_repeat = 0;
      for (int i = r.begin; i < r.end;) {
        if (next_repeat < r.repeats.size() && r.repeats[next_repeat].begin == i) {
          // One loop over the copies; copy `copy` reads its arguments arg_stride · copy further on.
          const ir::Repeat& rp = r.repeats[next_repeat++];
          // A repeat of gradient sums over 2-byte rows: two copies at a time, stepped together.
          if (const int sums = PairedGradSums(rp, L, max_n); sums >= 0) {
            const Stmt& t = f_.stmts[sums];
            repeat_copies_ = rp.count;
            Loop(b_.getInt64(rp.count / 2), [&](Value* pair) {
              std::vector<GradCopy> pair_copies;
              for (int j = 0; j < 2; ++j) {  // each copy's values (μ, vf) first, at its own slots
                Value* copy = b_.CreateAdd(b_.CreateMul(pair, b_.getInt64(2)), b_.getInt64(j));
                arg_shift_ = b_.CreateMul(copy, b_.getInt64(rp.arg_stride));
                for (int k = rp.begin; k < sums;) k = statement(k);
                pair_copies.push_back({arg_shift_, Val(t.operands[0]), Val(t.operands[1])});
              }
              enter(t);  // every block runs it (PairedGradSums)
              GradSums(t, pair_copies);
              arg_shift_ = nullptr;
            });
            if (rp.count % 2 != 0) {  // the last copy alone
              arg_shift_ = b_.getInt64((rp.count - 1) * rp.arg_stride);
              for (int k = rp.begin; k < rp.begin + rp.period;) k = statement(k);
              arg_shift_ = nullptr;
            }
            repeat_copies_ = 1;
            i = rp.end();
            continue;
          }
          auto copies = [&] {
            repeat_copies_ = rp.count;
            Loop(b_.getInt64(rp.count), [&](Value* copy) {
              arg_shift_ = b_.CreateMul(copy, b_.getInt64(rp.arg_stride));
              for (int k = rp.begin; k < rp.begin + rp.period;) k = statement(k);
              arg_shift_ = nullptr;
            });
            repeat_copies_ = 1;
          };
          bool rows_only = true;
          for (int k = rp.begin; k < rp.begin + rp.period; ++k)
            rows_only = rows_only && (f_.stmts[k].dead || IsRowStatement(f_.stmts[k]));
          if (rows_only) {
            // Lane-major: one lane runs every copy before the next lane does (the region's
            // channels are independent, and each lane keeps its order). Tiles that continue
            // one another along a row then stream through memory as one long row.
            Loop(b_.getInt64(L), [&](Value* lane) {
              row_lane_ = lane;
              copies();
              row_lane_ = nullptr;
            });
          } else {
            copies();
          }
          i = rp.end();
          continue;
        }
        i = statement(i);
      }
    };
    if (blocks < 2) {
      Loop(b_.getInt64(blocks), block_body);
    } else {
      int64_t bytes = 0;  // what the region moves, all its channels: run_blocks' size hint
      for (int i = r.begin; i < r.end; ++i) {
        if (f_.stmts[i].dead) continue;
        for (const ir::TensorRef& t : f_.stmts[i].tensors)
          bytes += t.pattern.Count() * DtypeSize(t.dtype) * f_.stmts[i].channels;
      }
      OutlinedBlocks(blocks, bytes, block_body);
    }
    for (int i = r.begin; i < r.end; ++i) values_[i] = nullptr;  // region-local values
    block_args_ = nullptr;
    return absl::OkStatus();
  }

  // A channel-major region of several blocks: its block loop becomes a function of its own over
  // a range of blocks, which the stream calls through the RtTable's run_blocks for all of them
  // (the runtime may split the range across threads). Blocks are independent: within a region
  // every byte that is written is touched by one channel only (ir::ChannelIndependence), and a
  // block's lane state and staging buffers (allocas of the new function) are its own.
  template <typename Body>
  void OutlinedBlocks(int blocks, int64_t bytes, Body block_body) {
    auto* void_ty = Type::getVoidTy(ctx_);
    auto* type = FunctionType::get(void_ty, {ptr_, ptr_, ptr_, i64_, i64_}, false);
    Function* region = Function::Create(type, Function::InternalLinkage,
                                        Cat(symbol_, ".blocks", outlined_regions_++), m_);
    Function* const caller = fn_;
    BasicBlock *const caller_entry = entry_, *const caller_block = b_.GetInsertBlock();
    Value *const caller_args = args_, *const caller_state = state_, *const caller_rt = rt_;
    std::unordered_map<Constant*, Value*> caller_regs;
    caller_regs.swap(regs_);  // Reg() values live in their function's entry block
    StartFunction(region);
    Loop(region->getArg(3), region->getArg(4), block_body);
    FinishFunction();
    fn_ = caller;
    entry_ = caller_entry;
    args_ = caller_args;
    state_ = caller_state;
    rt_ = caller_rt;
    regs_.swap(caller_regs);
    b_.SetInsertPoint(caller_block);
    auto* run_type = FunctionType::get(void_ty, {ptr_, ptr_, ptr_, ptr_, i64_, i64_}, false);
    b_.CreateCall(run_type, RtFn(offsetof(RtTable, run_blocks)),
                  {rt_, region, args_, state_, b_.getInt64(blocks), b_.getInt64(bytes)});
  }

  // Emits global statement i, or the run of PramLoads from i whose entries and argument slots
  // both continue one another (a reciprocal table: 32 instructions), as one loop; returns the
  // statement after them (≤ end). Why a loop: straight-line stores to the state, 8 per
  // instruction, made the machine scheduler's dependence graph quadratic in the run (256
  // LoadParameterRam: about a second of compile time, now 14 ms; 32: 49 → 11 ms).
  int GlobalStmts(int i, int end) {
    const Stmt& s = f_.stmts[i];
    if (s.dead) return i + 1;
    if (s.op == Op::Interp) {
      auto* ft = FunctionType::get(Type::getVoidTy(ctx_), {ptr_, i32_}, false);
      b_.CreateCall(ft, RtFn(offsetof(RtTable, interp)), {ctxp_, b_.getInt32(s.source)});
      return i + 1;
    }
    if (s.op != Op::PramLoad) return i + 1;
    int next = i + 1;
    while (next < end) {
      const Stmt& t = f_.stmts[next];
      const int64_t k = 8 * int64_t{next - i};
      if (t.dead || t.op != Op::PramLoad || t.arg != s.arg + k || t.element != s.element + k) break;
      ++next;
    }
    Loop(b_.getInt64(8 * int64_t{next - i}), [&](Value* k) {
      Value* word = b_.CreateLoad(i64_, b_.CreateGEP(i64_, args_, b_.CreateAdd(b_.getInt64(s.arg), k)));
      Value* p = b_.CreateGEP(f32_, b_.CreateGEP(i8_, state_, b_.getInt64(kPramOffset + 4 * s.element)), k);
      b_.CreateStore(b_.CreateTrunc(word, i32_), p);
    });
    return next;
  }

  // Pointers to the LaneState member at byte `offset` of each lane of the block.
  Value* LaneMemberPtrs(uint64_t offset) {
    return LaneStrided(b_.CreateGEP(i8_, state_, b_.getInt64(kLanesOffset + offset)), kLaneSize);
  }
  Value* LanePtrs(ir::LaneField f) { return LaneMemberPtrs(LaneFieldOffset(f)); }

  Value* Statement(const Stmt& s) {
    switch (s.op) {
      case Op::Const: return Splat(ArgF32(s.arg));
      case Op::PtrRead:
        if (s.flag) {  // bitvec scalar: the element's bits extended to 32, carried as f32 bits
          const ir::TensorRef& t = s.tensors[0];
          return b_.CreateBitCast(Extend32(t.dtype, LoadElemRaw(t, b_.getInt64(0))), vf_);
        }
        return LoadElem(s.tensors[0], b_.getInt64(0));
      case Op::ElemRead: return LoadElem(s.tensors[0], ConstOffset(s.tensors[0], s.element));
      case Op::LaneGet: return Gather(f32_, LanePtrs(s.field), 4);
      case Op::LaneSet:
        b_.CreateMaskedScatter(Val(s.operands[0]), LanePtrs(s.field), Align(4), mask_);
        return nullptr;
      case Op::Stats: Stats(s); return nullptr;
      case Op::Aggregate: Aggregate(s); return nullptr;
      case Op::GradSums: GradSums(s, {{arg_shift_, Val(s.operands[0]), Val(s.operands[1])}}); return nullptr;
      case Op::Max8: Max8(s); return nullptr;
      case Op::Find8: Find8(s); return nullptr;
      case Op::ImmLoad: ImmLoad(s); return nullptr;
      case Op::PtrMulti: PtrMulti(s); return nullptr;
      case Op::ReadIndices: {
        std::vector<Value*> indices;
        for (ir::ValueId v : s.operands) indices.push_back(b_.CreateBitCast(Val(v), vi32_));
        StoreIndices(s.tensors[0], indices);
        return nullptr;
      }
      case Op::BackProp: BackProp(s); return nullptr;
      case Op::TensorScalar:
      case Op::TensorTensor:
      case Op::Reciprocal: Elementwise(s); return nullptr;
      case Op::Copy: Copy(s); return nullptr;
      case Op::Cast:
      case Op::Memset:
      case Op::BitsScalar:
      case Op::BitsTensor:
      case Op::IntTensor:
      case Op::Predicated: RawElementwise(s); return nullptr;
      default: return nullptr;
    }
  }
  // ---- fast paths for contiguous rows (element k at offset k) ----
  static bool ContiguousRow(const ir::TensorRef& t) {
    const std::vector<int64_t> offs = ElementOffsets(t.pattern);
    for (size_t k = 0; k < offs.size(); ++k)
      if (offs[k] != static_cast<int64_t>(k)) return false;
    return true;
  }
  template <typename Body>
  void If(Value* cond, Body body) {
    BasicBlock* then = BasicBlock::Create(ctx_, "if.then", fn_);
    BasicBlock* done = BasicBlock::Create(ctx_, "if.done", fn_);
    b_.CreateCondBr(cond, then, done);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }
  // Host pointer of element `elem` (i64) in lane `lane` (i64 scalar) of the current block.
  // A constant lane's offset comes last: the rows of a block then share one address and differ
  // by constant displacements, which x86 addressing folds into each load. A variable lane's
  // comes first, with the block's: the row's start then leaves loops over its elements.
  Value* RowPtr(const ir::TensorRef& t, Value* lane, Value* elem) {
    Value* pitch = b_.getInt64(Pitch(t.space));
    Value* elem_off = b_.CreateMul(elem, b_.getInt64(DtypeSize(t.dtype)));
    if (isa<ConstantInt>(lane))
      return b_.CreateGEP(i8_, b_.CreateGEP(i8_, ArgPtr(t.arg), b_.CreateAdd(b_.CreateMul(cb_, pitch), elem_off)),
                          b_.CreateMul(lane, pitch));
    return b_.CreateGEP(i8_, ArgPtr(t.arg), b_.CreateAdd(b_.CreateMul(b_.CreateAdd(cb_, lane), pitch), elem_off));
  }
  // A read prefetch into every cache level. A hint: it never faults, so an address past the
  // row's end (the last chunks prefetch ahead of it) reads nothing the run can see. Into the L2
  // only (prefetcht1, prefetcht2) the statistics were no faster on the Xeon host and slower at
  // 128 × 16384; prefetchnta made the fp32 ones three times slower (thirty-eighth session).
  void Prefetch(Value* ptr) {
    Function* prefetch = Intrinsic::getDeclaration(&m_, Intrinsic::prefetch, {ptr->getType()});
    b_.CreateCall(prefetch, {ptr, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});  // read, high locality, data
  }
  // W consecutive elements of one lane's row (masked: a tail), raw or widened to fp32.
  Value* LoadRowRaw(const ir::TensorRef& t, Value* lane, Value* elem, Value* tail_mask) {
    auto* vt = FixedVectorType::get(RawType(t.dtype), W_);  // rows are W wide whatever n_ is
    Value* p = RowPtr(t, lane, elem);
    return tail_mask ? static_cast<Value*>(b_.CreateMaskedLoad(vt, p, Align(DtypeSize(t.dtype)), tail_mask,
                                                               Constant::getNullValue(vt)))
                     : static_cast<Value*>(b_.CreateAlignedLoad(vt, p, Align(DtypeSize(t.dtype))));
  }
  Value* LoadRow(const ir::TensorRef& t, Value* lane, Value* elem, Value* tail_mask) {
    return Widen(t.dtype, LoadRowRaw(t, lane, elem, tail_mask));
  }
  void StoreRowRaw(const ir::TensorRef& t, Value* lane, Value* elem, Value* raw, Value* tail_mask) {
    Value* p = RowPtr(t, lane, elem);
    if (tail_mask) b_.CreateMaskedStore(raw, p, Align(DtypeSize(t.dtype)), tail_mask);
    else b_.CreateAlignedStore(raw, p, Align(DtypeSize(t.dtype)));
  }
  void StoreRow(const ir::TensorRef& t, Value* lane, Value* elem, Value* v, Value* tail_mask) {
    StoreRowRaw(t, lane, elem, Narrow(t.dtype, v), tail_mask);
  }
  Value* TailMask(int64_t r) {
    std::vector<Constant*> bits;
    for (int l = 0; l < W_; ++l) bits.push_back(b_.getInt1(l < r));
    return ConstantVector::get(bits);
  }
  // In-register W×W transpose from single-instruction shuffles (design.md, "vectorise the
  // recurrences across channels"): unpack ps and unpack pd make 4×4 transposes inside each
  // 128-bit block, then even/odd block deinterleaves (vshuff32x4) gather whole columns. Returns
  // cols[j][l] = rows[l][j]. Which register ends up holding which column is found by running the
  // same shuffles on element numbers once (TransposePlan), not spelled out per width.
  // Two more layouts take W/2 rows and put pairs of elements side by side (StagedPairChunks):
  // - kPairs, rows of 4-byte elements: without the unpack ps, register j holds pair j (elements
  //   2j, 2j + 1) of every row, row r's in lanes 2r and 2r + 1;
  // - kPackedPairs, rows of packed 2-byte pairs (one pair per 32-bit lane): without the unpack pd,
  //   register j holds pairs 2j and 2j + 1, per 128-bit block b rows 2b and 2b + 1's pair 2j in
  //   its low half and their pair 2j + 1 in its high half, ready for a word unpack (WidenPair).
  enum class TransposeLayout { kColumns, kPairs, kPackedPairs };
  struct TransposePlan {
    struct Pair {
      int a, b;                      // registers combined; results replace a and b
      std::vector<int> lo, hi;       // shuffle masks over concat(a, b)
    };
    std::vector<Pair> pairs;
    std::vector<int> column_reg;     // column j is in register column_reg[j] (kPairs: pair j;
                                     // kPackedPairs: pairs 2j and 2j + 1)
  };
  static TransposePlan MakeTransposePlan(int w, TransposeLayout layout = TransposeLayout::kColumns) {
    TransposePlan p;
    const bool columns = layout == TransposeLayout::kColumns;
    const int regs_n = columns ? w : w / 2;
    auto pair = [&](int a, int b, auto lo_of, auto hi_of) {
      TransposePlan::Pair q{a, b, std::vector<int>(w), std::vector<int>(w)};
      for (int i = 0; i < w; ++i) q.lo[i] = lo_of(i), q.hi[i] = hi_of(i);
      p.pairs.push_back(std::move(q));
    };
    // Element i of a 128-bit block b = i / 4 (quad q = i % 4); `w +` picks from the second source.
    if (layout != TransposeLayout::kPairs)
      for (int r = 0; r < regs_n; r += 2)  // unpcklps / unpckhps
        pair(r, r + 1, [w](int i) { return (i / 4) * 4 + (i % 4) / 2 + (i % 2 ? w : 0); },
             [w](int i) { return (i / 4) * 4 + 2 + (i % 4) / 2 + (i % 2 ? w : 0); });
    const int pd_stride = columns ? 2 : 1;
    if (layout != TransposeLayout::kPackedPairs)
      for (int r = 0; r < regs_n; ++r)  // unpcklpd / unpckhpd, rows r and r + pd_stride
        if ((r & pd_stride) == 0)
          pair(r, r + pd_stride, [w](int i) { return (i / 4) * 4 + i % 2 + (i % 4 >= 2 ? w : 0); },
               [w](int i) { return (i / 4) * 4 + 2 + i % 2 + (i % 4 >= 2 ? w : 0); });
    for (int d = 2 * pd_stride; d < regs_n; d *= 2)  // even / odd 128-bit blocks of concat(a, b)
      for (int r = 0; r < regs_n; ++r)
        if ((r & d) == 0)
          pair(r, r + d, [](int i) { return (i / 4) * 8 + i % 4; }, [](int i) { return (i / 4) * 8 + 4 + i % 4; });
    // Run the plan on element numbers (row · w + element) to find where each column lands.
    std::vector<std::vector<int>> regs(regs_n, std::vector<int>(w));
    for (int r = 0; r < regs_n; ++r)
      for (int i = 0; i < w; ++i) regs[r][i] = r * w + i;
    for (const TransposePlan::Pair& q : p.pairs) {
      std::vector<int> lo(w), hi(w);
      auto pick = [&](int k) { return k < w ? regs[q.a][k] : regs[q.b][k - w]; };
      for (int i = 0; i < w; ++i) lo[i] = pick(q.lo[i]), hi[i] = pick(q.hi[i]);
      regs[q.a] = lo;
      regs[q.b] = hi;
    }
    // What lane l of the register holding column j must hold.
    auto expected = [&](int j, int l) {
      switch (layout) {
        case TransposeLayout::kColumns: return l * w + j;
        case TransposeLayout::kPairs: return (l / 2) * w + 2 * j + l % 2;
        case TransposeLayout::kPackedPairs: return (2 * (l / 4) + l % 2) * w + 2 * j + (l % 4) / 2;
      }
      return -1;
    };
    p.column_reg.assign(regs_n, -1);
    for (int r = 0; r < regs_n; ++r) {
      const int column = layout == TransposeLayout::kColumns ? regs[r][0] % w : regs[r][0] % w / 2;  // row 0's first
      for (int l = 0; l < w; ++l)
        if (column >= regs_n || regs[r][l] != expected(column, l)) return {};  // not a transpose (Emit reports it)
      p.column_reg[column] = r;
    }
    return p;
  }
  std::vector<Value*> Transpose(std::vector<Value*> r, TransposeLayout layout = TransposeLayout::kColumns) {
    using L = TransposeLayout;
    static const TransposePlan plans[3][3] = {
        {MakeTransposePlan(16), MakeTransposePlan(8), MakeTransposePlan(4)},
        {MakeTransposePlan(16, L::kPairs), MakeTransposePlan(8, L::kPairs), MakeTransposePlan(4, L::kPairs)},
        {MakeTransposePlan(16, L::kPackedPairs), MakeTransposePlan(8, L::kPackedPairs),
         MakeTransposePlan(4, L::kPackedPairs)}};
    // Widths are 16, 8 or 4 (CodegenTarget); the plans are checked by simulation when made, and
    // the differential tests run all three.
    const TransposePlan& plan = plans[static_cast<int>(layout)][W_ == 16 ? 0 : W_ == 8 ? 1 : 2];
    const int regs_n = layout == L::kColumns ? W_ : W_ / 2;
    if (plan.column_reg.size() != static_cast<size_t>(regs_n) || r.size() != static_cast<size_t>(regs_n)) {
      no_transpose_plan_ = true;  // an internal error: Emit fails rather than emit wrong code
      return r;
    }
    for (const TransposePlan::Pair& q : plan.pairs) {
      Value* lo = b_.CreateShuffleVector(r[q.a], r[q.b], q.lo);
      Value* hi = b_.CreateShuffleVector(r[q.a], r[q.b], q.hi);
      r[q.a] = lo;
      r[q.b] = hi;
    }
    std::vector<Value*> cols(static_cast<size_t>(regs_n));
    for (int j = 0; j < regs_n; ++j) cols[j] = r[plan.column_reg[j]];
    return cols;
  }
  // Half h (0 or 1) of a kPackedPairs register of bf16 pairs widened to fp32, in the kPairs lane
  // order: a word unpack with zero (vpunpcklwd / vpunpckhwd) puts each bf16 in the high half of
  // its own lane.
  Value* WidenPair(Value* packed, int h) {
    auto* words_type = FixedVectorType::get(b_.getInt16Ty(), 2 * W_);
    Value* words = b_.CreateBitCast(packed, words_type);
    std::vector<int> mask(static_cast<size_t>(2 * W_));
    for (int i = 0; i < 2 * W_; ++i)  // word i: block i / 8, low word of lane i / 2 of the block's half h
      mask[i] = i % 2 == 0 ? 0 : 2 * W_ + (i / 8) * 8 + 4 * h + (i % 8) / 2;
    return b_.CreateBitCast(b_.CreateShuffleVector(Constant::getNullValue(words_type), words, mask),
                            FixedVectorType::get(f32_, W_));
  }
  // Loads `count` (≤ W) consecutive elements from k0 for lanes part·W ... part·W + W − 1 of the
  // block and transposes them: result[j] (W lanes) holds element k0 + j of each. Inactive lanes
  // read lane 0's row (active whenever the statement runs in this block); their values are
  // never stored.
  std::vector<Value*> LoadColumns(const ir::TensorRef& t, Value* k0, int part, int count) {
    return LoadColumns(t, k0, b_.getInt64(part * W_), count < W_ ? TailMask(count) : nullptr, count);
  }
  // The same for the W lanes from `first_lane` (an i64, a multiple of W), the rows' elements
  // masked by `mask` (W × i1, or none).
  std::vector<Value*> LoadColumns(const ir::TensorRef& t, Value* k0, Value* first_lane, Value* mask, int count) {
    std::vector<Value*> rows;
    for (int l = 0; l < W_; ++l)
      rows.push_back(LoadRow(t, ActiveOrFirst(b_.CreateAdd(first_lane, b_.getInt64(l))), k0, mask));
    std::vector<Value*> cols = Transpose(rows);
    cols.resize(static_cast<size_t>(count));
    return cols;
  }
  std::vector<Value*> LoadColumns(const ir::TensorRef& t, Value* k0, int part) { return LoadColumns(t, k0, part, W_); }
  // Elements of a dtype that one 32-bit transpose element carries: 1, 2 or 4.
  static int Packing(Dtype d) { return 4 / DtypeSize(d); }
  // The packing a transposed loop over these (contiguous) tensors uses: their common packing, or
  // 1 when their dtypes' sizes differ. Such a loop steps W × packing elements per chunk.
  static int CommonPacking(const std::vector<const ir::TensorRef*>& ts) {
    const int p = Packing(ts.front()->dtype);
    for (const ir::TensorRef* t : ts)
      if (Packing(t->dtype) != p) return 1;
    return p;
  }
  // Whether a per-channel loop over `count` elements of these tensors streams enough bytes per
  // block (over every copy of a repeat around it) for PrefetchRow to pay (kStagePrefetchMinBytes).
  bool StreamsBeyondCaches(const std::vector<const ir::TensorRef*>& ts, int64_t count) const {
    int64_t streamed = 0;
    for (const ir::TensorRef* t : ts) streamed += repeat_copies_ * count * DtypeSize(t->dtype) * n_;
    return streamed >= kStagePrefetchMinBytes;
  }
  // Prefetches lane `lane`'s row of t kStagePrefetchChunks chunks (of per_chunk elements) past k0.
  void PrefetchRow(const ir::TensorRef& t, int lane, Value* k0, int per_chunk) {
    Prefetch(RowPtr(t, ActiveOrFirst(lane), b_.CreateAdd(k0, b_.getInt64(kStagePrefetchChunks * per_chunk))));
  }
  // The transposed loop of a per-channel recurrence over `count` elements of contiguous tensors:
  // chunks of W · packing elements, the block's parts in turn; body(k0, part, cols) gets every
  // tensor's columns (cols[i][j]: element k0 + j of tensor i, W lanes). Returns how many
  // elements it covered (0 unless every tensor is a contiguous row); the caller gathers the rest.
  // Rows are prefetched as StagedChunks prefetches them (measured on the BN backward chain's
  // gradient sums, five alternating rounds, median µs: fp32 at 128 × 8192 235.5 → 225.1, bf16
  // 156.6 → 154.6; at 16384 within the noise; two chunks ahead no better, six much worse).
  template <typename Body>
  int64_t TransposedChunks(const std::vector<const ir::TensorRef*>& ts, int64_t count, Body body) {
    for (const ir::TensorRef* t : ts)
      if (!ContiguousRow(*t)) return 0;
    const int packing = CommonPacking(ts), per_chunk = W_ * packing;
    if (count < per_chunk) return 0;
    const bool prefetch = StreamsBeyondCaches(ts, count);
    Loop(b_.getInt64(count / per_chunk), [&](Value* chunk) {
      Value* k0 = b_.CreateMul(chunk, b_.getInt64(per_chunk));
      ForEachPart([&](int part) {
        std::vector<std::vector<Value*>> cols;
        for (const ir::TensorRef* t : ts) {
          if (prefetch)
            for (int l = part * W_; l < (part + 1) * W_; ++l) PrefetchRow(*t, l, k0, per_chunk);
          cols.push_back(LoadPackedColumns(*t, k0, part, packing));
        }
        body(k0, part, cols);
      });
    });
    return count - count % per_chunk;
  }
  // A tensor of a staged loop, read at the argument slots of a repeat copy (arg_shift; nullptr
  // outside a repeat): the gradient sums step two copies of a repeat together (GradSums).
  struct StagedTensor {
    const ir::TensorRef* t;
    Value* arg_shift;
  };
  // The loop of a per-channel recurrence that steps every lane of the block at once, over
  // `count` elements of contiguous tensors: per chunk of W · packing elements, each part's rows
  // are transposed into a stack buffer of (packed) columns, and a loop over the chunk's element
  // pairs calls step(k, k % 2, xs) for elements k and k + 1 in order (xs[i]: element k of
  // tensor i, n_ lanes). Why stage: a Welford step is a 6-7 cycle dependency chain per
  // element, so the block's parts must step together to fill the pipes; transposing all parts
  // first in registers spills heavily, and the buffer keeps the step loop at a few registers.
  // The next chunk is staged from inside the pair loop, one part of one tensor every
  // pairs / (parts · tensors) iterations (DoubleBufferedChunks). (Measured on the BN statistics
  // at 128 × 8192: staging at all, bf16 from 2.9-3.3 to 2.5-2.7 times the roof, fp32 from about
  // 1.9 to 1.6-1.8. One copy of the gradient sums, one 4-cycle FMA chain, ran slower staged: it
  // keeps TransposedChunks; two copies stepped together ran faster, PairedGradSums.) Staging a
  // chunk prefetches the rows kStagePrefetchChunks further on.
  // Returns how many elements it covered (see TransposedChunks).
  template <typename Step>
  int64_t StagedChunks(const std::vector<StagedTensor>& ts, int64_t count, Step step) {
    std::vector<const ir::TensorRef*> rows;  // each tensor once, whichever copies read it
    for (const StagedTensor& st : ts)
      if (std::find(rows.begin(), rows.end(), st.t) == rows.end()) rows.push_back(st.t);
    for (const ir::TensorRef* t : rows)
      if (!ContiguousRow(*t)) return 0;
    const int packing = CommonPacking(rows), per_chunk = W_ * packing, parts = n_ / W_;
    if (count < per_chunk) return 0;
    const int64_t chunks = count / per_chunk;
    auto* column_type = FixedVectorType::get(i32_, W_);
    const int64_t half_columns = static_cast<int64_t>(ts.size()) * W_ * parts;
    Value* buffer;  // buffer[h · half_columns + (i · W + v) · parts + part]: packed column v of tensor i
    {
      // One column of padding in front: StagedField reads a bf16 pair's even field 2 bytes early.
      // It is zeroed (its bytes are cleared by the and, but an uninitialised read is not one
      // that LLVM has to keep defined).
      IRBuilder<> eb(entry_, entry_->begin());
      Value* padded = eb.CreateAlloca(ArrayType::get(column_type, 2 * half_columns + 1));
      eb.CreateAlignedStore(Constant::getNullValue(column_type), padded, Align(64));
      buffer = eb.CreateGEP(column_type, padded, eb.getInt64(1));
    }
    auto slot = [&](Value* half, size_t i, Value* v, int part) {
      Value* column = b_.CreateAdd(b_.getInt64(static_cast<int64_t>(i) * W_), v);
      return b_.CreateGEP(column_type, buffer,
                          b_.CreateAdd(b_.CreateMul(half, b_.getInt64(half_columns)),
                                       b_.CreateAdd(b_.CreateMul(column, b_.getInt64(parts)), b_.getInt64(part))));
    };
    const bool prefetch = StreamsBeyondCaches(rows, count);
    auto stage = [&](Value* k0, Value* half, int unit) {  // one part of one tensor
      WidthScope w(this, W_);
      const int part = unit / static_cast<int>(ts.size());
      const size_t i = static_cast<size_t>(unit) % ts.size();
      Value* const outer_shift = arg_shift_;
      arg_shift_ = ts[i].arg_shift;
      if (prefetch)
        for (int l = part * W_; l < (part + 1) * W_; ++l) PrefetchRow(*ts[i].t, l, k0, per_chunk);
      const std::vector<Value*> packed = TransposedRows(*ts[i].t, k0, part, packing);
      for (int v = 0; v < W_; ++v)
        b_.CreateAlignedStore(b_.CreateBitCast(packed[v], column_type), slot(half, i, b_.getInt64(v), part), Align(64));
      arg_shift_ = outer_shift;
    };
    const int units = parts * static_cast<int>(ts.size());
    DoubleBufferedChunks(chunks, per_chunk, per_chunk / 2, units, stage, [&](Value* k0, Value* half, Value* pair) {
      for (int s = 0; s < 2; ++s) {
        Value* e = b_.CreateAdd(b_.CreateMul(pair, b_.getInt64(2)), b_.getInt64(s));  // element k0 + e
        Value* v = b_.CreateUDiv(e, b_.getInt64(packing));
        Value* field = b_.CreateURem(e, b_.getInt64(packing));
        std::vector<Value*> xs;
        for (size_t i = 0; i < ts.size(); ++i) {
          std::vector<Value*> pieces;
          for (int part = 0; part < parts; ++part) {
            WidthScope w(this, W_);
            pieces.push_back(StagedField(ts[i].t->dtype, slot(half, i, v, part), packing, s, field));
          }
          xs.push_back(Concat(pieces));
        }
        step(b_.CreateAdd(k0, e), s, xs);
      }
    });
    return count - count % per_chunk;
  }
  // The schedule of the staged loops: `units` stage(k0, half, unit) calls (the block's parts or
  // groups) stage chunk 0 into half 0 of a double buffer; then, per chunk, a loop of
  // `iterations` (its element pairs, or its staged registers) calls body(k0, half, iteration), and
  // stages unit u of the next chunk into the other half just before iteration u · iterations /
  // units. Why from inside the loop: the step loop is
  // latency-bound and a whole chunk of it fills the reorder buffer, so transposes placed after it
  // could not overlap it; spread between its iterations they fill the idle pipes (bf16
  // statistics at 128 × 8192: 65-77 → 58-60 µs).
  template <typename Stage, typename Body>
  void DoubleBufferedChunks(int64_t chunks, int per_chunk, int iterations, int units, Stage stage, Body body) {
    for (int u = 0; u < units; ++u) stage(b_.getInt64(0), b_.getInt64(0), u);
    Loop(b_.getInt64(chunks), [&](Value* chunk) {
      Value* k0 = b_.CreateMul(chunk, b_.getInt64(per_chunk));
      Value* half = b_.CreateAnd(chunk, b_.getInt64(1));
      Value* next_half = b_.CreateXor(half, b_.getInt64(1));
      Value* k_next = b_.CreateAdd(k0, b_.getInt64(per_chunk));
      Value* has_next = b_.CreateICmpULT(chunk, b_.getInt64(chunks - 1));
      Loop(b_.getInt64(iterations), [&](Value* it) {
        for (int u = 0; u < units; ++u) {
          // The iteration test first: the backend splits the `and` into two branches in this
          // order, so has_next is tested only on the unit's iteration. Tested first, it was a
          // not-taken branch per unit and iteration, which can take port 0 from the vector work
          // (Xeon host, alternating runs: fp32 statistics at 128 × 512 6.0-6.6 → 5.9-6.4 µs,
          // bf16 at 128 × 8192 78-85 → 78-82; on the Zen 5 host seven rounds leaned the same
          // way, 3-6 % at 8192 and 16384, within that VM's noise, fortieth session). Peeling the
          // last chunk instead, so that no has_next test is left, gained nothing fused and made
          // the unfused bf16 statistics 6-8 % slower; one staging body with the group a variable
          // (no tests at all) 0-3 % faster fused, 15-25 % slower unfused (Xeon host,
          // docs/benchmarks.md, thirty-fourth session).
          Value* now = b_.CreateAnd(b_.CreateICmpEQ(it, b_.getInt64(u * iterations / units)), has_next);
          If(now, [&] { stage(k_next, next_half, u); });
        }
        body(k0, half, it);
      });
    });
  }
  // StagedChunks for the two parity streams of one contiguous fp32 (or other 4-byte) or bf16
  // tensor (Stats2), with the streams side by side in the lanes: each chunk of a row is staged
  // group by group (W/2 rows each), so vector j of a group holds element pair j of its W/2
  // channels, channel c's even element in lane 2c and its odd one in lane 2c + 1, as fp32. One
  // Welford step then advances both streams of every channel: step(k, x) gets elements k and
  // k + 1 of the block's n_ channels as one 2·n_-lane vector (channel c in lanes 2c, 2c + 1).
  // 4-byte rows go through the kPairs transpose (W/2 pairs per chunk, one staged register per
  // pair), bf16 rows through the kPackedPairs one (W pairs per chunk): their registers are staged
  // packed, two pairs each, and WidenPair widens each half in the step loop, which steps two pairs
  // per staged register. Why: a group of W/2 rows is transposed in one stage fewer than W rows,
  // and a group's stage is short enough to come every two steps (measured in a harness on the
  // Xeon host, cycles per 16 elements: fp32 5.0 → 4.1; bf16 4.1 → 3.6, against StagedChunks
  // with the staged fields widened by an and). Staging bf16 packed stores half as many registers
  // for the same number of unpacks: the Zen 5 host runs about one 512-bit store per cycle, and
  // stores beside the step's FP work slowed it by about 0.8 cycles each in a harness (bf16
  // statistics at 128 × 8192 there 60 → 52 µs). Scheduled by DoubleBufferedChunks and
  // prefetched as StagedChunks is. Building the same registers in the step loop from the rows
  // instead (merge-masked 16-byte loads and a dword unpack; no buffer, no cross-block shuffle)
  // was slower on the Zen 5 host: bf16 statistics at 128 × 8192 45-48 → 62-94 µs. So was
  // widening by word-masked stores into a zeroed buffer, which should take no vector port but
  // doubles the stores and splits half of them across lines (Xeon host, StagedChunks' layout:
  // 13-16 % slower; docs/benchmarks.md, thirty-ninth session).
  // Returns how many elements it covered (0, emitting nothing, unless the tensor is a contiguous
  // row of at least one chunk).
  template <typename Step>
  int64_t StagedPairChunks(const ir::TensorRef& t, int64_t count, Step step) {
    // bf16 with 16 and 8 lanes, not 4 (never measured). 8-lane code is a matter of the core:
    // generated as for an AVX2 host on the Xeon host, bf16 statistics ran 7-10 % slower this
    // way than through StagedChunks; on the Zen 3 host (AVX2 only), 5-7 % faster at 128 × 512,
    // 8192 and 16384 (30 alternating runs, fastest and median alike; fifty-fifth session), and
    // AVX2-only hosts are what runs 8-lane code. fp32 ran faster at every width.
    const bool packed = t.dtype == Dtype::BFLOAT16 && (W_ == 16 || W_ == 8);
    const int per_chunk = packed ? 2 * W_ : W_, pairs = per_chunk / 2;
    if (!ContiguousRow(t) || (DtypeSize(t.dtype) != 4 && !packed) || count < per_chunk || W_ < 4) return 0;
    const int half_w = W_ / 2, groups = n_ / half_w;
    const int64_t chunks = count / per_chunk;
    // Staged registers per group and chunk: one per pair (kPairs) or per two pairs (kPackedPairs).
    const int staged = packed ? pairs / 2 : pairs;
    const int64_t half_vectors = static_cast<int64_t>(groups) * staged;
    auto* vector_type = FixedVectorType::get(f32_, W_);
    Value* buffer;  // buffer[h · half_vectors + j · groups + g]: staged register j of group g
    {
      IRBuilder<> eb(entry_, entry_->begin());
      buffer = eb.CreateAlloca(ArrayType::get(vector_type, 2 * half_vectors));
    }
    auto slot = [&](Value* half, Value* j, int g) {
      return b_.CreateGEP(vector_type, buffer,
                          b_.CreateAdd(b_.CreateMul(half, b_.getInt64(half_vectors)),
                                       b_.CreateAdd(b_.CreateMul(j, b_.getInt64(groups)), b_.getInt64(g))));
    };
    const bool prefetch = StreamsBeyondCaches({&t}, count);
    auto stage = [&](Value* k0, Value* half, int g) {
      WidthScope w(this, W_);
      std::vector<Value*> rows;
      for (int l = g * half_w; l < (g + 1) * half_w; ++l) {
        if (prefetch) PrefetchRow(t, l, k0, per_chunk);
        rows.push_back(packed ? b_.CreateAlignedLoad(vi32_, RowPtr(t, ActiveOrFirst(l), k0), Align(2))
                              : LoadRow(t, ActiveOrFirst(l), k0, nullptr));
      }
      const std::vector<Value*> regs = Transpose(rows, packed ? TransposeLayout::kPackedPairs : TransposeLayout::kPairs);
      for (size_t j = 0; j < regs.size(); ++j)
        b_.CreateAlignedStore(b_.CreateBitCast(regs[j], vector_type), slot(half, b_.getInt64(static_cast<int64_t>(j)), g), Align(64));
    };
    // One iteration per staged register: a packed one steps pairs 2j and 2j + 1.
    const int pairs_per_reg = pairs / staged;
    DoubleBufferedChunks(chunks, per_chunk, staged, groups, stage, [&](Value* k0, Value* half, Value* j) {
      std::vector<Value*> regs;
      for (int g = 0; g < groups; ++g) regs.push_back(b_.CreateAlignedLoad(vector_type, slot(half, j, g), Align(64)));
      for (int h = 0; h < pairs_per_reg; ++h) {
        std::vector<Value*> pieces;
        for (Value* reg : regs) pieces.push_back(packed ? WidenPair(reg, h) : reg);
        Value* pair = b_.CreateAdd(b_.CreateMul(j, b_.getInt64(pairs_per_reg)), b_.getInt64(h));
        step(b_.CreateAdd(k0, b_.CreateMul(pair, b_.getInt64(2))), Concat(pieces));
      }
    });
    return count - count % per_chunk;
  }
  // The vectors joined end to end (equal lane counts, a power-of-two number of them).
  Value* Concat(std::vector<Value*> pieces) {
    while (pieces.size() > 1) {
      std::vector<Value*> joined;
      for (size_t i = 0; i < pieces.size(); i += 2) {
        const int half = Lanes(pieces[i]);
        std::vector<int> concat(static_cast<size_t>(2 * half));
        for (int j = 0; j < 2 * half; ++j) concat[j] = j;
        joined.push_back(b_.CreateShuffleVector(pieces[i], pieces[i + 1], concat));
      }
      pieces = std::move(joined);
    }
    return pieces[0];
  }
  // W · packing consecutive elements from k0 for the lanes of one part, widened: result[j] holds
  // element k0 + j of each lane.
  std::vector<Value*> LoadPackedColumns(const ir::TensorRef& t, Value* k0, int part, int packing) {
    if (packing == 1) return LoadColumns(t, k0, part);
    std::vector<Value*> cols;
    for (Value* p : TransposedRows(t, k0, part, packing))
      for (int s = 0; s < packing; ++s) cols.push_back(UnpackField(t.dtype, p, packing, b_.getInt64(s)));
    return cols;
  }
  // The part's rows from element k0, transposed: W vectors of W lanes. With packing 1 these are
  // the widened columns (element k0 + j of each lane); otherwise packed dwords (vector j holds
  // elements k0 + packing·j ... + packing − 1), so a bf16 column costs half the shuffles.
  std::vector<Value*> TransposedRows(const ir::TensorRef& t, Value* k0, int part, int packing) {
    if (packing == 1) return LoadColumns(t, k0, part);
    std::vector<Value*> rows;
    for (int l = part * W_; l < (part + 1) * W_; ++l)
      rows.push_back(b_.CreateBitCast(b_.CreateAlignedLoad(vi32_, RowPtr(t, ActiveOrFirst(l), k0), Align(DtypeSize(t.dtype))), vf_));
    return Transpose(rows);
  }
  // Field `field` (i64; `parity` = field % 2) of the packed column that StagedChunks stored at
  // `column`, widened to fp32. A bf16 field is widened by reading each dword lane 2 · (1 − field)
  // bytes early, which puts the field in the lane's high half, and clearing the low half: one
  // and, which runs on either 512-bit vector port, instead of a shift for the even field, which
  // runs on one (bf16 statistics on the Xeon host 4-5 % faster; on the Zen 5 host the same
  // time). Only with 16 lanes: in code for an AVX2 host (8 lanes), where the Xeon host runs the
  // shift on two of three ports, the early reads made bf16 statistics 6-7 % slower.
  Value* StagedField(Dtype dtype, Value* column, int packing, int parity, Value* field) {
    if (packing == 2 && dtype == Dtype::BFLOAT16 && W_ == 16) {
      Value* p = b_.CreateGEP(i8_, column, b_.getInt64(parity == 0 ? -2 : 0));
      Value* dwords = b_.CreateAlignedLoad(vi32_, p, Align(2));
      return b_.CreateBitCast(b_.CreateAnd(dwords, ConstantInt::get(vi32_, 0xFFFF0000u)), vf_);
    }
    return UnpackField(dtype, b_.CreateAlignedLoad(vi32_, column, Align(64)), packing, field);
  }
  // Field `field` (i64; little-endian, so element packing·j + field) of TransposedRows' vector,
  // widened to fp32.
  Value* UnpackField(Dtype dtype, Value* packed, int packing, Value* field) {
    if (packing == 1) return b_.CreateBitCast(packed, vf_);
    auto* raw_type = FixedVectorType::get(RawType(dtype), W_);
    Value* dwords = b_.CreateBitCast(packed, vi32_);
    Value* shift = Splat(b_.CreateTrunc(b_.CreateMul(field, b_.getInt64(8 * DtypeSize(dtype))), i32_));
    return Widen(dtype, b_.CreateTrunc(b_.CreateLShr(dwords, shift), raw_type));
  }
  // Lane l of the block if its channel is active, else lane 0 (i64 scalar).
  Value* ActiveOrFirst(int l) { return ActiveOrFirst(b_.getInt64(l)); }
  Value* ActiveOrFirst(Value* lane) {
    // A constant lane keeps each row's address a constant offset from the block's (row loads
    // need no registers of their own; selected lanes cost a register or a spill each).
    if (full_blocks_) return lane;
    Value* active = b_.CreateICmpULT(b_.CreateAdd(cb_, lane), b_.getInt64(channels_));
    return b_.CreateSelect(active, lane, b_.getInt64(0));
  }
  // Stores values[k] (n_ lanes each) to element k of every active lane. A contiguous
  // destination gets one masked row store per lane after a transpose: a scatter writes one
  // element per instruction slot, and each lane's row is a different page.
  void StoreLaneValues(const ir::TensorRef& dst, const std::vector<Value*>& values) {
    const int count = static_cast<int>(values.size());
    if (!ContiguousRow(dst) || count > W_ || W_ < 4) {
      for (int k = 0; k < count; ++k) StoreElem(dst, ConstOffset(dst, k), values[static_cast<size_t>(k)]);
      return;
    }
    // A 4-byte dtype is narrowed (NaNs canonicalised, integers converted) before the transpose,
    // which only moves 32-bit lanes: `count` columns instead of W rows. bf16 statistics store
    // 6 values per channel per tile: 64 NaN compares per 64-channel block on the rows, 24 on
    // the columns.
    const bool narrow_first = DtypeSize(dst.dtype) == 4;
    ForEachPart([&](int part) {
      std::vector<Value*> cols(static_cast<size_t>(W_), PoisonValue::get(narrow_first ? vi32_ : vf_));
      for (int k = 0; k < count; ++k) {
        Value* col = Part(values[static_cast<size_t>(k)], part);
        cols[static_cast<size_t>(k)] = narrow_first ? b_.CreateBitCast(Narrow(dst.dtype, col), vi32_) : col;
      }
      const std::vector<Value*> rows = Transpose(cols);  // rows[l][k] = values[k][lane l]
      for (int l = 0; l < W_; ++l) {
        const int lane = part * W_ + l;
        Value* active = b_.CreateICmpULT(b_.CreateAdd(cb_, b_.getInt64(lane)), b_.getInt64(channels_));
        Value* mask = b_.CreateSelect(active, TailMask(count), Constant::getNullValue(TailMask(count)->getType()));
        Value* p = RowPtr(dst, ActiveOrFirst(lane), b_.getInt64(0));
        Value* row = rows[static_cast<size_t>(l)];
        if (!narrow_first) row = Narrow(dst.dtype, row);
        b_.CreateMaskedStore(row, p, Align(DtypeSize(dst.dtype)), mask);
      }
    });
  }
  // Lanes part·W ... part·W + W − 1 of an n_-lane vector, and the vector with them replaced.
  // The per-channel recurrences step one W-lane part at a time: each part's chain is
  // independent, and working on one part keeps its W columns and accumulators in registers.
  Value* Part(Value* v, int part) {
    std::vector<int> mask(static_cast<size_t>(W_));
    for (int i = 0; i < W_; ++i) mask[i] = part * W_ + i;
    return b_.CreateShuffleVector(v, v, mask);
  }
  Value* WithPart(Value* v, int part, Value* p) {
    const int n = Lanes(v);
    std::vector<int> widen(static_cast<size_t>(n)), mask(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) widen[i] = i < W_ ? i : -1;
    for (int i = 0; i < n; ++i) mask[i] = i / W_ == part ? n + i % W_ : i;
    return b_.CreateShuffleVector(v, b_.CreateShuffleVector(p, p, widen), mask);
  }
  // For each W-lane part of the block: body(part) with W-lane vectors.
  template <typename Body>
  void ForEachPart(Body body) {
    const int parts = n_ / W_;
    for (int part = 0; part < parts; ++part) {
      WidthScope w(this, W_);
      body(part);
    }
  }
  // Element-wise statements on contiguous rows: lane by lane, W elements at a time; per-channel
  // scalars are splatted from their lane.
  // Inside a lane-major repeat (row_lane_ set) only that lane's row. With `paired`, chunks of
  // 2W elements go to paired(lane, elem) first (FusedRows' 2-byte rows).
  template <typename Body>  // Body(lane, elem, tail_mask) emits one W-element chunk
  void RowLoop(int64_t count, Body body, const std::function<void(Value*, Value*)>& paired = nullptr) {
    auto row = [&](Value* lane) {
      WidthScope width(this, W_);
      If(b_.CreateICmpULT(b_.CreateAdd(cb_, lane), b_.getInt64(channels_)), [&] {
        int64_t done = 0;
        if (paired) {
          Loop(b_.getInt64(count / (2 * W_)), [&](Value* chunk) { paired(lane, b_.CreateMul(chunk, b_.getInt64(2 * W_))); });
          done = count / (2 * W_) * (2 * W_);
        }
        Loop(b_.getInt64((count - done) / W_),
             [&](Value* chunk) { body(lane, b_.CreateAdd(b_.getInt64(done), b_.CreateMul(chunk, b_.getInt64(W_))), nullptr); });
        if (count % W_ != 0) body(lane, b_.getInt64(count - count % W_), TailMask(count % W_));
      });
    };
    if (row_lane_ != nullptr) row(row_lane_);
    else Loop(b_.getInt64(n_), row);
  }
  // Element-wise statements over contiguous rows: their code is a RowLoop.
  static bool IsRowStatement(const Stmt& s) {
    switch (s.op) {
      case Op::TensorScalar: case Op::TensorTensor: case Op::Reciprocal: case Op::BackProp:
      case Op::Cast: case Op::Memset: case Op::BitsScalar: case Op::BitsTensor: case Op::IntTensor:
      case Op::Predicated: break;
      default: return false;
    }
    return std::all_of(s.tensors.begin(), s.tensors.end(), [](const ir::TensorRef& t) { return ContiguousRow(t); });
  }
  Value* LaneScalar(Value* vec, Value* lane) { return Splat(b_.CreateExtractElement(vec, lane)); }

  // ---- Welford statistics ----
  struct Welford {
    Value *mean, *m2;
  };
  // One Welford step for element x, the n-th of its stream (n an i64 value).
  // The subtractions stay on the add pipes: written as fma(mean, -1, x), which gives the same
  // bits, they made the bf16 statistics 8-14 % slower (both of them: 27-28 %) on the Zen 5
  // host: its loop is shorter of FMA-pipe slots than of add-pipe slots (forty-ninth session).
  Welford WelfordStep(Welford w, Value* x, Value* n) {
    Value* rp = b_.CreateGEP(i8_, state_, b_.CreateAdd(b_.getInt64(kPramOffset - 4), b_.CreateMul(n, b_.getInt64(4))));
    Value* recip = Splat(b_.CreateLoad(f32_, rp));  // recip(n) = PRAM[n − 1]
    Value* delta = b_.CreateFSub(x, w.mean);
    Value* mean = Fma(delta, recip, w.mean);
    return {mean, Fma(delta, b_.CreateFSub(x, mean), w.m2)};
  }
  void Stats(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const int64_t count = src.pattern.Count();
    const bool split = s.flag;
    Type* lane_vf = vf_;
    // Accumulators of the two parity streams (one without the split), all lanes of the block.
    Value* slots[2][2] = {{Var(vf_, F(0.0f)), Var(vf_, F(0.0f))}, {Var(vf_, F(0.0f)), Var(vf_, F(0.0f))}};
    auto load = [&](int t) { return Welford{Get(slots[t][0], lane_vf), Get(slots[t][1], lane_vf)}; };
    auto store = [&](int t, Welford w) {
      b_.CreateStore(w.mean, slots[t][0]);
      b_.CreateStore(w.m2, slots[t][1]);
    };
    // Element k belongs to stream k % 2 (split) or 0, as its (k / 2 + 1)-th or (k + 1)-th element.
    auto nth = [&](Value* k) {
      return split ? b_.CreateAdd(b_.CreateLShr(k, b_.getInt64(1)), b_.getInt64(1)) : b_.CreateAdd(k, b_.getInt64(1));
    };
    const int streams = split ? 2 : 1;
    int64_t done = 0;
    if (split) {  // both streams in one vector of 2·n_ lanes (StagedPairChunks), then split apart
      auto* pair_vf = FixedVectorType::get(f32_, 2 * n_);
      Value* pair_slots[2] = {Var(pair_vf, ConstantFP::get(pair_vf, 0.0)), Var(pair_vf, ConstantFP::get(pair_vf, 0.0))};
      done = StagedPairChunks(src, count, [&](Value* k, Value* x) {
        WidthScope w(this, 2 * n_);
        const Welford next = WelfordStep({Get(pair_slots[0], pair_vf), Get(pair_slots[1], pair_vf)}, x, nth(k));
        b_.CreateStore(next.mean, pair_slots[0]);
        b_.CreateStore(next.m2, pair_slots[1]);
      });
      if (done > 0)
        for (int parity = 0; parity < 2; ++parity) {
          std::vector<int> lanes(static_cast<size_t>(n_));
          for (int c = 0; c < n_; ++c) lanes[c] = 2 * c + parity;
          Value* mean = Get(pair_slots[0], pair_vf);
          Value* m2 = Get(pair_slots[1], pair_vf);
          store(parity, {b_.CreateShuffleVector(mean, mean, lanes), b_.CreateShuffleVector(m2, m2, lanes)});
        }
    }
    if (done == 0)
      done = StagedChunks({{&src, arg_shift_}}, count, [&](Value* k, int parity, const std::vector<Value*>& xs) {
        const int t = split ? parity : 0;
        store(t, WelfordStep(load(t), xs[0], nth(k)));
      });
    // The rest, element by element (gathers), each stream in its own order.
    auto off = OffsetFn(src);
    for (int parity = 0; parity < streams; ++parity) {
      const int64_t first = split ? done + ((done % 2 == parity) ? 0 : 1) : done;
      const int64_t stride = split ? 2 : 1;
      if (first >= count) continue;
      Loop(b_.getInt64((count - first + stride - 1) / stride), [&](Value* j) {
        Value* k = b_.CreateAdd(b_.getInt64(first), b_.CreateMul(j, b_.getInt64(stride)));
        store(parity, WelfordStep(load(parity), LoadElem(src, off(k)), nth(k)));
      });
    }
    std::vector<Value*> out;
    if (split)
      out = {Val(s.operands[0]), load(0).mean, load(0).m2, Val(s.operands[1]), load(1).mean, load(1).m2};
    else
      out = {b_.CreateFAdd(Val(s.operands[0]), Val(s.operands[1])), load(0).mean, load(0).m2};
    StoreLaneValues(dst, out);
  }
  void Aggregate(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    Type* lane_vf = vf_;
    struct Merged {
      Value *n, *mean, *m2;
    };
    Value* slots[3] = {Var(vf_, F(0.0f)), Var(vf_, F(0.0f)), Var(vf_, F(0.0f))};
    auto load = [&] { return Merged{Get(slots[0], lane_vf), Get(slots[1], lane_vf), Get(slots[2], lane_vf)}; };
    auto store = [&](Merged m) {
      b_.CreateStore(m.n, slots[0]);
      b_.CreateStore(m.mean, slots[1]);
      b_.CreateStore(m.m2, slots[2]);
    };
    // The weight w = ndiv(nb, n + nb) of a merge depends on the counts alone, and the counts of
    // a BN aggregate are the same in every channel. So where a part's counts equal, lane for
    // lane and bit for bit, those of the part before it at the same tuple, it takes that part's
    // w instead of a Newton division of its own (bf16 statistics at 128 × 8192 spent about 2 µs
    // of 46 in these divisions, four per tuple).
    struct Weight {
      Value *nb, *n, *w;  // slots: the counts and the weight of the last part that merged the tuple
    };
    // Chan's merge of one tuple (nb, mb, m2b); "if nb == 0: skip". With `last`, the tuple's
    // weight slots, divides only where `first_part` (an i1) or the counts differ from them.
    auto merge = [&](Merged a, Value* nb, Value* mb, Value* m2b, const Weight* last, Value* first_part) {
      Value* active = b_.CreateFCmpUNE(nb, F(0.0f));
      Value* nab = b_.CreateFAdd(a.n, nb);
      Value* w;
      if (last == nullptr) {
        w = NDiv(nb, nab);
      } else {
        auto differs = [&](Value* x, Value* slot) {
          return b_.CreateICmpNE(b_.CreateBitCast(x, vi32_), b_.CreateBitCast(Get(slot, vf_), vi32_));
        };
        Value* divide = b_.CreateOr(first_part, AnyLane({differs(nb, last->nb), differs(a.n, last->n)}));
        w = FastUnless(divide, Get(last->w, vf_), [&] { return NDiv(nb, nab); });
        b_.CreateStore(nb, last->nb);
        b_.CreateStore(a.n, last->n);
        b_.CreateStore(w, last->w);
      }
      Value* delta = b_.CreateFSub(mb, a.mean);
      Value* mean1 = Fma(delta, w, a.mean);
      Value* m21 = Fma(b_.CreateFMul(delta, delta), b_.CreateFMul(a.n, w), b_.CreateFAdd(a.m2, m2b));
      return Merged{b_.CreateSelect(active, nab, a.n), b_.CreateSelect(active, mean1, a.mean),
                    b_.CreateSelect(active, m21, a.m2)};
    };
    const int64_t tuples = src.pattern.Count() / 3;
    if (ContiguousRow(src) && W_ >= 3) {
      // A contiguous source: W / 3 tuples per transposed load instead of three gathers each.
      // The block's parts are a loop inside the loop over chunks, so the merges are emitted
      // once, not once per part: with them unrolled, the Aggregate of a four-part block took
      // about 250 ms of LLVM's instruction selection.
      const int per = W_ / 3;
      auto* part_vf = FixedVectorType::get(f32_, W_);
      std::vector<Weight> last;
      for (int t = 0; t < per; ++t) {
        Constant* zero = ConstantFP::get(part_vf, 0.0);
        last.push_back(Weight{Var(part_vf, zero), Var(part_vf, zero), Var(part_vf, zero)});
      }
      auto chunk = [&](Value* k0, int n) {  // n tuples from element k0
        Loop(b_.getInt64(n_ / W_), [&](Value* part) {
          WidthScope width(this, W_);
          Value* first_lane = b_.CreateMul(part, b_.getInt64(W_));
          const std::vector<Value*> cols = LoadColumns(src, k0, first_lane, TailMask(3 * n), 3 * n);
          Value* state[3];
          for (int i = 0; i < 3; ++i) state[i] = b_.CreateGEP(f32_, slots[i], first_lane);
          Merged m{Get(state[0], vf_), Get(state[1], vf_), Get(state[2], vf_)};
          Value* first_part = b_.CreateICmpEQ(part, b_.getInt64(0));
          for (int t = 0; t < n; ++t) m = merge(m, cols[3 * t], cols[3 * t + 1], cols[3 * t + 2], &last[t], first_part);
          b_.CreateStore(m.n, state[0]);
          b_.CreateStore(m.mean, state[1]);
          b_.CreateStore(m.m2, state[2]);
        });
      };
      Loop(b_.getInt64(tuples / per), [&](Value* c) { chunk(b_.CreateMul(c, b_.getInt64(3 * per)), per); });
      if (tuples % per != 0) chunk(b_.getInt64(tuples / per * per * 3), static_cast<int>(tuples % per));
    } else {
      auto off = OffsetFn(src);
      Loop(b_.getInt64(tuples), [&](Value* t) {
        Value* k = b_.CreateMul(t, b_.getInt64(3));
        store(merge(load(), LoadElem(src, off(k)), LoadElem(src, off(b_.CreateAdd(k, b_.getInt64(1)))),
                    LoadElem(src, off(b_.CreateAdd(k, b_.getInt64(2)))), nullptr, nullptr));
      });
    }
    const Merged m = load();
    Value* var = b_.CreateSelect(b_.CreateFCmpOEQ(m.n, F(0.0f)), F(0.0f), NDiv(m.m2, m.n));
    StoreLaneValues(dst, {m.mean, var});
  }
  // A copy of a repeated GradSums statement: its argument shift (nullptr outside a repeat) and
  // its operands μ and vf.
  struct GradCopy {
    Value *arg_shift, *mu, *vf;
  };
  // The repeat's GradSums statement if the repeat steps two copies at a time (GradSums with
  // copies): its period is per-channel values and then that statement, over contiguous 2-byte
  // rows of whole chunks, in one-vector blocks of 16 lanes whose every channel runs it; else −1.
  // Why: the sums are one 4-cycle fma chain per element and block, more than the rest of the
  // loop needs, and two tiles of the same channels are independent chains. (Other ways to more
  // chains cost more than they gained: 32-channel blocks make BackProp's second sweep stream 32
  // rows from beyond the L2, two copies transposed in registers spilled, and three or four copies
  // stepped together spilled constants and staged more rows per step: 6-14 % slower in the
  // fifty-first session, the step no faster.) Two tiles against one, BN backward chain, bf16,
  // Zen 5 host, three sets of 12 alternating rounds, medians: 128 × 8192 163 → 155, 163 → 157
  // and 174 → 157 µs; 128 × 16384, whose block rows leave the L2 anyway, 349 → 351, 351 → 364
  // and 358 → 368 (minima within 2 %: the VM's noise). fp32 rows, staged, ran slower
  // (241 → 272 µs at 8192): a 4-byte column costs twice the shuffles.
  int PairedGradSums(const ir::Repeat& rp, int L, int max_n) const {
    if (rp.count < 2 || L != W_ || W_ != 16) return -1;
    int sums = -1;
    for (int k = rp.begin; k < rp.begin + rp.period; ++k) {
      const Stmt& t = f_.stmts[k];
      if (t.dead) continue;
      if (sums >= 0 || (t.op != Op::GradSums && !ProducesValue(t.op))) return -1;
      if (t.op == Op::GradSums) sums = k;
    }
    if (sums < 0) return -1;
    const Stmt& t = f_.stmts[sums];
    const ir::TensorRef &x = t.tensors[0], &dy = t.tensors[1];
    const int64_t count = x.pattern.Count(), per_chunk = 2 * W_;
    const bool rows = ContiguousRow(x) && ContiguousRow(dy) && DtypeSize(x.dtype) == 2 && DtypeSize(dy.dtype) == 2;
    return rows && t.channels >= max_n && count >= per_chunk && count % per_chunk == 0 ? sums : -1;
  }
  // One element of the gradient sums (Σdy, Σ(x−μ)·dy·vf, Σ(x−μ)·dy·vf²), semantics.md §5.4.
  std::array<Value*, 3> GradStep(std::array<Value*, 3> sums, Value* x, Value* dy, Value* mu, Value* vf, Value* vf2) {
    Value* d = b_.CreateFSub(x, mu);
    Value* p = b_.CreateFMul(d, dy);
    return {b_.CreateFAdd(sums[0], dy), Fma(p, vf, sums[1]), Fma(p, vf2, sums[2])};
  }
  // GradSums for one statement, or for copies of it in a repeat (PairedGradSums), stepped
  // together from StagedChunks; each copy's element order is kept.
  void GradSums(const Stmt& s, const std::vector<GradCopy>& copies) {
    const ir::TensorRef& x = s.tensors[0];
    const ir::TensorRef& dy = s.tensors[1];
    const ir::TensorRef& dst = s.tensors[2];
    Type* lane_vf = vf_;
    Value* const outer_shift = arg_shift_;
    struct Sums {
      Value* slots[3];
      Value *mu, *vf, *vf2;
    };
    std::vector<Sums> sums;
    for (const GradCopy& c : copies) {
      Value* vf2 = b_.CreateFMul(c.vf, c.vf);
      sums.push_back({{Var(vf_, F(0.0f)), Var(vf_, F(0.0f)), Var(vf_, F(0.0f))}, c.mu, c.vf, vf2});
    }
    auto load = [&](const Sums& c) {
      return std::array<Value*, 3>{Get(c.slots[0], lane_vf), Get(c.slots[1], lane_vf), Get(c.slots[2], lane_vf)};
    };
    auto store = [&](const Sums& c, std::array<Value*, 3> v) {
      for (int i = 0; i < 3; ++i) b_.CreateStore(v[i], c.slots[i]);
    };
    const int64_t count = x.pattern.Count();
    int64_t done;
    if (copies.size() == 1) {
      const Sums& c = sums[0];
      done = TransposedChunks({&x, &dy}, count, [&](Value*, int part, const std::vector<std::vector<Value*>>& cols) {
        const std::array<Value*, 3> all = load(c);
        std::array<Value*, 3> part_sums = {Part(all[0], part), Part(all[1], part), Part(all[2], part)};
        Value *mu_p = Part(c.mu, part), *vf_p = Part(c.vf, part), *vf2_p = Part(c.vf2, part);
        for (size_t j = 0; j < cols[0].size(); ++j)
          part_sums = GradStep(part_sums, cols[0][j], cols[1][j], mu_p, vf_p, vf2_p);
        store(c, {WithPart(all[0], part, part_sums[0]), WithPart(all[1], part, part_sums[1]),
                  WithPart(all[2], part, part_sums[2])});
      });
    } else {
      std::vector<StagedTensor> ts;
      for (const GradCopy& c : copies) {
        ts.push_back({&x, c.arg_shift});
        ts.push_back({&dy, c.arg_shift});
      }
      done = StagedChunks(ts, count, [&](Value*, int, const std::vector<Value*>& xs) {
        for (size_t i = 0; i < sums.size(); ++i)
          store(sums[i], GradStep(load(sums[i]), xs[2 * i], xs[2 * i + 1], sums[i].mu, sums[i].vf, sums[i].vf2));
      });
    }
    for (size_t i = 0; i < copies.size(); ++i) {
      arg_shift_ = copies[i].arg_shift;
      if (done < count) {  // the rest, element by element (gathers)
        auto ox = OffsetFn(x), ody = OffsetFn(dy);
        Loop(b_.getInt64(count - done), [&](Value* j) {
          Value* k = b_.CreateAdd(j, b_.getInt64(done));
          store(sums[i], GradStep(load(sums[i]), LoadElem(x, ox(k)), LoadElem(dy, ody(k)), sums[i].mu,
                                  sums[i].vf, sums[i].vf2));
        });
      }
      const std::array<Value*, 3> v = load(sums[i]);
      StoreLaneValues(dst, {v[0], v[1], v[2]});
    }
    arg_shift_ = outer_shift;
  }
  // Stores indices[k] (32-bit lanes) to element k of every active lane, as FindIndex8 and
  // DveReadIndices write them: UINT16 clamps to 0xFFFF (so "not found", 0xFFFFFFFF, becomes the
  // 16-bit sentinel; found indices are below 16384), other dtypes take the raw bits truncated.
  void StoreIndices(const ir::TensorRef& dst, std::vector<Value*> indices) {
    auto* vt = FixedVectorType::get(RawType(dst.dtype), n_);
    for (size_t k = 0; k < indices.size(); ++k) {
      Value* v = indices[k];
      if (dst.dtype == Dtype::UINT16) v = Call(Intrinsic::umin, {v, ConstantInt::get(vi32_, 0xFFFF)});
      StoreElemRaw(dst, ConstOffset(dst, static_cast<int64_t>(k)), b_.CreateTrunc(v, vt), mask_);
    }
  }
  // kernels FindIndex8 / MatchReplace8 across the block's channels: for each element j in
  // order, the lowest unmatched key equal to it (IEEE equality) records j; MatchReplace8 writes
  // every element, the replacement where it matched; FindIndex8 writes the 8 indices (the
  // sentinel where never found). Both leave the indices in the lanes' idx slots.
  void Find8(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const bool replace = s.flag;
    constexpr uint32_t kNotFound = 0xFFFFFFFFu;
    Type* lane_vi = vi32_;
    std::array<Value*, 8> matched, found;
    for (int k = 0; k < 8; ++k) {
      matched[k] = Var(vi32_, ConstantInt::get(vi32_, 0));
      found[k] = Var(vi32_, ConstantInt::get(vi32_, kNotFound));
    }
    auto off = OffsetFn(src), off_dst = OffsetFn(dst);
    Loop(b_.getInt64(src.pattern.Count()), [&](Value* j) {
      Value* x = LoadElem(src, off(j));
      Value* index = b_.CreateVectorSplat(n_, b_.CreateTrunc(j, i32_));
      Value* taken = ConstantInt::getFalse(VectorType::get(b_.getInt1Ty(), ElementCount::getFixed(n_)));
      for (int k = 0; k < 8; ++k) {
        Value* was = b_.CreateICmpNE(Get(matched[k], lane_vi), ConstantInt::get(vi32_, 0));
        Value* hit = b_.CreateAnd(b_.CreateAnd(b_.CreateNot(was), b_.CreateNot(taken)),
                                  b_.CreateFCmpOEQ(Val(s.operands[k]), x));
        b_.CreateStore(b_.CreateSelect(hit, index, Get(found[k], lane_vi)), found[k]);
        b_.CreateStore(b_.CreateSExt(b_.CreateOr(was, hit), vi32_), matched[k]);
        taken = b_.CreateOr(taken, hit);
      }
      if (replace) StoreElem(dst, off_dst(j), b_.CreateSelect(taken, Val(s.operands[8]), x));
    });
    std::vector<Value*> indices;
    for (int k = 0; k < 8; ++k) {
      indices.push_back(Get(found[k], lane_vi));
      b_.CreateMaskedScatter(indices.back(), LanePtrs(ir::Idx(k)), Align(4), mask_);
    }
    if (!replace) StoreIndices(dst, indices);
  }
  // kernels Max8 across the block's channels: per channel the 8 largest so far, ascending, as
  // 32-bit order keys (NaN < −inf < … < −0 < +0 < … < +inf; the keys of equal values are equal,
  // so the result does not depend on which of two equal values is kept). Each element enters by
  // a compare-exchange pass from the top; the smallest of the nine drops out.
  void Max8(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    auto k = [&](Type* vt, uint32_t c) { return ConstantInt::get(vt, c); };
    auto key = [&](Value* x) {
      auto* vt = VectorType::getInteger(cast<VectorType>(x->getType()));
      Value* bits = b_.CreateBitCast(x, vt);
      Value* ordered = b_.CreateSelect(b_.CreateICmpSLT(bits, k(vt, 0)), b_.CreateXor(bits, k(vt, 0x7FFFFFFFu)), bits);
      return b_.CreateSelect(IsNaN(x), Reg(k(vt, 0x80000000u)), ordered);
    };
    Type* lane_vi = vi32_;
    std::array<Value*, 8> slots;
    for (Value*& slot : slots) slot = Var(vi32_, ConstantInt::get(vi32_, 0x80000000u));  // NaN keys
    auto insert = [&](std::array<Value*, 8> t, Value* x) {
      Value* carry = key(x);
      for (int i = 7; i >= 0; --i) {
        Value* hi = Call(Intrinsic::smax, {t[i], carry});
        carry = Call(Intrinsic::smin, {t[i], carry});
        t[i] = hi;
      }
      return t;
    };
    auto load = [&] {
      std::array<Value*, 8> t;
      for (int i = 0; i < 8; ++i) t[i] = Get(slots[i], lane_vi);
      return t;
    };
    auto store = [&](const std::array<Value*, 8>& t) {
      for (int i = 0; i < 8; ++i) b_.CreateStore(t[i], slots[i]);
    };
    const int64_t count = src.pattern.Count();
    const int64_t done =
        TransposedChunks({&src}, count, [&](Value*, int part, const std::vector<std::vector<Value*>>& cols) {
          const std::array<Value*, 8> all = load();
          std::array<Value*, 8> t;
          for (int i = 0; i < 8; ++i) t[i] = Part(all[i], part);
          for (Value* col : cols[0]) t = insert(t, col);
          std::array<Value*, 8> merged;
          for (int i = 0; i < 8; ++i) merged[i] = WithPart(all[i], part, t[i]);
          store(merged);
        });
    if (done < count) {
      auto off = OffsetFn(src);
      Loop(b_.getInt64(count - done), [&](Value* j) {
        store(insert(load(), LoadElem(src, off(b_.CreateAdd(j, b_.getInt64(done))))));
      });
    }
    std::vector<Value*> out;
    for (Value* t : load()) {  // back from keys to fp32 bits (a NaN key gives a NaN; stores canonicalise)
      Value* bits = b_.CreateSelect(b_.CreateICmpSLT(t, k(vi32_, 0)), b_.CreateXor(t, k(vi32_, 0x7FFFFFFFu)), t);
      out.push_back(b_.CreateBitCast(bits, vf_));
    }
    StoreLaneValues(dst, out);
  }
  Value* BackPropValue(const Stmt& s, Value* x, Value* dy, Value* lane) {
    auto get = [&](int i) { return lane ? LaneScalar(Val(s.operands[i]), lane) : Val(s.operands[i]); };
    Value *n = get(0), *mean = get(1), *a = get(2), *bb = get(3), *c = get(4);
    Value* d = b_.CreateFSub(x, mean);
    Value* u = Fma(d, c, bb);
    Value* v = Fma(dy, n, b_.CreateFNeg(u));
    return b_.CreateFMul(v, a);
  }
  // The value one element-wise statement computes from its sources (lane: per-lane scalars).
  Value* ElementValue(const Stmt& s, const std::vector<Value*>& srcs, Value* lane) {
    auto scalar = [&](int i) { return lane ? LaneScalar(Val(s.operands[i]), lane) : Val(s.operands[i]); };
    switch (s.op) {
      case Op::BackProp: return BackPropValue(s, srcs[0], srcs[1], lane);
      case Op::Reciprocal: return NRecip(srcs[0]);
      // Element values go to a store (Narrow canonicalises NaNs), so the last stage's NaNs stay
      // as they come; the first stage's too unless the second sees their bits.
      case Op::TensorTensor: return Arith(s.alu0, srcs[0], srcs[1], false);
      default: {  // TensorScalar
        if (s.flag) return NRsqrt(srcs[0]);
        const bool second_reversed = (s.reverse & 2) != 0;
        Value* first = Stage(s.alu0, srcs[0], scalar(0), s.reverse & 1, SeesNaNBits(s.alu1, second_reversed));
        return Stage(s.alu1, first, scalar(1), second_reversed, false);
      }
    }
  }
  void BackProp(const Stmt& s) { Elementwise(s); }
  // An element-wise chain (ir FuseElementwiseChains) in one row loop: each statement's sources
  // are loaded or forwarded from an earlier one's result, as stored (narrowed, then widened).
  // A single row statement is a chain of one.
  // When every tensor of the chain has 2-byte elements, chunks are 2W elements: one full-width
  // load unpacked in-lane into two W-lane halves, and one store packed back in-lane (the unpack
  // and pack orders cancel, and element-wise work does not care which element is where). That
  // replaces a cross-lane zero-extend per load and a cross-lane narrowing per store.
  void FusedRows(const std::vector<int>& chain) {
    const Stmt& first = f_.stmts[chain[0]];
    const int64_t count = first.tensors.back().pattern.Count();
    // One chunk, as `halves` W-lane vectors per tensor (1, or 2 for a paired chunk).
    auto chunk = [&](Value* lane, Value* elem, Value* tail, int halves) {
      std::vector<std::vector<Value*>> results(chain.size());
      for (size_t c = 0; c < chain.size(); ++c) {
        const Stmt& s = f_.stmts[chain[c]];
        std::vector<std::vector<Value*>> srcs(static_cast<size_t>(halves));
        for (size_t t = 0; t + 1 < s.tensors.size(); ++t) {
          const ir::ValueId from = t < s.forward.size() ? s.forward[t] : ir::kNoValue;
          const ir::TensorRef& ref = s.tensors[t];
          if (from < 0) {
            const std::vector<Value*> v =
                halves == 1 ? std::vector<Value*>{LoadRow(ref, lane, elem, tail)} : LoadPairedRow(ref, lane, elem);
            for (int h = 0; h < halves; ++h) srcs[h].push_back(v[h]);
            continue;
          }
          const size_t producer = static_cast<size_t>(std::find(chain.begin(), chain.end(), from) - chain.begin());
          for (int h = 0; h < halves; ++h) srcs[h].push_back(Widen(ref.dtype, Narrow(ref.dtype, results[producer][h])));
        }
        for (int h = 0; h < halves; ++h) results[c].push_back(ElementValue(s, srcs[h], lane));
        if (s.dead_store) continue;
        if (halves == 1) StoreRow(s.tensors.back(), lane, elem, results[c][0], tail);
        else StorePairedRow(s.tensors.back(), lane, elem, results[c], s.op == Op::BackProp);
      }
    };
    bool two_byte = W_ >= 4 && count >= 2 * W_;
    for (int c : chain)
      for (const ir::TensorRef& t : f_.stmts[c].tensors) two_byte = two_byte && DtypeSize(t.dtype) == 2;
    std::function<void(Value*, Value*)> paired;
    if (two_byte) paired = [&](Value* lane, Value* elem) { chunk(lane, elem, nullptr, 2); };
    RowLoop(count, [&](Value* lane, Value* elem, Value* tail) { chunk(lane, elem, tail, 1); }, paired);
  }
  // 2W 2-byte elements of a row from `elem`, widened as two W-lane halves: per 128-bit block,
  // its low four elements (unpack low with zeros) and its high four (unpack high).
  std::vector<Value*> LoadPairedRow(const ir::TensorRef& t, Value* lane, Value* elem) {
    auto* v2 = FixedVectorType::get(i16_, 2 * W_);
    Value* raw = b_.CreateAlignedLoad(v2, RowPtr(t, lane, elem), Align(2));
    std::vector<Value*> halves;
    for (int h = 0; h < 2; ++h) {
      std::vector<int> mask;  // word i of each dword: element 8q + 4h + i, then a zero word
      for (int q = 0; q < 2 * W_ / 8; ++q)
        for (int i = 0; i < 4; ++i) mask.push_back(8 * q + 4 * h + i), mask.push_back(2 * W_);
      Value* dwords = b_.CreateBitCast(b_.CreateShuffleVector(raw, Constant::getNullValue(v2), mask), vi32_);
      halves.push_back(Widen(t.dtype, b_.CreateTrunc(dwords, FixedVectorType::get(i16_, W_))));
    }
    return halves;
  }
  // The inverse of LoadPairedRow: the halves narrowed and packed back in-lane, one store.
  // ties_rare: the values come from full-precision fp32 arithmetic (BackProp's fp32
  // coefficients), so a bf16 tie is about one element in 2^16 (PairedBf16).
  void StorePairedRow(const ir::TensorRef& t, Value* lane, Value* elem, const std::vector<Value*>& halves,
                      bool ties_rare) {
    auto exact = [&] {
      return PackWords(b_.CreateZExt(Narrow(t.dtype, halves[0]), vi32_), b_.CreateZExt(Narrow(t.dtype, halves[1]), vi32_), 0);
    };
    Value* packed = t.dtype == Dtype::BFLOAT16 ? PairedBf16(halves[0], halves[1], exact, ties_rare) : exact();
    b_.CreateAlignedStore(packed, RowPtr(t, lane, elem), Align(2));
  }
  // Word `word` (0 low, 1 high) of each dword of a and b (i32 vectors of W lanes), packed in-lane
  // as StorePairedRow stores them: per 128-bit block q, a's dwords 4q..4q+3, then b's.
  Value* PackWords(Value* a, Value* b, int word) {
    auto* v2 = FixedVectorType::get(i16_, 2 * W_);
    std::vector<int> mask;
    for (int q = 0; q < 2 * W_ / 8; ++q) {
      for (int i = 0; i < 4; ++i) mask.push_back(2 * (4 * q + i) + word);
      for (int i = 0; i < 4; ++i) mask.push_back(2 * W_ + 2 * (4 * q + i) + word);
    }
    return b_.CreateShuffleVector(b_.CreateBitCast(a, v2), b_.CreateBitCast(b, v2), mask);
  }
  // A paired chunk's bf16 store bits. Round to nearest even on the fp32 bit patterns, leaving
  // the result in the high word, which the pack picks (no shift back):
  //   y = bits + 0x8000 rounds half up, which is round to nearest even except at a tie, the
  //   only case that leaves y's low word zero; there clearing bit 16 rounds back to even
  //   (H even: H + 1 → H; H odd: H + 1 is even already).
  // The same bits as Narrow's (bits + 0x7FFF + lsb) >> 16 for every non-NaN value, with no
  // shifts (they share two pipes with the subtractions; a BackProp loop in isolation went from
  // 9.2 to 8.0 cycles per 32 elements). NaNs, rare, need the canonical NaN: one unordered
  // compare of the two halves finds any, and then the exact per-lane path (`exact`) runs.
  // With ties_rare the tie fix-up leaves the fast path too: the low words are packed like the
  // high ones and one word test sends a chunk with a tie to `exact` (7.3 instead of 8.0 cycles
  // in the same loop). Not for values that ties are common in: a sum of two bf16 values has at
  // most one bit below bf16's precision, so half of them are ties, and a bf16 product one in
  // 256; such chunks would take the branch, unpredictably. Measured in place and slower (bf16
  // backward chain at 128 × 8192, forty-eighth session): the tie test by a vptestnmd of each
  // half's low words (158 → 165 µs median), and AVX512-BF16's vcvtne2ps2bf16 with vfpclassps
  // guards for NaNs and subnormals, which it takes as zero (156 → 184 µs).
  Value* PairedBf16(Value* lo, Value* hi, const std::function<Value*()>& exact, bool ties_rare) {
    auto k = [&](uint32_t c) { return ConstantInt::get(vi32_, c); };
    Value* y_lo = b_.CreateAdd(b_.CreateBitCast(lo, vi32_), k(0x8000));
    Value* y_hi = b_.CreateAdd(b_.CreateBitCast(hi, vi32_), k(0x8000));
    Value* nan_lanes = b_.CreateFCmpUNO(lo, hi);
    if (ties_rare) {
      Value* low_words = PackWords(y_lo, y_hi, 0);
      Value* tie_lanes = b_.CreateICmpEQ(low_words, Constant::getNullValue(low_words->getType()));
      return FastUnless(AnyLane({nan_lanes, tie_lanes}), PackWords(y_lo, y_hi, 1), exact);
    }
    Value* needs_exact = AnyLane({nan_lanes});
    auto to_even = [&](Value* y) {
      Value* not_tie = b_.CreateAdd(b_.CreateAnd(y, k(0xFFFF)), k(0xFFFF));  // bit 16: low word of y non-zero
      return b_.CreateAnd(y, b_.CreateOr(not_tie, k(0xFFFEFFFF)));
    };
    return FastUnless(needs_exact, PackWords(to_even(y_lo), to_even(y_hi), 1), exact);
  }
  void Elementwise(const Stmt& s) {
    const ir::TensorRef& dst = s.tensors.back();
    const int64_t count = dst.pattern.Count();
    const size_t nsrc = s.tensors.size() - 1;
    if (IsRowStatement(s)) {  // contiguous rows: lane by lane, W elements at a time, no gathers
      FusedRows({static_cast<int>(&s - f_.stmts.data())});
      return;
    }
    std::vector<std::function<Value*(Value*)>> offs;
    for (const ir::TensorRef& t : s.tensors) offs.push_back(OffsetFn(t));
    Loop(b_.getInt64(count), [&](Value* k) {
      std::vector<Value*> srcs;
      for (size_t i = 0; i < nsrc; ++i) srcs.push_back(LoadElem(s.tensors[i], offs[i](k)));
      StoreElem(dst, offs.back()(k), ElementValue(s, srcs, nullptr));
    });
  }
  // numerics CastRaw lane-wise: integers to integers directly (the exact value, negated if asked,
  // saturated into the target); integers to floats through fp32; floats through fp32.
  Value* CastRaw(Dtype from, Dtype to, Value* raw, bool negate) {
    const int n = Lanes(raw);
    if (IsIntDtype(from)) {
      auto* vi64 = FixedVectorType::get(i64_, n);
      Value* v = IsSignedIntDtype(from) ? b_.CreateSExt(raw, vi64) : b_.CreateZExt(raw, vi64);
      if (negate) v = b_.CreateSub(Constant::getNullValue(vi64), v);
      if (!IsIntDtype(to)) return Narrow(to, b_.CreateSIToFP(v, FixedVectorType::get(f32_, n)));
      return SaturateInto(to, v);
    }
    Value* f = Widen(from, raw);
    return Narrow(to, negate ? b_.CreateFNeg(f) : f);
  }
  // Exact signed 64-bit lanes clamped into [lo, hi] (the bounds as registers, see Reg).
  Value* ClampI64(Value* v, int64_t lo, int64_t hi) {
    auto* vt = v->getType();
    Constant* klo = ConstantInt::get(vt, static_cast<uint64_t>(lo));
    Constant* khi = ConstantInt::get(vt, static_cast<uint64_t>(hi));
    v = b_.CreateSelect(b_.CreateICmpSLT(v, klo), Reg(klo), v);
    return b_.CreateSelect(b_.CreateICmpSGT(v, khi), Reg(khi), v);
  }
  // numerics StoreFromInt lane-wise for an integer dtype: exact 64-bit values saturated into
  // `to`'s range, as its raw elements.
  Value* SaturateInto(Dtype to, Value* v) {
    const int bits = 8 * DtypeSize(to);
    const int64_t lo = IsSignedIntDtype(to) ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = IsSignedIntDtype(to) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    return b_.CreateTrunc(ClampI64(v, lo, hi), FixedVectorType::get(RawType(to), Lanes(v)));
  }
  // An element's raw bits zero- or sign-extended to 32 (semantics.md §4.2).
  Value* Extend32(Dtype d, Value* raw) {
    auto* vi32 = FixedVectorType::get(i32_, Lanes(raw));
    if (DtypeSize(d) == 4) return raw;
    return IsSignedIntDtype(d) ? b_.CreateSExt(raw, vi32) : b_.CreateZExt(raw, vi32);
  }
  // kernels/alu.cc IntegerOp then numerics StoreFromInt, lane-wise: the raw sources extended to
  // 32 bits, then exactly to 64 with the op's signedness; the result reduced to 32 bits (wrapped,
  // or clamped under the machine's `saturate` table set, read at run time), then saturated into
  // the destination dtype. Returns the destination's raw elements.
  Value* IntegerBand(const Stmt& s, Value* a_raw, Value* b_raw) {
    const int n = Lanes(a_raw);
    auto* v64 = FixedVectorType::get(i64_, n);
    auto* v32 = FixedVectorType::get(i32_, n);
    const bool sgn = s.flag;
    auto wide = [&](Dtype d, Value* raw) {
      Value* x = Extend32(d, raw);
      return sgn ? b_.CreateSExt(x, v64) : b_.CreateZExt(x, v64);
    };
    Value* a = wide(s.tensors[0].dtype, a_raw);
    Value* b = wide(s.tensors[1].dtype, b_raw);
    auto k = [&](int64_t c) { return ConstantInt::get(v64, static_cast<uint64_t>(c)); };
    auto kr = [&](int64_t c) { return Reg(k(c)); };  // a select's constant operand (see Reg)
    const int64_t lo32 = sgn ? std::numeric_limits<int32_t>::min() : 0;
    const int64_t hi32 = sgn ? std::numeric_limits<int32_t>::max() : std::numeric_limits<uint32_t>::max();
    auto wrap = [&](Value* v) {
      Value* t = b_.CreateTrunc(v, v32);
      return sgn ? b_.CreateSExt(t, v64) : b_.CreateZExt(t, v64);
    };
    Value* saturate = b_.CreateVectorSplat(
        n, b_.CreateICmpNE(b_.CreateLoad(i8_, b_.CreateGEP(i8_, state_, b_.getInt64(kSaturateOffset))), b_.getInt8(0)));
    auto to32 = [&](Value* v) { return b_.CreateSelect(saturate, ClampI64(v, lo32, hi32), wrap(v)); };
    auto abs = [&](Value* v) { return Call(Intrinsic::abs, {v, b_.getFalse()}); };
    auto flag = [&](Value* c) { return b_.CreateZExt(c, v64); };
    auto divisor_zero = [&] { return b_.CreateICmpEQ(b, k(0)); };
    auto safe_divisor = [&] { return b_.CreateSelect(divisor_zero(), kr(1), b); };
    Value* r;
    switch (static_cast<AluOp>(s.alu0)) {
      case AluOp::ADD_INT: r = to32(b_.CreateAdd(a, b)); break;
      case AluOp::SUBTRACT_INT: r = to32(b_.CreateSub(a, b)); break;
      case AluOp::MULT_INT:
      case AluOp::MULT_UINT: {
        // Signed products fit in 63 bits; unsigned ones in 64 (compared unsigned).
        Value* p = b_.CreateMul(a, b);
        Value* clamped = sgn ? ClampI64(p, lo32, hi32) : b_.CreateSelect(b_.CreateICmpUGT(p, k(hi32)), kr(hi32), p);
        r = b_.CreateSelect(saturate, clamped, wrap(p));
        break;
      }
      case AluOp::DIVIDE_INT:
      case AluOp::DIVIDE_UINT: {  // by zero → 0; INT_MIN / −1 → INT_MIN
        Value* q = b_.CreateSDiv(a, safe_divisor());
        if (sgn) q = b_.CreateSelect(b_.CreateAnd(b_.CreateICmpEQ(a, k(lo32)), b_.CreateICmpEQ(b, k(-1))), kr(lo32), q);
        r = b_.CreateSelect(divisor_zero(), kr(0), q);
        break;
      }
      case AluOp::MOD:
      case AluOp::MOD_INT:
      case AluOp::MOD_UINT:  // by zero → 0 (INT_MIN % −1 is 0 in 64 bits)
        r = b_.CreateSelect(divisor_zero(), kr(0), b_.CreateSRem(a, safe_divisor()));
        break;
      case AluOp::IS_EQUAL_INT: r = flag(b_.CreateICmpEQ(a, b)); break;
      case AluOp::IS_NE_INT: r = flag(b_.CreateICmpNE(a, b)); break;
      case AluOp::ABS_MAX_INT: r = wrap(Call(Intrinsic::smax, {abs(a), abs(b)})); break;
      case AluOp::ABS_MIN_INT: r = wrap(Call(Intrinsic::smin, {abs(a), abs(b)})); break;
      case AluOp::ABS_DIFF_INT: r = wrap(abs(b_.CreateSub(a, b))); break;
      case AluOp::ABS_VALUE_INT: r = wrap(abs(a)); break;
      case AluOp::MAX_INT:
      case AluOp::MAX_UINT: r = Call(Intrinsic::smax, {a, b}); break;  // exact 64-bit values
      case AluOp::MIN_INT:
      case AluOp::MIN_UINT: r = Call(Intrinsic::smin, {a, b}); break;
      case AluOp::IS_GT_INT:
      case AluOp::IS_GT_UINT: r = flag(b_.CreateICmpSGT(a, b)); break;
      case AluOp::IS_GE_INT:
      case AluOp::IS_GE_UINT: r = flag(b_.CreateICmpSGE(a, b)); break;
      case AluOp::IS_LE_INT:
      case AluOp::IS_LE_UINT: r = flag(b_.CreateICmpSLE(a, b)); break;
      case AluOp::IS_LT_INT:
      case AluOp::IS_LT_UINT: r = flag(b_.CreateICmpSLT(a, b)); break;
      default: r = k(0); break;  // AMAX/AMIN: accepted by no DVE op (validation rejects them)
    }
    return SaturateInto(s.tensors.back().dtype, r);
  }
  // kernels/alu.h Bitvec, lane-wise on i32 vectors (shift amounts modulo 32).
  Value* Bits(uint8_t op, Value* a, Value* b) {
    auto* vt = cast<FixedVectorType>(a->getType());
    Value* sh = b_.CreateAnd(b, ConstantInt::get(vt, 31));
    switch (static_cast<AluOp>(op)) {
      case AluOp::BITWISE_NOT: return b_.CreateNot(a);
      case AluOp::ARITH_SHIFT_LEFT: case AluOp::LOGICAL_SHIFT_LEFT: return b_.CreateShl(a, sh);
      case AluOp::ARITH_SHIFT_RIGHT: return b_.CreateAShr(a, sh);
      case AluOp::LOGICAL_SHIFT_RIGHT: return b_.CreateLShr(a, sh);
      case AluOp::BITWISE_AND: return b_.CreateAnd(a, b);
      case AluOp::BITWISE_OR: return b_.CreateOr(a, b);
      case AluOp::BITWISE_XOR: return b_.CreateXor(a, b);
      default: return a;  // BYPASS (the lowering compiles no other op)
    }
  }
  Value* BitsStage(uint8_t op, Value* entering, Value* scalar, bool reversed) {
    if (alu::IsUnary(op)) return Bits(op, entering, entering);  // the other operand is ignored
    return reversed ? Bits(op, scalar, entering) : Bits(op, entering, scalar);
  }
  // Statements on raw bits, element-wise (Cast, Memset, bitvec): rows when contiguous, else
  // gathers and scatters. `srcs` are the sources' raw elements.
  void RawElementwise(const Stmt& s) {
    const ir::TensorRef& dst = s.tensors.back();
    auto* raw_dst = FixedVectorType::get(RawType(dst.dtype), n_);
    auto value = [&](const std::vector<Value*>& srcs, Value* lane) -> Value* {
      auto scalar = [&](int i) {  // a per-channel 32-bit scalar (f32 bits in the IR's values)
        Value* v = lane ? LaneScalar(Val(s.operands[i]), lane) : Val(s.operands[i]);
        return b_.CreateBitCast(v, vi32_);
      };
      switch (s.op) {
        case Op::Cast: return CastRaw(s.tensors[0].dtype, dst.dtype, srcs[0], s.flag);
        case Op::Predicated: {  // the data element, cast or as raw bits of the destination's width
          const Dtype from = s.tensors[1].dtype;
          if (s.flag) return CastRaw(from, dst.dtype, srcs[1], false);
          return b_.CreateZExtOrTrunc(srcs[1], raw_dst);
        }
        case Op::Memset: return b_.CreateVectorSplat(n_, b_.CreateTrunc(ArgWord(s.arg), RawType(dst.dtype)));
        case Op::BitsTensor:
          return b_.CreateTrunc(Bits(s.alu0, Extend32(s.tensors[0].dtype, srcs[0]), Extend32(s.tensors[1].dtype, srcs[1])),
                                raw_dst);
        case Op::IntTensor: return IntegerBand(s, srcs[0], srcs[1]);
        default: {  // BitsScalar
          Value* v = BitsStage(s.alu0, Extend32(s.tensors[0].dtype, srcs[0]), scalar(0), s.reverse & 1);
          return b_.CreateTrunc(BitsStage(s.alu1, v, scalar(1), (s.reverse & 2) != 0), raw_dst);
        }
      }
    };
    const size_t nsrc = s.tensors.size() - 1;
    const bool rows = IsRowStatement(s);
    // Predicated: only where the predicate's raw bits are nonzero (the others keep their bytes).
    auto predicate = [&](const std::vector<Value*>& srcs) -> Value* {
      if (s.op != Op::Predicated) return nullptr;
      return b_.CreateICmpNE(srcs[0], Constant::getNullValue(srcs[0]->getType()));
    };
    if (rows) {
      RowLoop(dst.pattern.Count(), [&](Value* lane, Value* elem, Value* tail) {
        raw_dst = FixedVectorType::get(RawType(dst.dtype), n_);
        std::vector<Value*> srcs;
        for (size_t i = 0; i < nsrc; ++i) srcs.push_back(LoadRowRaw(s.tensors[i], lane, elem, tail));
        Value* mask = tail;
        if (Value* p = predicate(srcs)) mask = tail ? b_.CreateAnd(tail, p) : p;
        StoreRowRaw(dst, lane, elem, value(srcs, lane), mask);
      });
      return;
    }
    std::vector<std::function<Value*(Value*)>> offs;
    for (const ir::TensorRef& t : s.tensors) offs.push_back(OffsetFn(t));
    Loop(b_.getInt64(dst.pattern.Count()), [&](Value* k) {
      std::vector<Value*> srcs;
      for (size_t i = 0; i < nsrc; ++i) {
        const ir::TensorRef& t = s.tensors[i];
        srcs.push_back(LoadElemRaw(t, offs[i](k)));
      }
      Value* mask = mask_;
      if (Value* p = predicate(srcs)) mask = b_.CreateAnd(mask_, p);
      StoreElemRaw(dst, offs.back()(k), value(srcs, nullptr), mask);
    });
  }
  // ImmLd (semantics.md §6.2): every active lane's imm[i] := element i of src, as fp32 bits
  // (arith, widened and not canonicalised: lane state is not a store) or its raw bits
  // zero-extended (bitvec); then the slot count and the kind.
  void ImmLoad(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const int64_t count = src.pattern.Count();
    for (int64_t i = 0; i < count; ++i) {
      Value* off = ConstOffset(src, i);
      Value* bits = s.flag ? b_.CreateZExt(LoadElemRaw(src, off), vi32_) : b_.CreateBitCast(LoadElem(src, off), vi32_);
      b_.CreateMaskedScatter(bits, LanePtrs(ir::Imm(static_cast<int>(i))), Align(4), mask_);
    }
    b_.CreateMaskedScatter(Splat(b_.getInt32(static_cast<uint32_t>(count))), LaneMemberPtrs(kImmCountOffset), Align(4), mask_);
    b_.CreateMaskedScatter(Splat(b_.getInt8(s.flag ? 1 : 0)), LaneMemberPtrs(kImmBitvecOffset), Align(1), mask_);
  }
  // PtrMulti (semantics.md §6.2): element k of src with scalar imm[k / per_w] (operand w),
  // reversed when `reverse` is Both, to element k of dst; one loop per scalar.
  void PtrMulti(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const int64_t per_w = s.element, count = dst.pattern.Count();
    auto os = OffsetFn(src), od = OffsetFn(dst);
    for (int64_t w = 0; per_w > 0 && w * per_w < count; ++w) {
      Value* scalar = Val(s.operands[static_cast<size_t>(w)]);
      Loop(b_.getInt64(per_w), [&](Value* j) {
        Value* k = b_.CreateAdd(b_.getInt64(w * per_w), j);
        if (!s.flag) {
          StoreElem(dst, od(k), Stage(s.alu0, LoadElem(src, os(k)), scalar, s.reverse != 0));
          return;
        }
        Value* v = BitsStage(s.alu0, Extend32(src.dtype, LoadElemRaw(src, os(k))), b_.CreateBitCast(scalar, vi32_),
                             s.reverse != 0);
        StoreElemRaw(dst, od(k), b_.CreateTrunc(v, FixedVectorType::get(RawType(dst.dtype), n_)), mask_);
      });
    }
  }
  void Copy(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const int es = DtypeSize(src.dtype);
    Type* et = RawType(src.dtype);
    auto os = OffsetFn(src), od = OffsetFn(dst);
    Loop(b_.getInt64(src.pattern.Count()), [&](Value* k) {
      Value* raw = LoadElemRaw(src, os(k));
      if (s.flag) {
        auto* vt = FixedVectorType::get(et, n_);
        raw = IsFloatDtype(src.dtype)
                  ? b_.CreateXor(raw, ConstantInt::get(vt, APInt::getSignMask(8 * es)))
                  : b_.CreateSub(Constant::getNullValue(vt), raw);
      }
      b_.CreateMaskedScatter(raw, ElementPtrs(dst, od(k)), Align(es), mask_);  // src's element bytes
    });
  }

  const ir::Function& f_;
  Module& m_;
  LLVMContext& ctx_;
  IRBuilder<> b_;
  // Hardware vectors of channels per block in a channel-major region with Welford statistics
  // (ChannelMajorRegion; other regions use one); `narrow` when every statistic reads 2-byte
  // data. A block's vectors step together, two Welford chains each (a mean and an M2 register
  // per chain). With AVX-512's 32 registers: one vector made bf16 statistics at 128 × 8192
  // about 25 % slower than two; four for 2-byte data, eight chains in flight, with a bf16
  // chunk's 16 pair iterations leaving room for four parts' staging (benchmark medians at
  // 128 × 8192 bf16, five alternating runs: 1.74-2.24 against 2.01-2.42 times the roof;
  // 128 × 512: 2.74-3.26 against 3.11-3.17); not four for fp32, 69-70 → 73-77 µs at
  // 128 × 8192 in a harness (half as many pair iterations to hide four parts' staging in).
  // With AVX2's (and SSE's) 16 registers, eight chains' state alone fills the register file:
  // their M2s go through the stack every step. There the spills cost 2-byte data more than
  // the chains gain, and fp32 less, so the two swap (Zen 3 host, fifty-fifth session,
  // alternating runs, fastest and median alike, at 128 × 512, 8192 and 16384: bf16 two vectors
  // against four 10-14 % faster through StagedPairChunks, 25 runs, and 4-8 % through
  // StagedChunks, 40 runs; fp32 four against two 4-7 % faster, 40 runs).
  int WelfordVectorsPerBlock(bool narrow) const {
    if (W_ == 16) return narrow ? 4 : 2;  // AVX-512: 32 vector registers
    return narrow ? 2 : 4;                // AVX2, SSE: 16
  }
  // Emitted statements of a region above which its argument words are loaded per block (the
  // BN backward chain's region emits 37 at 128 × 8192 and 53 at 16384).
  static constexpr int kBlockArgsMinStatements = 256;
  // How far ahead of the chunk it stages (or, in TransposedChunks, loads) a recurrence loop
  // prefetches each row, in chunks (PrefetchRow). For StagedChunks: a block of
  // four parts streams 64 rows at once, more than the hardware prefetchers of the Xeon host
  // follow: bf16 statistics at 128 × 16384 (4 MiB, beyond its 2 MiB L2) ran at 13.6 GB/s
  // (2.15× the roof), with one chunk ahead at 22 GB/s (1.31×); 128 × 8192 96 → 78 µs. Two chunks
  // ahead was as good, four and eight worse. (On the Zen 5 host the sixth session measured
  // 1-4 chunks ahead within the noise. The sixtieth, with the rows in memory (`--cold`): two
  // ahead made the bf16 workloads 6-9 % faster, but the warm bf16 backward chain 2-5 % slower;
  // an extra prefetcht1 four ahead helped cold and slowed every BN workload warm, fp32
  // statistics by 20-35 %.)
  static constexpr int kStagePrefetchChunks = 1;
  // ... when the block streams at least this many bytes through the loop (128 × 512 statistics
  // and backward chains stream 32-64 KiB a block). From 256 KiB up before: on the Xeon host
  // (tenth session) the 128 × 512 statistics ran 5.7 → 6.5-7.0 µs (fp32) and 5.0 → 5.4-5.6 µs
  // (bf16) with them, rows the previous run had left in the caches. On the Zen 5 host
  // (fifty-ninth session, three alternating rounds) they cost nothing there (bf16 2.47-2.80 →
  // 2.47-2.52 µs, fp32 3.22-3.55 → 2.99-3.04) and paid with the rows in memory (`dvejit bench
  // --cold`): bf16 statistics 15.2-17.3 → 8.8 µs, the bf16 backward chain 28.8-29.7 → 23.9-24.1.
  // 8-lane code there (two rounds): the same warm; cold the same or faster (fp32 statistics
  // 16.8-17.7 → 15.8-15.9 µs).
  static constexpr int64_t kStagePrefetchMinBytes = 32 << 10;
  const int W_;  // f32 lanes of a hardware vector
  const bool byte_permute_;  // vpermi2b available (CodegenTarget)
  const bool fma_unit_;      // FMA3 or FMA4 available (CodegenTarget)
  int n_ = 0;    // lanes of the vectors being emitted (SetWidth)
  Type *f32_, *i8_, *i16_, *i32_, *i64_;
  PointerType* ptr_;
  FixedVectorType *vf_, *vi32_, *vi64_;
  std::string symbol_;         // the stream function's
  int outlined_regions_ = 0;   // OutlinedBlocks functions so far
  Function* fn_ = nullptr;     // the function being emitted
  BasicBlock* entry_ = nullptr;
  Value *args_ = nullptr, *state_ = nullptr, *rt_ = nullptr, *ctxp_ = nullptr;
  Value* block_args_ = nullptr;  // args_ as loaded from inside a channel-major region's block loop
  Value *lanes_ = nullptr, *mask_ = nullptr, *cb_ = nullptr;
  int channels_ = 0;
  bool full_blocks_ = false;  // every lane of the current block is active for the statement
  Value* arg_shift_ = nullptr;  // i64 slot offset of the current repeat copy, if any
  Value* row_lane_ = nullptr;   // the lane of a lane-major repeat (RowLoop)
  int64_t repeat_copies_ = 1;   // copies of the repeat being emitted (1 outside one)
  bool no_transpose_plan_ = false;
  std::vector<Value*> values_;
  GlobalVariable* recip8_ = nullptr;
  std::unordered_map<Constant*, Value*> regs_;  // Reg()
  GlobalVariable* rsq_ = nullptr;
};

}  // namespace

// Without FMA3 or FMA4, LLVM lowers llvm.fma to a call of libm's fmaf per lane: 4-lane code then
// took 0.5-0.6 times the interpreter's time (bn_stats 128 × 512 fp32: 293 µs against 478
// interpreted; 10 µs in 8-lane code with FMA), and 202 µs emitted as here (bn_backward
// 128 × 8192 fp32 8.1 → 6.8 ms; fifty-sixth session, docs/benchmarks.md). Here: the product of
// two floats is exact in double (24 + 24 significant bits ≤ 53), TwoSum gives the sum rounded and
// its exact error, and the sum rounded to odd (the truncated value with its last bit set when the
// error is not zero) then rounded to float is fma's correctly rounded result, since double
// carries more than two bits beyond float's 24 (Boldo and Melquiond, "When double rounding is
// odd", 2005). Float operands keep every intermediate finite, so only an infinite or NaN
// operand gives a non-finite sum, whose error is NaN and changes nothing. Zeros: an exact zero
// sum has fma's sign (the same IEEE rule in double), and its error is zero.
llvm::Value* EmitFmaWithoutFmaUnit(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  Type* type = x->getType();
  auto like = [&](Type* scalar) -> Type* {
    if (auto* v = dyn_cast<FixedVectorType>(type)) return FixedVectorType::get(scalar, v->getNumElements());
    return scalar;
  };
  Type* wide = like(b.getDoubleTy());
  Type* bits_type = like(b.getInt64Ty());
  Value* product = b.CreateFMul(b.CreateFPExt(x, wide), b.CreateFPExt(y, wide));  // exact
  Value* addend = b.CreateFPExt(z, wide);
  Value* sum = b.CreateFAdd(product, addend);
  Value* addend_part = b.CreateFSub(sum, product);  // TwoSum (Knuth): sum + error = product + addend
  Value* error = b.CreateFAdd(b.CreateFSub(product, b.CreateFSub(sum, addend_part)),
                              b.CreateFSub(addend, addend_part));
  Value* bits = b.CreateBitCast(sum, bits_type);
  Value* one = ConstantInt::get(bits_type, 1);
  // Truncated toward zero: the sum itself when the error has its sign (the exact value lies
  // beyond it), else the next double toward zero; then the last bit set.
  Value* error_same_sign = b.CreateICmpSGE(b.CreateXor(bits, b.CreateBitCast(error, bits_type)),
                                           ConstantInt::get(bits_type, 0));
  Value* odd = b.CreateOr(b.CreateSelect(error_same_sign, bits, b.CreateSub(bits, one)), one);
  Value* inexact = b.CreateFCmpONE(error, ConstantFP::get(wide, 0.0));
  return b.CreateFPTrunc(b.CreateBitCast(b.CreateSelect(inexact, odd, bits), wide), type);
}

absl::Status EmitStream(const ir::Function& f, llvm::Module& module, const std::string& symbol,
                        const CodegenTarget& target) {
  Emitter e(f, module, target);
  return e.Emit(symbol);
}

}  // namespace dvejit::jit
