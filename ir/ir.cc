#include "ir/ir.h"

#include "frontend/strcat.h"

namespace dvejit::ir {

const char* OpName(Op op) {
  switch (op) {
#define IR_OP(name, text, has_value, global) \
  case Op::name: return text;
#include "ir/ops.def"
  }
  return "?";
}
bool ProducesValue(Op op) {
  switch (op) {
#define IR_OP(name, text, has_value, global) \
  case Op::name: return has_value;
#include "ir/ops.def"
  }
  return false;
}
bool IsGlobal(Op op) {
  switch (op) {
#define IR_OP(name, text, has_value, global) \
  case Op::name: return global;
#include "ir/ops.def"
  }
  return true;
}
std::string LaneFieldName(LaneField f) {
  static const char* kNames[] = {"N", "mean", "A", "B", "C"};
  const int i = static_cast<int>(f);
  if (i < static_cast<int>(LaneField::Mv0)) return kNames[i];
  if (i < static_cast<int>(LaneField::Idx0)) return Cat("mv", i - static_cast<int>(LaneField::Mv0));
  if (i < static_cast<int>(LaneField::Imm0)) return Cat("idx", i - static_cast<int>(LaneField::Idx0));
  return Cat("imm", i - static_cast<int>(LaneField::Imm0));
}

bool WritesLaneField(const Stmt& s, LaneField f) {
  if (s.op == Op::LaneSet) return s.field == f;
  const int i = static_cast<int>(f);
  if (s.op == Op::Find8) return i >= static_cast<int>(LaneField::Idx0) && i < static_cast<int>(LaneField::Imm0);
  return s.op == Op::ImmLoad && i >= static_cast<int>(LaneField::Imm0);
}

bool ChainsThroughMemory(Op op) {
  return op == Op::TensorScalar || op == Op::TensorTensor || op == Op::Reciprocal || op == Op::BackProp;
}

bool IsContiguousRow(const Pattern& p) {
  int64_t k = 0;
  const int n1 = p.dims > 1 ? p.num[1] : 1, n2 = p.dims > 2 ? p.num[2] : 1, n3 = p.dims > 3 ? p.num[3] : 1;
  for (int i3 = 0; i3 < n3; ++i3)
    for (int i2 = 0; i2 < n2; ++i2)
      for (int i1 = 0; i1 < n1; ++i1)
        for (int i0 = 0; i0 < p.num[0]; ++i0, ++k)
          if (int64_t{i0} * p.step[0] + int64_t{i1} * p.step[1] + int64_t{i2} * p.step[2] +
                  int64_t{i3} * p.step[3] != k)
            return false;
  return true;
}

namespace {
std::string PatternText(const Pattern& p) {
  std::string s = "[";
  for (int d = 0; d < p.dims; ++d) s += Cat(d ? "," : "", p.num[d], ":", p.step[d]);
  return s + "]";
}
std::string TensorText(const TensorRef& t) {
  return Cat(SpaceName(t.space), " %arg", t.arg, " ", DtypeName(static_cast<uint8_t>(t.dtype)),
             PatternText(t.pattern));
}
}  // namespace

bool RepeatCopyMatches(const Function& f, const Repeat& r, int copy) {
  const int shift = copy * r.period, arg_shift = copy * r.arg_stride;
  if (r.begin < 0 || r.period <= 0 || copy < 0 || r.begin + shift + r.period > static_cast<int>(f.stmts.size()))
    return false;
  for (int k = 0; k < r.period; ++k) {
    const Stmt& a = f.stmts[r.begin + k];
    const Stmt& b = f.stmts[r.begin + shift + k];
    if (a.op != b.op || a.channels != b.channels || a.dtype != b.dtype || a.element != b.element ||
        a.field != b.field || a.alu0 != b.alu0 || a.alu1 != b.alu1 || a.reverse != b.reverse ||
        a.flag != b.flag || a.dead != b.dead || a.operands.size() != b.operands.size() ||
        a.tensors.size() != b.tensors.size() || (a.arg < 0) != (b.arg < 0) ||
        (a.arg >= 0 && b.arg != a.arg + arg_shift))
      return false;
    for (size_t i = 0; i < a.operands.size(); ++i) {
      const bool own = a.operands[i] >= r.begin && a.operands[i] < r.begin + r.period;
      if (b.operands[i] != a.operands[i] + (own ? shift : 0)) return false;
    }
    if (a.fused_with_previous != b.fused_with_previous || a.dead_store != b.dead_store ||
        a.forward.size() != b.forward.size() || (k == 0 && a.fused_with_previous))
      return false;
    for (size_t i = 0; i < a.forward.size(); ++i) {
      const bool own = a.forward[i] >= r.begin && a.forward[i] < r.begin + r.period;
      if (a.forward[i] >= 0 && !own) return false;  // a chain never crosses a copy boundary
      if (b.forward[i] != (a.forward[i] < 0 ? a.forward[i] : a.forward[i] + shift)) return false;
    }
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      const TensorRef &x = a.tensors[i], &y = b.tensors[i];
      if (y.arg != x.arg + arg_shift || x.dtype != y.dtype || x.space != y.space || x.pattern.dims != y.pattern.dims)
        return false;
      for (int d = 0; d < x.pattern.dims; ++d)
        if (x.pattern.num[d] != y.pattern.num[d] || x.pattern.step[d] != y.pattern.step[d]) return false;
    }
  }
  return true;
}

std::string Print(const Function& f) {
  std::string s = Cat("func @stream gen=", GenerationName(f.gen), " args=", f.num_args, " {\n");
  size_t r = 0;
  const Region* region = nullptr;
  size_t rep = 0;
  for (size_t i = 0; i < f.stmts.size(); ++i) {
    while (r < f.regions.size() && f.regions[r].begin == static_cast<int>(i)) {
      const Region& reg = f.regions[r];
      s += Cat("  region ", r, reg.channel_major ? " channel-major" : " global", " [", reg.begin,
               ", ", reg.end, ")\n");
      region = &reg;
      rep = 0;
      ++r;
    }
    // A repeat prints its first copy; the others differ only in their slots.
    if (region != nullptr && rep < region->repeats.size()) {
      const Repeat& rp = region->repeats[rep];
      if (static_cast<int>(i) == rp.begin)
        s += Cat("    repeat x", rp.count, " period ", rp.period, " args +", rp.arg_stride, " {\n");
      if (static_cast<int>(i) == rp.begin + rp.period) s += "    }\n";
      if (static_cast<int>(i) >= rp.begin + rp.period && static_cast<int>(i) < rp.end()) {
        if (static_cast<int>(i) + 1 == rp.end()) ++rep;
        continue;
      }
    }
    const Stmt& st = f.stmts[i];
    if (st.dead) continue;
    s += "    ";
    if (ProducesValue(st.op)) s += Cat("%", i, " = ");
    s += OpName(st.op);
    switch (st.op) {
      case Op::Const: s += Cat(" %arg", st.arg); break;
      case Op::PtrRead:
        s += Cat(" ", DtypeName(static_cast<uint8_t>(st.dtype)), st.flag ? " raw" : "", " %arg", st.arg);
        break;
      case Op::BitsScalar:
        s += Cat(" ", AluOpName(st.alu0), ",", AluOpName(st.alu1), " rev=", st.reverse);
        break;
      case Op::BitsTensor: s += Cat(" ", AluOpName(st.alu0)); break;
      case Op::IntTensor: s += Cat(" ", AluOpName(st.alu0), st.flag ? " signed" : " unsigned"); break;
      case Op::ElemRead: s += Cat(" ", TensorText(st.tensors[0]), " #", st.element); break;
      case Op::LaneGet:
      case Op::LaneSet: s += Cat(" ", LaneFieldName(st.field)); break;
      case Op::TensorScalar:
        s += st.flag ? " rsqrt" : Cat(" ", AluOpName(st.alu0), ",", AluOpName(st.alu1), " rev=", st.reverse);
        break;
      case Op::TensorTensor: s += Cat(" ", AluOpName(st.alu0)); break;
      case Op::Stats: s += st.flag ? " parity" : " all"; break;
      case Op::Copy: case Op::Cast: s += st.flag ? " negate" : ""; break;
      case Op::Predicated: s += st.flag ? " cast" : " copy"; break;
      case Op::Find8: s += st.flag ? " replace" : " index"; break;
      case Op::ImmLoad: s += st.flag ? " bitvec" : " arith"; break;
      case Op::PtrMulti:
        s += Cat(st.flag ? " bitvec " : " arith ", AluOpName(st.alu0), st.reverse ? " rev" : "", " per ", st.element);
        break;
      case Op::Memset: s += Cat(" %arg", st.arg); break;
      case Op::PramLoad: s += Cat(" entries ", st.element, "..", st.element + 7, " %arg", st.arg); break;
      default: break;
    }
    for (ValueId v : st.operands) s += Cat(" %", v);
    for (size_t t = 0; t < st.tensors.size(); ++t) {
      if (st.op == Op::ElemRead) break;
      if (t < st.forward.size() && st.forward[t] >= 0) s += Cat(", from %", st.forward[t]);
      else s += Cat(", ", TensorText(st.tensors[t]));
    }
    if (st.fused_with_previous) s += " fused";
    if (st.dead_store) s += " no-store";
    s += Cat("  ; #", st.source, " n=", st.channels, "\n");
  }
  for (int k : f.device_noops) s += Cat("  device-noop #", k, "\n");
  s += "}\n";
  return s;
}

absl::Status Verify(const Function& f) {
  auto fail = [](std::string msg) { return absl::InternalError(msg); };
  for (size_t i = 0; i < f.stmts.size(); ++i) {
    const Stmt& st = f.stmts[i];
    if (st.dead) continue;
    for (ValueId v : st.operands) {
      if (v < 0 || static_cast<size_t>(v) >= i) return fail(Cat("stmt ", i, ": operand %", v, " not defined before use"));
      if (f.stmts[v].dead) return fail(Cat("stmt ", i, ": operand %", v, " is dead"));
      if (!ProducesValue(f.stmts[v].op)) return fail(Cat("stmt ", i, ": operand %", v, " has no value"));
    }
    for (const TensorRef& t : st.tensors)
      if (t.arg < 0 || t.arg >= f.num_args) return fail(Cat("stmt ", i, ": tensor argument out of range"));
    if ((st.op == Op::Const || st.op == Op::PtrRead || st.op == Op::Memset) && (st.arg < 0 || st.arg >= f.num_args))
      return fail(Cat("stmt ", i, ": argument out of range"));
    for (size_t t = 0; t < st.forward.size(); ++t) {
      const ValueId v = st.forward[t];
      if (v < 0) continue;
      if (v >= static_cast<ValueId>(i) || t + 1 >= st.tensors.size() || f.stmts[v].dead || f.stmts[v].tensors.empty() ||
          f.stmts[v].tensors.back().dtype != st.tensors[t].dtype)
        return fail(Cat("stmt ", i, ": source ", t, " forwarded from #", v, " which does not write it"));
    }
    if (st.fused_with_previous || st.dead_store || !st.forward.empty()) {
      if (!ChainsThroughMemory(st.op))
        return fail(Cat("stmt ", i, ": ", OpName(st.op), " cannot be in an element-wise chain"));
    }
    const size_t want = st.op == Op::Find8 ? (st.flag ? 9 : 8)
                        : st.op == Op::ReadIndices || st.op == Op::PtrMulti ? 8
                        : st.op == Op::BackProp ? 5
                        : st.op == Op::GradSums || st.op == Op::TensorScalar || st.op == Op::BitsScalar ? 2
                        : st.op == Op::LaneSet ? 1 : 0;
    if (st.op != Op::TensorScalar || !st.flag)
      if (st.operands.size() != want && !(st.op == Op::Stats && st.operands.size() == 2))
        return fail(Cat("stmt ", i, ": ", OpName(st.op), " has ", st.operands.size(), " operands, expected ", want));
  }
  int next = 0;
  for (const Region& r : f.regions) {
    if (r.begin != next || r.end < r.begin) return fail("regions do not tile the statements");
    for (int i = r.begin; i < r.end; ++i)
      if (r.channel_major && !f.stmts[i].dead && IsGlobal(f.stmts[i].op))
        return fail(Cat("stmt ", i, ": a global statement inside a channel-major region"));
    int after = r.begin;
    for (const Repeat& rp : r.repeats) {
      if (!r.channel_major || rp.begin < after || rp.count < 2 || rp.period < 1 || rp.end() > r.end)
        return fail(Cat("repeat at ", rp.begin, ": not disjoint inside a channel-major region"));
      for (int c = 1; c < rp.count; ++c)
        if (!RepeatCopyMatches(f, rp, c)) return fail(Cat("repeat at ", rp.begin, ": copy ", c, " differs"));
      if (rp.end() < r.end && f.stmts[rp.end()].fused_with_previous)
        return fail(Cat("repeat at ", rp.begin, ": an element-wise chain continues after it"));
      // The loop's values do not outlive it: nothing after the repeat uses them.
      for (int i = rp.end(); i < r.end; ++i)
        for (ValueId v : f.stmts[i].operands)
          if (v >= rp.begin && v < rp.end()) return fail(Cat("stmt ", i, ": uses %", v, " from inside a repeat"));
      after = rp.end();
    }
    next = r.end;
  }
  if (next != static_cast<int>(f.stmts.size())) return fail("regions do not cover every statement");
  if (static_cast<int>(f.args.size()) != f.num_args) return fail("argument table size mismatch");
  return absl::OkStatus();
}

}  // namespace dvejit::ir
