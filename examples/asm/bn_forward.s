# BatchNorm forward statistics (docs/asm.md, "A worked example").
#
# Every one of 128 channels (partition c = channel c) holds 1024 fp32 values at offset 0x0 of
# its SBUF partition. Two BatchNormStats2 instructions each summarise one 512-element tile
# (Welford over the even and the odd elements: 6 values per channel), and BatchNormAggregate
# merges the 4 (count, mean, m2) tuples into [mean, var] per channel.

.recip_table            # Parameter RAM entry k = 1/(k+1): the reciprocals Welford's mean needs

# tile 0: elements 0..511 -> 6 stats at 0x1000
BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x1000[6:1]
# tile 1: elements 512..1023 (byte offset 512 * 4 = 0x800) -> 6 stats at 0x1018
BatchNormStats2 src=sbuf[0]+0x800[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x1018[6:1]
# 12 stats = 4 tuples -> mean at 0x1100, variance at 0x1104; then signal semaphore 0
BatchNormAggregate src=sbuf[0]+0x1000[12:1] in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x1100[2:1] update=SEM_INC_READ:0
