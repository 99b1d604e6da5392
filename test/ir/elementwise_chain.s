# Golden IR (FileCheck): element-wise chains through memory. The first four instructions run in
# one row loop: the in-place add reads the multiply's result without a load, and the multiply's
# store is dead (the add rewrites the same tensor); the max and the reciprocal take their sources
# from the chain. The bf16 pair forwards through the bf16 rounding. The last instruction reads its
# predecessor's destination one element further on (an overlap that is not identical): it starts
# a chain of its own.
# RUN: dvejit ir %s | FileCheck %s
#
# CHECK-LABEL: ; after passes
# CHECK: region 0 channel-major
# CHECK: tensor_scalar MULT,BYPASS rev=0 %{{[0-9]+}} %{{[0-9]+}}, sbuf %arg2 FP32{{.*}} no-store
# CHECK: tensor_scalar ADD,BYPASS rev=0 %{{[0-9]+}} %{{[0-9]+}}, from %2, sbuf {{.*}} fused
# CHECK-NEXT: tensor_tensor MAX, from %5, sbuf {{.*}} fused
# CHECK-NEXT: reciprocal, from %6, sbuf {{.*}} fused
# CHECK: tensor_scalar MULT,BYPASS {{.*}} BFLOAT16{{.*}} fused
# CHECK: tensor_scalar ADD,BYPASS rev=0 %{{[0-9]+}} %{{[0-9]+}}, from %10, sbuf {{.*}} fused
# CHECK: tensor_scalar ADD,BYPASS rev=0 %{{[0-9]+}} %{{[0-9]+}}, sbuf %arg23 FP32[512:1,1:0,1:0], sbuf %arg24 FP32[512:1,1:0,1:0]  ;
TensorScalarArith src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=mult op1=bypass imm0=2 dst=sbuf[0]+0x1000[512:1]
TensorScalarArith src=sbuf[0]+0x1000[512:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add op1=bypass imm0=1 dst=sbuf[0]+0x1000[512:1]
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=max n=128 src0=sbuf[0]+0x1000[512:1] src1=sbuf[0]+0x0[512:1] dst=sbuf[0]+0x2000[512:1]
Reciprocal src=sbuf[0]+0x2000[512:1] in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x3000[512:1]
TensorScalarArith src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=bf16 n=128 op0=mult op1=bypass imm0=3 dst=sbuf[0]+0x4000[512:1]
TensorScalarArith src=sbuf[0]+0x4000[512:1] in_dtype=bf16 out_dtype=fp32 n=128 op0=add op1=bypass imm0=1 dst=sbuf[0]+0x5000[512:1]
TensorScalarArith src=sbuf[0]+0x5004[512:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add op1=bypass imm0=1 dst=sbuf[0]+0x6000[512:1]
