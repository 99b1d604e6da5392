# Batch-norm forward statistics over 128 channels x 1024 fp32 elements (examples/README.md).
#
# The layout is bench/workloads.cc's MakeBnLayout(128, 1024, fp32): channel c lives in SBUF
# partition c, and every address below is a byte offset inside that partition.
#
#   0x0000  x      1024 fp32   (input, --load)
#   0x3000  stats  2 tiles x 6 fp32 (Stats2 outputs)
#   0x3040  mean, var          (Aggregate output, --dump)
#
# Stats2 reads at most 512 elements, so each channel is summarised as two 512-element tiles:
# Welford over the even and the odd elements gives [even_count, mean_even, m2_even, odd_count,
# mean_odd, m2_odd]. Aggregate then merges the 4 (count, mean, m2) tuples into [mean, var]
# (population variance).

.recip_table            # Parameter RAM entry k = 1/(k+1): the reciprocals Welford's mean needs

# tile 0: elements 0..511 -> stats[0..5]
BatchNormStats2 src=sbuf[0]+0x0[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x3000[6:1]
# tile 1: elements 512..1023 (byte offset 512 * 4 = 0x800) -> stats[6..11]
BatchNormStats2 src=sbuf[0]+0x800[512:1] in_dtype=fp32 out_dtype=fp32 n=128 even_count=256 odd_count=256 dst=sbuf[0]+0x3018[6:1]
# 12 stats = 4 tuples -> mean at 0x3040, var at 0x3044
BatchNormAggregate src=sbuf[0]+0x3000[12:1] in_dtype=fp32 out_dtype=fp32 n=128 dst=sbuf[0]+0x3040[2:1]
