#include "kernels/interpreter.h"

#include "kernels/families.h"

namespace dvejit {

bool ExecuteInstruction(const Instruction& inst, MachineState& m, Profile profile) {
  using namespace kernels;
  switch (inst.opcode()) {
    case Opcode::BatchNormStats:
    case Opcode::BatchNormStats2:
    case Opcode::TransposeBatchNormStats2: Stats(inst, m); return true;
    case Opcode::BatchNormAggregate: Aggregate(inst, m); return true;
    case Opcode::BatchNormGradAccumulate:
    case Opcode::BatchNormGradAccumulate2: GradAccum(inst, m); return true;
    case Opcode::BatchNormParamLoad:
    case Opcode::BatchNormParamLoad2: ParamLoad(inst, m); return true;
    case Opcode::BatchNormBackProp: BackProp(inst, m); return true;
    case Opcode::TensorScalarArith:
    case Opcode::TensorScalarBitvec:
    case Opcode::TensorScalarPtrArith:
    case Opcode::TensorScalarPtrBitvec:
    case Opcode::TransposeTensorScalarArith: TensorScalar(inst, m); return true;
    case Opcode::TensorScalarCacheReduce:
    case Opcode::TensorScalarCacheCumulative: TensorScalarCache(inst, m); return true;
    case Opcode::TensorScalarImmLdArith:
    case Opcode::TensorScalarImmLdBitvec:
      // The device workers are LOG-and-return stubs (validation.md §4).
      if (profile == Profile::Device) return false;
      ImmLoad(inst, m);
      return true;
    case Opcode::TensorScalarPtrMultiArith:
    case Opcode::TensorScalarPtrMultiBitvec:
      if (profile == Profile::Device) return false;
      PtrMulti(inst, m);
      return true;
    case Opcode::TensorTensorArith:
    case Opcode::TensorTensorBitvec: TensorTensor(inst, m); return true;
    case Opcode::CopyPredicated:
    case Opcode::CastPredicated: Predicated(inst, m); return true;
    case Opcode::Copy:
    case Opcode::Cast:
    case Opcode::Reciprocal: CopyCastReciprocal(inst, m); return true;
    case Opcode::Memset: Memset(inst, m); return true;
    case Opcode::MatchValueLoad: MatchValueLoad(inst, m); return true;
    case Opcode::Max8: Max8(inst, m); return true;
    case Opcode::FindIndex8:
    case Opcode::MatchReplace8: FindIndex8(inst, m); return true;
    case Opcode::DveReadIndices: ReadIndices(inst, m); return true;
    case Opcode::DveReadAccumulator: ReadAccumulator(inst, m); return true;
    case Opcode::LoadParameterRam: LoadParameterRam(inst, m); return true;
    case Opcode::EngineNop: return true;
    default: return true;  // unsupported opcodes never pass validation
  }
}

}  // namespace dvejit
