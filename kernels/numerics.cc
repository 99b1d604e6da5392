// Out-of-line parts of the exact numerics (kernels/numerics.h).
#include "kernels/numerics.h"

#include <cmath>

namespace dvejit::num {

float PowF(float a, float b) {
  return Canon(static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b))));
}

}  // namespace dvejit::num
