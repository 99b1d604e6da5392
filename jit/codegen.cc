#include "jit/codegen.h"

#include <cstddef>
#include <functional>
#include <vector>

#include "frontend/strcat.h"
#include "kernels/numerics.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#pragma GCC diagnostic pop

namespace dvejit::jit {

const RtTable& DefaultRtTable(void (*interp)(void*, int32_t)) {
  static thread_local RtTable table;
  table.interp = interp;
  table.nrecip = [](float d) { return num::NRecip(d); };
  table.ndiv = [](float a, float b, const float* pram) { return num::NDiv(a, b, pram); };
  table.nrsqrt = [](float a) { return num::NRsqrt(a); };
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
uint64_t LaneFieldOffset(ir::LaneField f) {
  switch (f) {
    case ir::LaneField::N: return offsetof(LaneState, bn_n);
    case ir::LaneField::Mean: return offsetof(LaneState, bn_mean);
    case ir::LaneField::A: return offsetof(LaneState, bn_a);
    case ir::LaneField::B: return offsetof(LaneState, bn_b);
    case ir::LaneField::C: return offsetof(LaneState, bn_c);
  }
  return 0;
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
  Emitter(const ir::Function& f, Module& m, int width)
      : f_(f), m_(m), ctx_(m.getContext()), b_(ctx_), W_(width) {
    f32_ = Type::getFloatTy(ctx_);
    i8_ = Type::getInt8Ty(ctx_);
    i16_ = Type::getInt16Ty(ctx_);
    i32_ = Type::getInt32Ty(ctx_);
    i64_ = Type::getInt64Ty(ctx_);
    ptr_ = PointerType::get(ctx_, 0);
    vf_ = FixedVectorType::get(f32_, W_);
    vi32_ = FixedVectorType::get(i32_, W_);
    vi64_ = FixedVectorType::get(i64_, W_);
    values_.assign(f.stmts.size(), nullptr);
  }

  absl::Status Emit(const std::string& symbol) {
    auto* type = FunctionType::get(Type::getVoidTy(ctx_), {ptr_, ptr_, ptr_, ptr_}, false);
    fn_ = Function::Create(type, Function::ExternalLinkage, symbol, m_);
    args_ = fn_->getArg(0);
    state_ = fn_->getArg(1);
    rt_ = fn_->getArg(2);
    ctxp_ = fn_->getArg(3);
    entry_ = BasicBlock::Create(ctx_, "entry", fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, "body", fn_);
    b_.SetInsertPoint(body);
    for (const ir::Region& r : f_.regions) {
      if (r.channel_major) {
        if (auto s = ChannelMajorRegion(r); !s.ok()) return s;
      } else {
        for (int i = r.begin; i < r.end; ++i)
          if (!f_.stmts[i].dead) GlobalStmt(f_.stmts[i]);
      }
    }
    b_.CreateRetVoid();
    IRBuilder<> eb(entry_);
    eb.CreateBr(body);
    return absl::OkStatus();
  }

 private:
  // ---- helpers ----
  Value* Splat(Value* scalar) { return b_.CreateVectorSplat(W_, scalar); }
  Value* F(float v) { return ConstantFP::get(vf_, v); }
  Value* CanonicalNaN() {
    return ConstantFP::get(vf_, APFloat(APFloat::IEEEsingle(), APInt(32, num::kCanonicalNaNBits)));
  }
  Value* IsNaN(Value* v) { return b_.CreateFCmpUNO(v, v); }
  Value* Canon(Value* v) { return b_.CreateSelect(IsNaN(v), CanonicalNaN(), v); }
  Value* Call(Intrinsic::ID id, std::vector<Value*> ops) {
    Function* fn = Intrinsic::getDeclaration(&m_, id, {ops[0]->getType()});
    return b_.CreateCall(fn, ops);
  }
  Value* Fma(Value* a, Value* b, Value* c) { return Call(Intrinsic::fma, {a, b, c}); }
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
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* hdr = BasicBlock::Create(ctx_, "loop", fn_);
    BasicBlock* bb = BasicBlock::Create(ctx_, "loop.body", fn_);
    BasicBlock* exit = BasicBlock::Create(ctx_, "loop.exit", fn_);
    b_.CreateBr(hdr);
    b_.SetInsertPoint(hdr);
    PHINode* i = b_.CreatePHI(count->getType(), 2);
    i->addIncoming(ConstantInt::get(count->getType(), 0), pre);
    b_.CreateCondBr(b_.CreateICmpULT(i, count), bb, exit);
    b_.SetInsertPoint(bb);
    body(static_cast<Value*>(i));
    i->addIncoming(b_.CreateAdd(i, ConstantInt::get(count->getType(), 1)), b_.GetInsertBlock());
    b_.CreateBr(hdr);
    b_.SetInsertPoint(exit);
  }
  Value* ArgWord(int slot) {
    Value* p = b_.CreateGEP(i64_, args_, b_.getInt64(slot));
    return b_.CreateLoad(i64_, p);
  }
  Value* ArgPtr(int slot) { return b_.CreateIntToPtr(ArgWord(slot), ptr_); }
  Value* ArgF32(int slot) {
    return b_.CreateBitCast(b_.CreateTrunc(ArgWord(slot), i32_), f32_);
  }
  uint32_t Pitch(Space s) const {
    const Geometry& g = GeometryOf(f_.gen);
    return s == Space::Sbuf ? g.sbuf_active_bytes : g.psum_active_bytes;
  }
  Type* RawType(Dtype d) {
    switch (DtypeSize(d)) {
      case 1: return i8_;
      case 2: return i16_;
      default: return i32_;
    }
  }
  // Per-lane byte offsets of channel (cb + lane) for a space: (cb + lane) · pitch.
  Value* LaneOffsets(Space s) {
    return b_.CreateMul(lanes_, ConstantInt::get(vi64_, Pitch(s)));
  }
  // Pointers to element `elem_offset` (an i64 scalar, in elements) of tensor t, per lane.
  Value* ElementPtrs(const ir::TensorRef& t, Value* elem_offset) {
    Value* base = ArgPtr(t.arg);
    Value* off = b_.CreateAdd(LaneOffsets(t.space),
                              Splat(b_.CreateMul(elem_offset, b_.getInt64(DtypeSize(t.dtype)))));
    return b_.CreateGEP(i8_, base, off);
  }
  Value* Gather(Type* elem, Value* ptrs, int align) {
    auto* vt = FixedVectorType::get(elem, W_);
    return b_.CreateMaskedGather(vt, ptrs, Align(align), mask_, Constant::getNullValue(vt));
  }
  Value* Widen(Dtype d, Value* raw) {
    if (d == Dtype::BFLOAT16)
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(raw, vi32_), ConstantInt::get(vi32_, 16)), vf_);
    return b_.CreateBitCast(raw, vf_);  // FP32, FP32R
  }
  // The store conversion (numerics StoreFromF32) for the compiled dtypes.
  Value* Narrow(Dtype d, Value* v) {
    Value* bits = b_.CreateBitCast(v, vi32_);
    if (d == Dtype::BFLOAT16) {
      Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, ConstantInt::get(vi32_, 16)), ConstantInt::get(vi32_, 1));
      Value* r = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(bits, ConstantInt::get(vi32_, 0x7FFF)), lsb),
                               ConstantInt::get(vi32_, 16));
      auto* vi16 = FixedVectorType::get(i16_, W_);
      return b_.CreateSelect(IsNaN(v), ConstantInt::get(vi16, num::kBf16CanonicalNaN), b_.CreateTrunc(r, vi16));
    }
    return b_.CreateSelect(IsNaN(v), ConstantInt::get(vi32_, num::kCanonicalNaNBits), bits);
  }
  Value* LoadElem(const ir::TensorRef& t, Value* elem_offset) {
    const int es = DtypeSize(t.dtype);
    return Widen(t.dtype, Gather(RawType(t.dtype), ElementPtrs(t, elem_offset), es));
  }
  void StoreElem(const ir::TensorRef& t, Value* elem_offset, Value* v) {
    b_.CreateMaskedScatter(Narrow(t.dtype, v), ElementPtrs(t, elem_offset), Align(DtypeSize(t.dtype)), mask_);
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
  Value* RtFn(int index) {
    return b_.CreateLoad(ptr_, b_.CreateGEP(ptr_, rt_, b_.getInt64(index)));
  }
  // Calls a scalar runtime routine lane by lane (pure functions: masked-off lanes are harmless).
  Value* PerLane(int rt_index, std::vector<Value*> vec_args, bool pass_pram) {
    std::vector<Type*> params(vec_args.size(), f32_);
    if (pass_pram) params.push_back(ptr_);
    auto* ft = FunctionType::get(f32_, params, false);
    Value* fn = RtFn(rt_index);
    Value* pram = pass_pram ? b_.CreateGEP(i8_, state_, b_.getInt64(kPramOffset)) : nullptr;
    Value* out = UndefValue::get(vf_);
    for (int l = 0; l < W_; ++l) {
      std::vector<Value*> a;
      for (Value* v : vec_args) a.push_back(b_.CreateExtractElement(v, l));
      if (pass_pram) a.push_back(pram);
      out = b_.CreateInsertElement(out, b_.CreateCall(ft, fn, a), l);
    }
    return out;
  }
  // nrecip (numerics NRecip) inline, lane-wise: the seed from RECIP8 by integer operations, two
  // Newton steps with fma; outside the Newton range the IEEE quotient 1/d.
  Value* NRecip(Value* d) {
    Value* b = b_.CreateBitCast(d, vi32_);
    auto k = [&](uint32_t v) { return ConstantInt::get(vi32_, v); };
    Value* abs = b_.CreateAnd(b, k(0x7FFFFFFFu));
    Value* in_range = b_.CreateAnd(b_.CreateICmpUGE(abs, k(0x01000000u)), b_.CreateICmpULE(abs, k(0x7E000000u)));
    if (recip8_ == nullptr) {
      std::vector<uint32_t> table(num::RECIP8.begin(), num::RECIP8.end());
      auto* arr = ConstantDataArray::get(ctx_, ArrayRef<uint32_t>(table));
      recip8_ = new GlobalVariable(m_, arr->getType(), true, GlobalValue::PrivateLinkage, arr, "recip8");
    }
    Value* idx = b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(b, k(16)), k(0x7F)), vi64_);
    Value* ptrs = b_.CreateGEP(i32_, recip8_, idx);
    auto* all = ConstantVector::getSplat(ElementCount::getFixed(W_), b_.getTrue());
    Value* r = b_.CreateMaskedGather(vi32_, ptrs, Align(4), all, Constant::getNullValue(vi32_));
    Value* biased = b_.CreateAnd(b_.CreateLShr(b, k(23)), k(0xFF));
    Value* seed_bits = b_.CreateOr(b_.CreateOr(b_.CreateAnd(b, k(0x80000000u)),
                                               b_.CreateShl(b_.CreateSub(k(253), biased), k(23))),
                                   b_.CreateShl(b_.CreateSub(r, k(128)), k(16)));
    Value* x = b_.CreateBitCast(seed_bits, vf_);
    for (int step = 0; step < 2; ++step) {
      Value* e = Fma(b_.CreateFNeg(d), x, F(1.0f));
      x = Fma(x, e, x);
    }
    return b_.CreateSelect(in_range, x, Canon(b_.CreateFDiv(F(1.0f), d)));
  }
  Value* NDiv(Value* a, Value* b) { return PerLane(2, {a, b}, true); }
  Value* NRsqrt(Value* v) { return PerLane(3, {v}, false); }

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
  Value* Bool(Value* c) { return b_.CreateSelect(c, F(1.0f), F(0.0f)); }
  // kernels/alu.h Arith, lane-wise.
  Value* Arith(uint8_t op, Value* a, Value* b) {
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
        return Canon(Call(Intrinsic::copysign, {MaxNum(Fabs(a), Fabs(b)), a}));
      default: return CanonicalNaN();  // not lowered (ir::JitSupportsAluOp)
    }
  }
  Value* Stage(uint8_t op, Value* entering, Value* scalar, bool reversed) {
    const bool unary = op == 0x00 || op == 0x19 || op == 0x22 || op == 0x23;
    if (unary) return Arith(op, entering, F(0.0f));
    return reversed ? Arith(op, scalar, entering) : Arith(op, entering, scalar);
  }
  Value* Val(ir::ValueId v) { return values_[v]; }

  // ---- regions ----
  absl::Status ChannelMajorRegion(const ir::Region& r) {
    int max_n = 0;
    for (int i = r.begin; i < r.end; ++i)
      if (!f_.stmts[i].dead) max_n = std::max(max_n, f_.stmts[i].channels);
    if (max_n == 0) return absl::OkStatus();
    const int blocks = (max_n + W_ - 1) / W_;
    Loop(b_.getInt64(blocks), [&](Value* block) {
      Value* cb = b_.CreateMul(block, b_.getInt64(W_));
      std::vector<Constant*> iota;
      for (int l = 0; l < W_; ++l) iota.push_back(ConstantInt::get(i64_, l));
      lanes_ = b_.CreateAdd(Splat(cb), ConstantVector::get(iota));
      cb_ = cb;
      for (int i = r.begin; i < r.end; ++i) {
        const Stmt& s = f_.stmts[i];
        if (s.dead) continue;
        mask_ = b_.CreateICmpULT(lanes_, ConstantInt::get(vi64_, s.channels));
        channels_ = s.channels;
        if (ProducesValue(s.op) || s.channels >= max_n) {
          values_[i] = Statement(s);  // values are needed by later statements of the block
        } else {
          // Skip the statement in blocks where none of its channels is active.
          If(b_.CreateICmpULT(cb, b_.getInt64(s.channels)), [&] { Statement(s); });
        }
      }
    });
    for (int i = r.begin; i < r.end; ++i) values_[i] = nullptr;  // region-local values
    return absl::OkStatus();
  }

  void GlobalStmt(const Stmt& s) {
    if (s.op == Op::Interp) {
      auto* ft = FunctionType::get(Type::getVoidTy(ctx_), {ptr_, i32_}, false);
      b_.CreateCall(ft, RtFn(0), {ctxp_, b_.getInt32(s.source)});
    } else if (s.op == Op::PramLoad) {
      for (int k = 0; k < 8; ++k) {
        Value* p = b_.CreateGEP(i8_, state_, b_.getInt64(kPramOffset + 4 * (s.element + k)));
        b_.CreateStore(ArgF32(s.arg + k), p);
      }
    }
  }

  Value* LanePtrs(ir::LaneField f) {
    Value* off = b_.CreateAdd(b_.CreateMul(lanes_, ConstantInt::get(vi64_, kLaneSize)),
                              ConstantInt::get(vi64_, kLanesOffset + LaneFieldOffset(f)));
    return b_.CreateGEP(i8_, state_, off);
  }

  Value* Statement(const Stmt& s) {
    switch (s.op) {
      case Op::Const: return Splat(ArgF32(s.arg));
      case Op::PtrRead: return LoadElem(s.tensors[0], b_.getInt64(0));
      case Op::ElemRead: return LoadElem(s.tensors[0], ConstOffset(s.tensors[0], s.element));
      case Op::LaneGet: return Gather(f32_, LanePtrs(s.field), 4);
      case Op::LaneSet:
        b_.CreateMaskedScatter(Val(s.operands[0]), LanePtrs(s.field), Align(4), mask_);
        return nullptr;
      case Op::Stats: Stats(s); return nullptr;
      case Op::Aggregate: Aggregate(s); return nullptr;
      case Op::GradSums: GradSums(s); return nullptr;
      case Op::BackProp: BackProp(s); return nullptr;
      case Op::TensorScalar:
      case Op::TensorTensor:
      case Op::Reciprocal: Elementwise(s); return nullptr;
      case Op::Copy: Copy(s); return nullptr;
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
  Value* RowPtr(const ir::TensorRef& t, Value* lane, Value* elem) {
    Value* channel = b_.CreateAdd(cb_, lane);
    Value* off = b_.CreateAdd(b_.CreateMul(channel, b_.getInt64(Pitch(t.space))),
                              b_.CreateMul(elem, b_.getInt64(DtypeSize(t.dtype))));
    return b_.CreateGEP(i8_, ArgPtr(t.arg), off);
  }
  // W consecutive elements of one lane's row (masked: a tail), widened to fp32.
  Value* LoadRow(const ir::TensorRef& t, Value* lane, Value* elem, Value* tail_mask) {
    auto* vt = FixedVectorType::get(RawType(t.dtype), W_);
    Value* p = RowPtr(t, lane, elem);
    Value* raw = tail_mask ? static_cast<Value*>(b_.CreateMaskedLoad(vt, p, Align(DtypeSize(t.dtype)), tail_mask,
                                                                     Constant::getNullValue(vt)))
                           : static_cast<Value*>(b_.CreateAlignedLoad(vt, p, Align(DtypeSize(t.dtype))));
    return Widen(t.dtype, raw);
  }
  void StoreRow(const ir::TensorRef& t, Value* lane, Value* elem, Value* v, Value* tail_mask) {
    Value* p = RowPtr(t, lane, elem);
    Value* raw = Narrow(t.dtype, v);
    if (tail_mask) b_.CreateMaskedStore(raw, p, Align(DtypeSize(t.dtype)), tail_mask);
    else b_.CreateAlignedStore(raw, p, Align(DtypeSize(t.dtype)));
  }
  Value* TailMask(int64_t r) {
    std::vector<Constant*> bits;
    for (int l = 0; l < W_; ++l) bits.push_back(b_.getInt1(l < r));
    return ConstantVector::get(bits);
  }
  // In-register W×W transpose by block swaps (h = W/2 ... 1): cols[j][l] = rows[l][j].
  std::vector<Value*> Transpose(std::vector<Value*> r) {
    for (int h = W_ / 2; h >= 1; h /= 2) {
      for (int i = 0; i < W_; ++i) {
        if (i & h) continue;
        const int j = i + h;
        std::vector<int> mi(W_), mj(W_);
        for (int q = 0; q < W_; ++q) {
          mi[q] = (q & h) ? W_ + q - h : q;
          mj[q] = (q & h) ? W_ + q : q + h;
        }
        Value* ni = b_.CreateShuffleVector(r[i], r[j], mi);
        Value* nj = b_.CreateShuffleVector(r[i], r[j], mj);
        r[i] = ni;
        r[j] = nj;
      }
    }
    return r;
  }
  // Loads W consecutive elements from k0 for every lane of the block and transposes them:
  // result[j] holds element k0 + j of every lane. Inactive lanes read lane 0's row (active
  // whenever the statement runs in this block); their values are never stored.
  std::vector<Value*> LoadColumns(const ir::TensorRef& t, Value* k0) {
    std::vector<Value*> rows;
    for (int l = 0; l < W_; ++l) {
      Value* active = b_.CreateICmpULT(b_.CreateAdd(cb_, b_.getInt64(l)), b_.getInt64(channels_));
      Value* lane = b_.CreateSelect(active, b_.getInt64(l), b_.getInt64(0));
      rows.push_back(LoadRow(t, lane, k0, nullptr));
    }
    return Transpose(rows);
  }
  // Element-wise statements on contiguous rows: lane by lane, W elements at a time; per-channel
  // scalars are splatted from their lane.
  template <typename Body>  // Body(lane, elem, tail_mask) emits one W-element chunk
  void RowLoop(int64_t count, Body body) {
    Loop(b_.getInt64(W_), [&](Value* lane) {
      If(b_.CreateICmpULT(b_.CreateAdd(cb_, lane), b_.getInt64(channels_)), [&] {
        Loop(b_.getInt64(count / W_), [&](Value* chunk) { body(lane, b_.CreateMul(chunk, b_.getInt64(W_)), nullptr); });
        if (count % W_ != 0) body(lane, b_.getInt64(count - count % W_), TailMask(count % W_));
      });
    });
  }
  Value* LaneScalar(Value* vec, Value* lane) { return Splat(b_.CreateExtractElement(vec, lane)); }

  // ---- Welford statistics ----
  struct WelfordAcc {
    Value *mean, *m2;
  };
  // One Welford step for element x, the n-th of its stream (n an i64 value).
  void WelfordStep(WelfordAcc acc, Value* x, Value* n) {
    Value* rp = b_.CreateGEP(i8_, state_, b_.CreateAdd(b_.getInt64(kPramOffset - 4), b_.CreateMul(n, b_.getInt64(4))));
    Value* recip = Splat(b_.CreateLoad(f32_, rp));  // recip(n) = PRAM[n − 1]
    Value* mu = Get(acc.mean, vf_);
    Value* delta = b_.CreateFSub(x, mu);
    Value* mu2 = Fma(delta, recip, mu);
    b_.CreateStore(mu2, acc.mean);
    b_.CreateStore(Fma(delta, b_.CreateFSub(x, mu2), Get(acc.m2, vf_)), acc.m2);
  }
  void Stats(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const int64_t count = src.pattern.Count();
    const bool split = s.flag;
    WelfordAcc acc[2] = {{Var(vf_, F(0.0f)), Var(vf_, F(0.0f))}, {Var(vf_, F(0.0f)), Var(vf_, F(0.0f))}};
    // Element k belongs to stream k % 2 (split) or 0, as its (k / 2 + 1)-th or (k + 1)-th element.
    auto step = [&](Value* x, int parity, Value* k) {
      Value* n = split ? b_.CreateAdd(b_.CreateLShr(k, b_.getInt64(1)), b_.getInt64(1))
                       : b_.CreateAdd(k, b_.getInt64(1));
      WelfordStep(acc[split ? parity : 0], x, n);
    };
    int64_t done = 0;
    if (ContiguousRow(src) && count >= W_) {
      done = count - count % W_;
      Loop(b_.getInt64(count / W_), [&](Value* chunk) {
        Value* k0 = b_.CreateMul(chunk, b_.getInt64(W_));
        const std::vector<Value*> cols = LoadColumns(src, k0);
        for (int j = 0; j < W_; ++j) step(cols[j], j % 2, b_.CreateAdd(k0, b_.getInt64(j)));
      });
    }
    // The rest, element by element (gathers), each stream in its own order.
    auto off = OffsetFn(src);
    for (int parity = 0; parity < (split ? 2 : 1); ++parity) {
      const int64_t first = split ? done + ((done % 2 == parity) ? 0 : 1) : done;
      const int64_t stride = split ? 2 : 1;
      if (first >= count) continue;
      Loop(b_.getInt64((count - first + stride - 1) / stride), [&](Value* j) {
        Value* k = b_.CreateAdd(b_.getInt64(first), b_.CreateMul(j, b_.getInt64(stride)));
        step(LoadElem(src, off(k)), parity, k);
      });
    }
    std::vector<Value*> out;
    if (split)
      out = {Val(s.operands[0]), Get(acc[0].mean, vf_), Get(acc[0].m2, vf_), Val(s.operands[1]),
             Get(acc[1].mean, vf_), Get(acc[1].m2, vf_)};
    else
      out = {b_.CreateFAdd(Val(s.operands[0]), Val(s.operands[1])), Get(acc[0].mean, vf_), Get(acc[0].m2, vf_)};
    for (size_t k = 0; k < out.size(); ++k) StoreElem(dst, ConstOffset(dst, static_cast<int64_t>(k)), out[k]);
  }
  void Aggregate(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    Value* n = Var(vf_, F(0.0f));
    Value* mean = Var(vf_, F(0.0f));
    Value* m2 = Var(vf_, F(0.0f));
    auto off = OffsetFn(src);
    Loop(b_.getInt64(src.pattern.Count() / 3), [&](Value* t) {
      Value* k = b_.CreateMul(t, b_.getInt64(3));
      Value* nb = LoadElem(src, off(k));
      Value* mb = LoadElem(src, off(b_.CreateAdd(k, b_.getInt64(1))));
      Value* m2b = LoadElem(src, off(b_.CreateAdd(k, b_.getInt64(2))));
      Value* active = b_.CreateFCmpUNE(nb, F(0.0f));  // "if nb == 0: skip"
      Value* n0 = Get(n, vf_);
      Value* mean0 = Get(mean, vf_);
      Value* m20 = Get(m2, vf_);
      Value* nab = b_.CreateFAdd(n0, nb);
      Value* w = NDiv(nb, nab);
      Value* delta = b_.CreateFSub(mb, mean0);
      Value* mean1 = Fma(delta, w, mean0);
      Value* m21 = Fma(b_.CreateFMul(delta, delta), b_.CreateFMul(n0, w), b_.CreateFAdd(m20, m2b));
      b_.CreateStore(b_.CreateSelect(active, mean1, mean0), mean);
      b_.CreateStore(b_.CreateSelect(active, m21, m20), m2);
      b_.CreateStore(b_.CreateSelect(active, nab, n0), n);
    });
    Value* nf = Get(n, vf_);
    Value* var = b_.CreateSelect(b_.CreateFCmpOEQ(nf, F(0.0f)), F(0.0f), NDiv(Get(m2, vf_), nf));
    StoreElem(dst, ConstOffset(dst, 0), Get(mean, vf_));
    StoreElem(dst, ConstOffset(dst, 1), var);
  }
  void GradSums(const Stmt& s) {
    const ir::TensorRef& x = s.tensors[0];
    const ir::TensorRef& dy = s.tensors[1];
    const ir::TensorRef& dst = s.tensors[2];
    Value* mu = Val(s.operands[0]);
    Value* vf = Val(s.operands[1]);
    Value* vf2 = b_.CreateFMul(vf, vf);
    Value* s0 = Var(vf_, F(0.0f));
    Value* s1 = Var(vf_, F(0.0f));
    Value* s2 = Var(vf_, F(0.0f));
    auto step = [&](Value* xv, Value* dyv) {
      Value* d = b_.CreateFSub(xv, mu);
      Value* p = b_.CreateFMul(d, dyv);
      b_.CreateStore(b_.CreateFAdd(Get(s0, vf_), dyv), s0);
      b_.CreateStore(Fma(p, vf, Get(s1, vf_)), s1);
      b_.CreateStore(Fma(p, vf2, Get(s2, vf_)), s2);
    };
    const int64_t count = x.pattern.Count();
    int64_t done = 0;
    if (ContiguousRow(x) && ContiguousRow(dy) && count >= W_) {
      done = count - count % W_;
      Loop(b_.getInt64(count / W_), [&](Value* chunk) {
        Value* k0 = b_.CreateMul(chunk, b_.getInt64(W_));
        const std::vector<Value*> xs = LoadColumns(x, k0), dys = LoadColumns(dy, k0);
        for (int j = 0; j < W_; ++j) step(xs[j], dys[j]);
      });
    }
    if (done < count) {
      auto ox = OffsetFn(x), ody = OffsetFn(dy);
      Loop(b_.getInt64(count - done), [&](Value* j) {
        Value* k = b_.CreateAdd(j, b_.getInt64(done));
        step(LoadElem(x, ox(k)), LoadElem(dy, ody(k)));
      });
    }
    StoreElem(dst, ConstOffset(dst, 0), Get(s0, vf_));
    StoreElem(dst, ConstOffset(dst, 1), Get(s1, vf_));
    StoreElem(dst, ConstOffset(dst, 2), Get(s2, vf_));
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
      case Op::TensorTensor: return Arith(s.alu0, srcs[0], srcs[1]);
      default:  // TensorScalar
        if (s.flag) return NRsqrt(srcs[0]);
        return Stage(s.alu1, Stage(s.alu0, srcs[0], scalar(0), s.reverse & 1), scalar(1), (s.reverse & 2) != 0);
    }
  }
  void BackProp(const Stmt& s) { Elementwise(s); }
  void Elementwise(const Stmt& s) {
    const ir::TensorRef& dst = s.tensors.back();
    const int64_t count = dst.pattern.Count();
    const size_t nsrc = s.tensors.size() - 1;
    bool rows = true;
    for (const ir::TensorRef& t : s.tensors) rows = rows && ContiguousRow(t);
    if (rows) {  // contiguous rows: lane by lane, W elements at a time, no gathers
      RowLoop(count, [&](Value* lane, Value* elem, Value* tail) {
        std::vector<Value*> srcs;
        for (size_t i = 0; i < nsrc; ++i) srcs.push_back(LoadRow(s.tensors[i], lane, elem, tail));
        StoreRow(dst, lane, elem, ElementValue(s, srcs, lane), tail);
      });
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
  void Copy(const Stmt& s) {
    const ir::TensorRef& src = s.tensors[0];
    const ir::TensorRef& dst = s.tensors[1];
    const int es = DtypeSize(src.dtype);
    Type* et = RawType(src.dtype);
    auto os = OffsetFn(src), od = OffsetFn(dst);
    Loop(b_.getInt64(src.pattern.Count()), [&](Value* k) {
      Value* raw = Gather(et, ElementPtrs(src, os(k)), es);
      if (s.flag) {
        auto* vt = FixedVectorType::get(et, W_);
        raw = IsFloatDtype(src.dtype)
                  ? b_.CreateXor(raw, ConstantInt::get(vt, APInt::getSignMask(8 * es)))
                  : b_.CreateSub(Constant::getNullValue(vt), raw);
      }
      b_.CreateMaskedScatter(raw, ElementPtrs(dst, od(k)), Align(es), mask_);
    });
  }

  const ir::Function& f_;
  Module& m_;
  LLVMContext& ctx_;
  IRBuilder<> b_;
  const int W_;
  Type *f32_, *i8_, *i16_, *i32_, *i64_;
  PointerType* ptr_;
  FixedVectorType *vf_, *vi32_, *vi64_;
  Function* fn_ = nullptr;
  BasicBlock* entry_ = nullptr;
  Value *args_ = nullptr, *state_ = nullptr, *rt_ = nullptr, *ctxp_ = nullptr;
  Value *lanes_ = nullptr, *mask_ = nullptr, *cb_ = nullptr;
  int channels_ = 0;
  std::vector<Value*> values_;
  GlobalVariable* recip8_ = nullptr;
};

}  // namespace

absl::Status EmitStream(const ir::Function& f, llvm::Module& module, const std::string& symbol,
                        int width) {
  Emitter e(f, module, width);
  return e.Emit(symbol);
}

}  // namespace dvejit::jit
