# Golden IR (FileCheck): a chain that must not fuse. The second instruction reads, starting at
# partition 1, what the first wrote starting at partition 0: channel c of the second depends on
# channel c + 1 of the first, so they cannot run channel-block-major together.
# RUN: dvejit ir %s | FileCheck %s
#
# CHECK-LABEL: ; after passes
# CHECK: region 0 channel-major
# CHECK: tensor_scalar MULT,BYPASS
# CHECK: region 1 channel-major
# CHECK: tensor_scalar ADD,BYPASS
# CHECK: region 2 channel-major
# CHECK: tensor_tensor ADD
TensorScalarArith src=sbuf[0]+0x0[64:1] in_dtype=fp32 out_dtype=fp32 n=64 op0=mult op1=bypass imm0=2 dst=sbuf[0]+0x1000[64:1]
TensorScalarArith src=sbuf[1]+0x1000[64:1] in_dtype=fp32 out_dtype=fp32 n=64 op0=add op1=bypass imm0=1 dst=sbuf[0]+0x2000[64:1]
# Same partitions as the previous instruction's destination, but that one started at 0 and this
# reads from 2: a new region again.
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add n=32 src0=sbuf[2]+0x2000[64:1] src1=sbuf[2]+0x0[64:1] dst=sbuf[64]+0x3000[64:1]
