// placeholder: the interpreter benchmark suite is written in its own change
#include <benchmark/benchmark.h>
BENCHMARK_MAIN();
