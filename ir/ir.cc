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
const char* LaneFieldName(LaneField f) {
  static const char* kNames[] = {"N", "mean", "A", "B", "C"};
  return kNames[static_cast<int>(f)];
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

std::string Print(const Function& f) {
  std::string s = Cat("func @stream gen=", GenerationName(f.gen), " args=", f.num_args, " {\n");
  size_t r = 0;
  for (size_t i = 0; i < f.stmts.size(); ++i) {
    while (r < f.regions.size() && f.regions[r].begin == static_cast<int>(i)) {
      const Region& reg = f.regions[r];
      s += Cat("  region ", r, reg.channel_major ? " channel-major" : " global", " [", reg.begin,
               ", ", reg.end, ")\n");
      ++r;
    }
    const Stmt& st = f.stmts[i];
    if (st.dead) continue;
    s += "    ";
    if (ProducesValue(st.op)) s += Cat("%", i, " = ");
    s += OpName(st.op);
    switch (st.op) {
      case Op::Const: s += Cat(" %arg", st.arg); break;
      case Op::PtrRead: s += Cat(" ", DtypeName(static_cast<uint8_t>(st.dtype)), " %arg", st.arg); break;
      case Op::ElemRead: s += Cat(" ", TensorText(st.tensors[0]), " #", st.element); break;
      case Op::LaneGet:
      case Op::LaneSet: s += Cat(" ", LaneFieldName(st.field)); break;
      case Op::TensorScalar:
        s += st.flag ? " rsqrt" : Cat(" ", AluOpName(st.alu0), ",", AluOpName(st.alu1), " rev=", st.reverse);
        break;
      case Op::TensorTensor: s += Cat(" ", AluOpName(st.alu0)); break;
      case Op::Stats: s += st.flag ? " parity" : " all"; break;
      case Op::Copy: s += st.flag ? " negate" : ""; break;
      case Op::PramLoad: s += Cat(" entries ", st.element, "..", st.element + 7, " %arg", st.arg); break;
      default: break;
    }
    for (ValueId v : st.operands) s += Cat(" %", v);
    for (const TensorRef& t : st.tensors)
      if (st.op != Op::ElemRead) s += Cat(", ", TensorText(t));
    s += Cat("  ; #", st.source, " n=", st.channels, "\n");
  }
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
    if ((st.op == Op::Const || st.op == Op::PtrRead) && (st.arg < 0 || st.arg >= f.num_args))
      return fail(Cat("stmt ", i, ": argument out of range"));
    const size_t want = st.op == Op::BackProp ? 5 : st.op == Op::GradSums || st.op == Op::TensorScalar ? 2
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
    next = r.end;
  }
  if (next != static_cast<int>(f.stmts.size())) return fail("regions do not cover every statement");
  if (static_cast<int>(f.args.size()) != f.num_args) return fail("argument table size mismatch");
  return absl::OkStatus();
}

}  // namespace dvejit::ir
