# Batch-norm backward chain over 128 channels x 1024 fp32 elements (examples/README.md),
# the same chain as bench/workloads.cc's BnBackward with eps = 1e-5.
#
# Layout (MakeBnLayout(128, 1024, fp32)); channel c in SBUF partition c, byte offsets:
#
#   0x0000  x         1024 fp32   (input, --load)
#   0x1000  dy        1024 fp32   (input, --load)
#   0x2000  dx        1024 fp32   (output, --dump)
#   0x3040  mean, var             (input: bn_forward.s's output, --load)
#   0x3048  var + eps
#   0x304C  vf = 1/sqrt(var + eps)
#   0x3050  gamma                 (input, --load)
#   0x3054  gamma * vf
#   0x3058  A = gamma * vf / N
#   0x3080  sums: 2 tiles x [s0, s1, s2]; tile 0's slot ends up with the totals
#           s0 = sum(dy) (d beta), s1 = sum(dy * xhat) (d gamma), s2 = sum(dy * (x - mean)) * vf^2
#
# dx = A * (N * dy - s0 - (x - mean) * s2) = (gamma * vf / N) * (N * dy - sum(dy) - xhat * sum(dy * xhat))

# vf = 1/sqrt(var + eps): TensorScalar ADD of an instruction immediate, then the RSQRT form
# (op0=rsqrt, op1=bypass, both immediates and sources zero)
TensorScalarArith src=sbuf[0]+0x3044[1:1] dst=sbuf[0]+0x3048[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add imm0=1e-5 op1=bypass
TensorScalarArith src=sbuf[0]+0x3048[1:1] dst=sbuf[0]+0x304C[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=rsqrt op1=bypass

# GradAccum2 per 512-element tile: mean (imm0) and vf (imm1) are pointer immediates
BatchNormGradAccumulate2 imm0=sbuf[0]+0x3040 imm1=sbuf[0]+0x304C src0=sbuf[0]+0x0[512:1] src1=sbuf[0]+0x1000[512:1] dst=sbuf[0]+0x3080[3:1] in_dtypes=fp32,fp32 imm_out_dtypes=fp32,fp32 imm_srcs=ptr,ptr n=128
BatchNormGradAccumulate2 imm0=sbuf[0]+0x3040 imm1=sbuf[0]+0x304C src0=sbuf[0]+0x800[512:1] src1=sbuf[0]+0x1800[512:1] dst=sbuf[0]+0x308C[3:1] in_dtypes=fp32,fp32 imm_out_dtypes=fp32,fp32 imm_srcs=ptr,ptr n=128

# combine the tile sums into tile 0's slot
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=add n=128 src0=sbuf[0]+0x3080[3:1] src1=sbuf[0]+0x308C[3:1] dst=sbuf[0]+0x3080[3:1]

# A = gamma * vf / N
TensorTensorArith in_dtypes=fp32,fp32 out_dtype=fp32 op=mult n=128 src0=sbuf[0]+0x3050[1:1] src1=sbuf[0]+0x304C[1:1] dst=sbuf[0]+0x3054[1:1]
TensorScalarArith src=sbuf[0]+0x3054[1:1] dst=sbuf[0]+0x3058[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=mult imm0=0.0009765625 op1=bypass

# ParamLoad2: N = 1024, mean (imm0), A (imm1); B = s0 and C = s2 (sums elements 0 and 2: step 2)
BatchNormParamLoad2 src=sbuf[0]+0x3080[2:2] element_count=1024 src_dtype=fp32 immediate_dtype=fp32 n=128 imm0_ptr=sbuf[0]+0x3040 imm1_ptr=sbuf[0]+0x3058 imm0_src=ptr imm1_src=ptr

# BackProp per tile: dx = (dy * N - ((x - mean) * C + B)) * A
BatchNormBackProp in_dtypes=fp32,fp32 out_dtype=fp32 op=bypass n=128 src0=sbuf[0]+0x0[512:1] src1=sbuf[0]+0x1000[512:1] dst=sbuf[0]+0x2000[512:1]
BatchNormBackProp in_dtypes=fp32,fp32 out_dtype=fp32 op=bypass n=128 src0=sbuf[0]+0x800[512:1] src1=sbuf[0]+0x1800[512:1] dst=sbuf[0]+0x2800[512:1]
