// Kernel entry points, one per opcode family (internal to kernels/; dispatch in interpreter.cc).
#pragma once

#include "frontend/instruction.h"
#include "kernels/state.h"

namespace dvejit::kernels {

void Stats(const Instruction& inst, MachineState& m);         // 0x60, 0x61, 0x82
void Aggregate(const Instruction& inst, MachineState& m);     // 0x62
void GradAccum(const Instruction& inst, MachineState& m);     // 0x63, 0x94
void ParamLoad(const Instruction& inst, MachineState& m);     // 0x64, 0x8E
void BackProp(const Instruction& inst, MachineState& m);      // 0x65

void TensorScalar(const Instruction& inst, MachineState& m);  // 0x43, 0x53, 0x44, 0x54, 0x93
void TensorScalarCache(const Instruction& inst, MachineState& m);  // 0x9A, 0xE6
void ImmLoad(const Instruction& inst, MachineState& m);       // 0x70, 0x71
void PtrMulti(const Instruction& inst, MachineState& m);      // 0x4F, 0x5F
void TensorTensor(const Instruction& inst, MachineState& m);  // 0x41, 0x51
void Predicated(const Instruction& inst, MachineState& m);    // 0x72, 0x99
void CopyCastReciprocal(const Instruction& inst, MachineState& m);  // 0x46, 0x47, 0x48
void Memset(const Instruction& inst, MachineState& m);        // 0x49

void MatchValueLoad(const Instruction& inst, MachineState& m);  // 0x6D
void Max8(const Instruction& inst, MachineState& m);            // 0x6C
void FindIndex8(const Instruction& inst, MachineState& m);      // 0x6E, 0x6F
void ReadIndices(const Instruction& inst, MachineState& m);     // 0xE9
void ReadAccumulator(const Instruction& inst, MachineState& m); // 0x9B
void LoadParameterRam(const Instruction& inst, MachineState& m);  // 0x66

}  // namespace dvejit::kernels
