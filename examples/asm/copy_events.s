# Fill, wait, copy and cast, with semaphores and a register-held address.

# 256 fp32 ones per channel (set_value is the raw 32-bit pattern of 1.0f)
Memset dtype=fp32 n=128 dst_element_count=256 set_value=0x3F800000 dst=sbuf[0]+0x0[256:1]

# Wait until semaphore 1 >= 1, copy to the address held in register 7, then increment
# semaphore 2 on completion.
Copy wait=SEM_GE_IMM:1 semval=1 src=sbuf[0]+0x0[256:1] dst=reg(7)[256:1] in_dtype=fp32 out_dtype=fp32 n=128 update=SEM_INC_COMPLETE:2

# Cast to bf16, reading the tile as 16 rows of 16 (dimension 0 first: [num:step, ...]) and
# writing it transposed (a PSUM destination would need a 4-byte dtype).
Cast src=sbuf[0]+0x0[16:1,16:16] dst=sbuf[0]+0x1000[16:16,16:1] in_dtype=fp32 out_dtype=bf16 n=128 debug=START

# Copy into PSUM (4-byte dtype).
Copy src=sbuf[0]+0x0[256:1] dst=psum[0]+0x0[256:1] in_dtype=fp32 out_dtype=fp32 n=128

EngineNop   # a record of zeros: every payload byte is 0
