// The roof kernels built for avx2 (compile flags in bench/CMakeLists.txt).
#include "bench/roof_kernels.h"

namespace dvejit::roof {
RoofKernels Avx2Kernels() { return RoofKernelsFor<xsimd::avx2>::Table("avx2"); }
}  // namespace dvejit::roof
