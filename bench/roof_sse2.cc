// The roof kernels built for sse2 (compile flags in bench/CMakeLists.txt).
#include "bench/roof_kernels.h"

namespace dvejit::roof {
RoofKernels Sse2Kernels() { return RoofKernelsFor<xsimd::sse2>::Table("sse2"); }
}  // namespace dvejit::roof
