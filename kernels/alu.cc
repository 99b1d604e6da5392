#include "kernels/alu.h"

#include <algorithm>
#include <cstdlib>

namespace dvejit::alu {
namespace {
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();

// Reduce an exact result to 32 bits of the op's signedness: wrap, or clamp (saturate set).
int64_t To32(int64_t v, bool is_signed, bool saturate) {
  if (saturate) return is_signed ? std::clamp(v, kI32Min, kI32Max) : std::clamp<int64_t>(v, 0, kU32Max);
  const uint32_t w = static_cast<uint32_t>(v);
  return is_signed ? static_cast<int64_t>(static_cast<int32_t>(w)) : static_cast<int64_t>(w);
}
}  // namespace

int64_t IntegerOp(uint8_t op, bool is_signed, uint32_t ua, uint32_t ub, bool saturate) {
  const int64_t a = is_signed ? static_cast<int64_t>(static_cast<int32_t>(ua)) : ua;
  const int64_t b = is_signed ? static_cast<int64_t>(static_cast<int32_t>(ub)) : ub;
  auto wrap = [&](int64_t v) { return To32(v, is_signed, false); };
  switch (static_cast<AluOp>(op)) {
    case AluOp::ADD_INT: return To32(a + b, is_signed, saturate);
    case AluOp::SUBTRACT_INT: return To32(a - b, is_signed, saturate);
    case AluOp::MULT_INT:
    case AluOp::MULT_UINT: {
      // |a*b| < 2^64 for 32-bit operands of one signedness; compute in 128 bits to be safe.
      const __int128 p = static_cast<__int128>(a) * b;
      if (saturate) {
        const __int128 lo = is_signed ? kI32Min : 0, hi = is_signed ? kI32Max : kU32Max;
        return static_cast<int64_t>(p < lo ? lo : p > hi ? hi : p);
      }
      return wrap(static_cast<int64_t>(static_cast<uint64_t>(static_cast<unsigned __int128>(p))));
    }
    case AluOp::DIVIDE_INT:
    case AluOp::DIVIDE_UINT:
      if (b == 0) return 0;
      if (is_signed && a == kI32Min && b == -1) return kI32Min;
      return a / b;
    case AluOp::MOD:
    case AluOp::MOD_INT:
    case AluOp::MOD_UINT:
      if (b == 0) return 0;
      if (is_signed && a == kI32Min && b == -1) return 0;
      return a % b;
    case AluOp::IS_EQUAL_INT: return a == b;
    case AluOp::IS_NE_INT: return a != b;
    case AluOp::ABS_MAX_INT: return wrap(std::max(std::llabs(a), std::llabs(b)));
    case AluOp::ABS_MIN_INT: return wrap(std::min(std::llabs(a), std::llabs(b)));
    case AluOp::ABS_DIFF_INT: return wrap(std::llabs(a - b));
    case AluOp::ABS_VALUE_INT: return wrap(std::llabs(a));
    case AluOp::MAX_INT:
    case AluOp::MAX_UINT: return std::max(a, b);
    case AluOp::MIN_INT:
    case AluOp::MIN_UINT: return std::min(a, b);
    case AluOp::IS_GT_INT:
    case AluOp::IS_GT_UINT: return a > b;
    case AluOp::IS_GE_INT:
    case AluOp::IS_GE_UINT: return a >= b;
    case AluOp::IS_LE_INT:
    case AluOp::IS_LE_UINT: return a <= b;
    case AluOp::IS_LT_INT:
    case AluOp::IS_LT_UINT: return a < b;
    default: return 0;  // AMAX/AMIN are accepted by no DVE op (validation rejects them)
  }
}

}  // namespace dvejit::alu
