# Golden IR (FileCheck): the BN backward chain fuses into one channel-major region, and
# ParamLoad2's lane state reaches BackProp as SSA values (no lane.get left).
# RUN: dvejit ir %s | FileCheck %s
#
# CHECK-LABEL: ; before passes
# CHECK: lane.get
# CHECK-LABEL: ; after passes
# CHECK: region 0 channel-major [0,
# CHECK-NOT: region 1
# CHECK: grad_sums
# CHECK: lane.set N [[N:%[0-9]+]]
# CHECK-NEXT: lane.set mean [[MEAN:%[0-9]+]]
# CHECK-NEXT: lane.set A [[A:%[0-9]+]]
# CHECK-NEXT: lane.set B [[B:%[0-9]+]]
# CHECK-NEXT: lane.set C [[C:%[0-9]+]]
# CHECK-NOT: lane.get
# CHECK: backprop [[N]] [[MEAN]] [[A]] [[B]] [[C]],
# CHECK-NOT: lane.get

TensorScalarArith src=sbuf[0]+0x3044[1:1] dst=sbuf[0]+0x3048[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add imm0=1e-5 op1=bypass
TensorScalarArith src=sbuf[0]+0x3048[1:1] dst=sbuf[0]+0x304C[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=rsqrt op1=bypass
BatchNormGradAccumulate2 imm0=sbuf[0]+0x3040 imm1=sbuf[0]+0x304C src0=sbuf[0]+0x0[512:1] src1=sbuf[0]+0x1000[512:1] dst=sbuf[0]+0x3080[3:1] in_dtypes=fp32,fp32 imm_out_dtypes=fp32,fp32 imm_srcs=ptr,ptr n=128
BatchNormGradAccumulate2 imm0=sbuf[0]+0x3040 imm1=sbuf[0]+0x304C src0=sbuf[0]+0x800[512:1] src1=sbuf[0]+0x1800[512:1] dst=sbuf[0]+0x308C[3:1] in_dtypes=fp32,fp32 imm_out_dtypes=fp32,fp32 imm_srcs=ptr,ptr n=128
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add n=128 src0=sbuf[0]+0x3080[3:1] src1=sbuf[0]+0x308C[3:1] dst=sbuf[0]+0x3080[3:1]
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=mult n=128 src0=sbuf[0]+0x3050[1:1] src1=sbuf[0]+0x304C[1:1] dst=sbuf[0]+0x3054[1:1]
TensorScalarArith src=sbuf[0]+0x3054[1:1] dst=sbuf[0]+0x3058[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=mult imm0=0.0009765625 op1=bypass
BatchNormParamLoad2 src=sbuf[0]+0x3080[2:2] element_count=1024 src_dtype=fp32 immediate_dtype=fp32 n=128 imm0_ptr=sbuf[0]+0x3040 imm1_ptr=sbuf[0]+0x3058 imm0_src=ptr imm1_src=ptr
BatchNormBackProp in_dtypes=fp32,fp32 out_dtype=fp32 op=bypass n=128 src0=sbuf[0]+0x0[512:1] src1=sbuf[0]+0x1000[512:1] dst=sbuf[0]+0x2000[512:1]
BatchNormBackProp in_dtypes=fp32,fp32 out_dtype=fp32 op=bypass n=128 src0=sbuf[0]+0x800[512:1] src1=sbuf[0]+0x1800[512:1] dst=sbuf[0]+0x2800[512:1]
