# Normalise after bn_forward.s: y = (x - mean) * 1/sqrt(var + eps), per channel, to bf16.
# The per-channel mean and 1/sqrt(var + eps) are read through pointer immediates: channel c
# reads partition c at the pointer's offset.

# var + eps (in place of nothing: written to 0x1108)
TensorScalarArith src=sbuf[0]+0x1104[1:1] dst=sbuf[0]+0x1108[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=add imm0=1e-5 op1=bypass
# 1/sqrt(.) with the RSQRT form (op0=rsqrt, op1=bypass, both immediates and sources zero)
TensorScalarArith src=sbuf[0]+0x1108[1:1] dst=sbuf[0]+0x1108[1:1] in_dtype=fp32 out_dtype=fp32 n=128 op0=rsqrt op1=bypass
# (x - mean) * rstd: both immediates are pointers (imm0_src/imm1_src inferred as ptr)
TensorScalarArith src=sbuf[0]+0x0[1024:1] dst=sbuf[0]+0x2000[1024:1] in_dtype=fp32 out_dtype=bf16 n=128 op0=subtract imm0=sbuf[0]+0x1100 op1=mult imm1=sbuf[0]+0x1108
