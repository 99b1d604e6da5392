// The roof kernels built for avx512bw (compile flags in bench/CMakeLists.txt).
#include "bench/roof_kernels.h"

namespace dvejit::roof {
RoofKernels Avx512Kernels() { return RoofKernelsFor<xsimd::avx512bw>::Table("avx512bw"); }
}  // namespace dvejit::roof
