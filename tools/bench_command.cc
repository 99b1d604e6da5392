#include "tools/bench_command.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>

#include <regex.h>

#include "absl/strings/str_join.h"
#include "bench/roof.h"
#include "bench/workloads.h"
#include "frontend/strcat.h"
#include "kernels/numerics.h"
#include "runtime/executor.h"
#include "runtime/jit_tier.h"
#include "tools/program_io.h"

namespace dvejit {
namespace {

using Clock = std::chrono::steady_clock;

// One workload instance: its machine, program and the bytes the roof kernel moves.
struct Instance {
  std::string workload;
  int elements;
  Dtype dtype;
  std::unique_ptr<Machine> machine;
  std::vector<Instruction> program;
  int64_t minimal_bytes = 0;  // bytes the roof moves
  double roof_ns = 0;         // the roof's median time per iteration: at setup, then its own row's
  // roof kernel over the same memory
  std::function<void()> roof;
  // --cold: evicts from the caches every byte that the program or the roof touches in the 128
  // partitions, before each timed run of every tier; empty when the runs are warm.
  std::function<void()> evict;
};

// The median of `t` (sorted in place); 0 for none.
double Median(std::vector<double>& t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

double NsSince(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

// The median time of `reps` runs of `fn`, each after `before` (untimed) where there is one.
double MedianNs(const std::function<void()>& fn, int reps, const std::function<void()>& before = {}) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    if (before) before();
    const auto t0 = Clock::now();
    fn();
    t.push_back(NsSince(t0));
  }
  return Median(t);
}

// The median over about `span_ns` of runs (at least `min_reps`), after about `warm_ns` of runs
// that are not counted: the first tens of runs on fresh memory can take about 1.2 times the later
// ones, which a median of 21 runs taken right away still shows.
// `before` runs (untimed) before each counted run, where there is one.
double SteadyMedianNs(const std::function<void()>& fn, double warm_ns, double span_ns, int min_reps,
                      const std::function<void()>& before = {}) {
  const double one_ns = std::max(MedianNs(fn, 5, before), 1.0);
  for (double spent = 5 * one_ns; spent < warm_ns; spent += one_ns) fn();
  return MedianNs(fn, static_cast<int>(std::clamp(span_ns / one_ns, double(min_reps), 20001.0)), before);
}

// Values in [0.5, 2) stored as `dt` (a bf16 workload reads bf16 numbers, not halves of fp32
// patterns, which are NaNs, infinities and subnormals as often as not).
void FillRandom(Machine& m, uint32_t bytes, Dtype dt) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  std::vector<uint8_t> row(bytes);
  const size_t es = static_cast<size_t>(DtypeSize(dt));
  for (size_t i = 0; i + es <= row.size(); i += es) {
    const uint32_t raw = num::StoreFromF32(dt, u(rng));
    std::memcpy(&row[i], &raw, es);  // little-endian: the low bytes are the element
  }
  for (int c = 0; c < kPartitions; ++c) (void)m.Write(Space::Sbuf, c, 1, 0, row, bytes);
}

// One partition's bytes that a workload's program or roof touches.
struct Span {
  uint32_t offset;
  size_t bytes;
};

// `cold`: with Instance::evict set (--cold).
std::unique_ptr<Instance> MakeInstance(const std::string& workload, int elements, Dtype dt, bool cold) {
  auto in = std::make_unique<Instance>();
  in->workload = workload;
  in->elements = elements;
  in->dtype = dt;
  in->machine = std::make_unique<Machine>(Generation::Cayman);
  Machine& m = *in->machine;
  m.PreloadReciprocals();
  const int es = DtypeSize(dt);
  const size_t row = static_cast<size_t>(elements) * es;
  const size_t pitch = m.Pitch(Space::Sbuf);
  uint8_t* base = m.state().sbuf;
  std::vector<Span> touched;
  if (workload == "bn_stats" || workload == "bn_backward") {
    const workloads::BnLayout l = workloads::MakeBnLayout(kPartitions, elements, dt);
    touched = {{0, l.end}};
    workloads::LoadBnInputs(m, l, 3);
    if (workload == "bn_stats") {
      in->program = workloads::BnForward(l, Generation::Cayman);
      in->minimal_bytes = static_cast<int64_t>(row) * kPartitions;
      in->roof = [=] { benchmark::DoNotOptimize(roof::ReadRows(base + l.x, pitch, kPartitions, row)); };
    } else {
      // The forward statistics first (once), so the backward chain has mean and var.
      const auto fwd = workloads::BnForward(l, Generation::Cayman);
      (void)RunProgram(m, fwd, RunOptions{});
      in->program = workloads::BnBackward(l, Generation::Cayman, 1e-5f);
      in->minimal_bytes = 3 * static_cast<int64_t>(row) * kPartitions;
      in->roof = [=] { roof::ReadTwoWriteOne(base + l.x, base + l.dy, base + l.dx, pitch, kPartitions, row); };
    }
  } else {
    FillRandom(m, 3 * (64 << 10), dt);
    touched = {{workloads::kX, row}, {workloads::kDy, row}, {workloads::kOut, row}};
    const std::string op = workload == "tensor_scalar" ? "TensorScalar"
                           : workload == "tensor_tensor" ? "TensorTensor" : "Reciprocal";
    in->program = workloads::TiledOpProgram(op, kPartitions, elements, dt, Generation::Cayman);
    const bool two = workload == "tensor_tensor";
    in->minimal_bytes = (two ? 3 : 2) * static_cast<int64_t>(row) * kPartitions;
    if (two)
      in->roof = [=] { roof::ReadTwoWriteOne(base + workloads::kX, base + workloads::kDy, base + workloads::kOut, pitch, kPartitions, row); };
    else
      in->roof = [=] { roof::ReadOneWriteOne(base + workloads::kX, base + workloads::kOut, pitch, kPartitions, row); };
  }
  if (cold)
    in->evict = [=] {
      for (const Span& s : touched) roof::EvictRows(base + s.offset, pitch, kPartitions, s.bytes);
    };
  in->roof();  // first touch
  // About 20 ms of runs (at least 31): 31 runs of a 1 µs roof were too few on a noisy VM, whose
  // setup medians of the 512-element roofs came out 1.3-1.7 times the roof rows' own.
  in->roof_ns = SteadyMedianNs(in->roof, 0, 20e6, 31, in->evict);
  return in;
}

// The counters come from the median iteration: a VM's rare multi-millisecond stalls (page
// compaction, a neighbour) would otherwise dominate a mean.
void SetCounters(benchmark::State& state, const Instance* in, std::vector<double>& ns) {
  const double median = Median(ns);
  state.counters["ratio_to_roof"] = median / in->roof_ns;
  state.counters["bytes_per_second"] = median > 0 ? static_cast<double>(in->minimal_bytes) / (median * 1e-9) : 0;
  state.counters["median_us"] = median / 1000;
}

// One untimed run (the JIT compiles there): "" if it ran on the tier asked for, else why not
// (a failed run, or a stream meant for the JIT that ran interpreted).
std::string WarmUpProblem(Machine& m, const std::vector<Instruction>& program, const RunOptions& o) {
  const RunReport warm = RunProgram(m, program, o);
  if (!warm.status.ok()) return std::string(warm.status.message());
  if (o.tier == ExecutionTier::Jit && warm.tier != "jit") return "the JIT did not run the stream";
  return "";
}

// WarmUpProblem, with the benchmark skipped and the reason given on a problem.
bool WarmUp(benchmark::State& state, Machine& m, const std::vector<Instruction>& program, const RunOptions& o) {
  const std::string problem = WarmUpProblem(m, program, o);
  if (problem.empty()) return true;
  state.SkipWithError(problem.c_str());
  return false;
}

// The instance's eviction (--cold), outside Google Benchmark's timer as well as ours (its own
// time and items_per_second then count the runs alone, as the counters do).
void Evict(benchmark::State& state, const Instance& in) {
  if (!in.evict) return;
  state.PauseTiming();
  in.evict();
  state.ResumeTiming();
}

// `threads`: RunOptions::threads of the JIT tiers.
void RunTier(benchmark::State& state, Instance* in, const std::string& tier, int threads) {
  std::vector<double> ns;
  ns.reserve(1 << 16);
  if (tier == "roof") {
    for (auto _ : state) {
      Evict(state, *in);
      const auto t0 = Clock::now();
      in->roof();
      ns.push_back(NsSince(t0));
    }
    // The tiers after it compare with this median, of the most runs and the nearest in time.
    if (!ns.empty()) in->roof_ns = Median(ns);
  } else {
    RunOptions o;
    o.tier = tier == "interp" ? ExecutionTier::Interp : ExecutionTier::Jit;
    o.jit_fuse = tier == "jit_fused";
    o.threads = threads;
    if (!WarmUp(state, *in->machine, in->program, o)) return;
    for (auto _ : state) {
      Evict(state, *in);
      const auto t0 = Clock::now();
      RunReport r = RunProgram(*in->machine, in->program, o);
      ns.push_back(NsSince(t0));
      benchmark::DoNotOptimize(r.executed);
    }
  }
  SetCounters(state, in, ns);
  state.SetItemsProcessed(state.iterations() * int64_t{kPartitions} * in->elements);
}

const char* DtName(Dtype d) { return d == Dtype::FP32 ? "fp32" : "bf16"; }

// "MODEL NAME (family F, model M)" from /proc/cpuinfo, or "" where there is none.
std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name, family, model;
  auto value = [](const std::string& l) {
    const size_t c = l.find(':');
    return c == std::string::npos ? std::string() : l.substr(std::min(c + 2, l.size()));
  };
  while (std::getline(in, line) && !line.empty()) {
    if (line.rfind("model name", 0) == 0) name = value(line);
    else if (line.rfind("cpu family", 0) == 0) family = value(line);
    else if (line.rfind("model", 0) == 0 && line.rfind("model name", 0) != 0) model = value(line);
  }
  if (name.empty()) return "";
  return Cat(name, " (family ", family, ", model ", model, ")");
}

// An Instance set up when a benchmark first asks for it: a filtered run sets up only what it
// runs (all of them take seconds and hundreds of MiB), and no set-up precedes a filter that
// matches nothing.
class LazyInstance {
 public:
  LazyInstance(std::string workload, int elements, Dtype dtype, bool cold)
      : workload_(std::move(workload)), elements_(elements), dtype_(dtype), cold_(cold) {}
  Instance* get() {
    if (!made_) made_ = MakeInstance(workload_, elements_, dtype_, cold_);
    return made_.get();
  }

 private:
  std::string workload_;
  int elements_;
  Dtype dtype_;
  bool cold_;
  std::unique_ptr<Instance> made_;
};

// Compile time (cold), cache-hit time, and tiny-instruction overhead.
void RegisterJitOverheads(std::vector<std::unique_ptr<LazyInstance>>& keep) {
  keep.push_back(std::make_unique<LazyInstance>("bn_backward", 8192, Dtype::FP32, /*cold=*/false));
  LazyInstance* chain = keep.back().get();
  benchmark::RegisterBenchmark("compile/bn_backward/128x8192/fp32/cold", [chain](benchmark::State& s) {
    Instance* in = chain->get();
    for (auto _ : s) {
      auto c = JitTier::Global().CompileUncached(in->program, Generation::Cayman);
      if (!c.ok()) { s.SkipWithError(std::string(c.status().message()).c_str()); return; }
    }
  })->Unit(benchmark::kMillisecond)->Iterations(5);
  benchmark::RegisterBenchmark("compile/bn_backward/128x8192/fp32/cache_hit", [chain](benchmark::State& s) {
    Instance* in = chain->get();
    bool hit = false;
    (void)JitTier::Global().Get(in->program, Generation::Cayman, &hit);
    for (auto _ : s) benchmark::DoNotOptimize(JitTier::Global().Get(in->program, Generation::Cayman, &hit));
  })->Unit(benchmark::kMicrosecond);
  // 64 TensorScalar instructions of 1 channel × 8 elements: the median run's time per
  // instruction, in nanoseconds (a plain counter: Google Benchmark's inverted rates are seconds).
  constexpr int kTinyInstructions = 64;
  for (const char* tier : {"interp", "jit"}) {
    benchmark::RegisterBenchmark(Cat("tiny/1x8/fp32/", tier).c_str(), [tier](benchmark::State& s) {
      static Machine m(Generation::Cayman);
      std::vector<Instruction> prog;
      for (int i = 0; i < kTinyInstructions; ++i) {
        auto one = workloads::TiledOpProgram("TensorScalar", 1, 8, Dtype::FP32, Generation::Cayman);
        prog.insert(prog.end(), one.begin(), one.end());
      }
      RunOptions o;
      o.tier = std::string(tier) == "jit" ? ExecutionTier::Jit : ExecutionTier::Interp;
      if (!WarmUp(s, m, prog, o)) return;
      std::vector<double> ns;
      for (auto _ : s) {
        const auto t0 = Clock::now();
        benchmark::DoNotOptimize(RunProgram(m, prog, o).executed);
        ns.push_back(NsSince(t0));
      }
      s.counters["ns_per_instruction"] = Median(ns) / kTinyInstructions;
    })->Unit(benchmark::kMicrosecond);
  }
}

// How the comparison times both sides (the script gets them on its command line): runs for
// about kCompareWarmMs that are not counted, then the median over about kCompareSpanMs of runs,
// at least kCompareMinReps. Both sides run 128 channels × kCompareElements.
constexpr int kCompareWarmMs = 100, kCompareSpanMs = 200, kCompareMinReps = 21, kCompareElements = 8192;

// The comparison script: installed beside the binary (PREFIX/share/dvejit), or in the source
// tree the binary was built from, so that the command works from any directory.
std::string TorchScript() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const std::filesystem::path& p :
       {exe.parent_path().parent_path() / "share" / "dvejit" / "torch_bn_bench.py",
        std::filesystem::path(DVEJIT_SOURCE_DIR) / "bench" / "torch_bn_bench.py"})
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  return "";
}

// `s` quoted for /bin/sh.
std::string ShellQuoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// PyTorch's CPU batch norm (1 thread) next to the fused JIT on 128 × 8192 fp32.
int RunTorchComparison(std::ostream& out, std::ostream& err) {
  const std::string path = TorchScript();
  if (path.empty()) return err << "dvejit bench: torch_bn_bench.py not found (installed or in the source tree)\n", 1;
  const std::string script =
      Cat("/usr/bin/python3 ", ShellQuoted(path), " --channels 128 --elements ", kCompareElements,
          " --threads 1 --reps ", kCompareMinReps, " --warm-ms ", kCompareWarmMs, " --span-ms ", kCompareSpanMs);
  FILE* p = popen(script.c_str(), "r");
  if (p == nullptr) return err << "dvejit bench: cannot run " << path << "\n", 1;
  char buf[4096] = {};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  if (pclose(p) != 0 || n == 0)
    return err << "dvejit bench: " << path << " failed (it needs Debian's python3-torch)\n", 1;
  const std::string json(buf, n);
  auto field = [&](const char* key) {
    const size_t k = json.find(key);
    return k == std::string::npos ? -1.0 : std::atof(json.c_str() + json.find(':', k) + 1);
  };
  const double torch_fwd = field("\"forward_stats_ms\""), torch_bwd = field("\"backward_ms\"");
  if (!(torch_fwd > 0 && torch_bwd > 0))
    return err << "dvejit bench: no timings in the script's output: " << json.substr(0, json.find('\n')) << "\n", 1;
  RunOptions o;
  o.tier = ExecutionTier::Jit;
  double ms[2];
  const char* names[2] = {"bn_stats", "bn_backward"};
  for (int i = 0; i < 2; ++i) {
    auto in = MakeInstance(names[i], kCompareElements, Dtype::FP32, /*cold=*/false);
    // The comparison is with the JIT: an interpreted run would understate dvejit tens of times.
    const std::string problem = WarmUpProblem(*in->machine, in->program, o);
    if (!problem.empty()) return err << "dvejit bench: " << names[i] << ": " << problem << "\n", 1;
    ms[i] = SteadyMedianNs([&] { (void)RunProgram(*in->machine, in->program, o); }, kCompareWarmMs * 1e6,
                           kCompareSpanMs * 1e6, kCompareMinReps) / 1e6;
  }
  char line[256];
  out << "PyTorch CPU batch norm vs dvejit JIT (fused), 128 channels x " << kCompareElements
      << " elements, fp32, 1 thread\n";
  std::snprintf(line, sizeof line, "  forward statistics: torch %.3f ms, dvejit %.3f ms, dvejit %.1fx faster\n",
                torch_fwd, ms[0], torch_fwd / ms[0]);
  out << line;
  std::snprintf(line, sizeof line, "  backward chain:     torch %.3f ms, dvejit %.3f ms, dvejit %.2fx faster\n",
                torch_bwd, ms[1], torch_bwd / ms[1]);
  out << line << "  (torch: " << json.substr(0, json.find('\n')) << ")\n";
  return 0;
}

// Why Google Benchmark would refuse `filter` ("" if it would not): it compiles the filter, less
// a leading '-' (a negative filter), as a POSIX extended regular expression, and otherwise only
// reports the failure and runs nothing, with exit status 0. (POSIX's regcomp here: GCC 12 warns
// of uninitialised members inside std::regex in the sanitizer build, and warnings are errors.)
std::string FilterProblem(std::string filter) {
  if (!filter.empty() && filter[0] == '-') filter.erase(0, 1);
  regex_t re;
  const int rc = regcomp(&re, filter.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return "";
  }
  char why[256];
  regerror(rc, &re, why, sizeof why);
  return Cat("--benchmark_filter '", filter, "' is not a regular expression: ", why);
}

// The workloads (MakeInstance builds each): all of them, in this order, unless --workload picks.
const std::vector<std::string> kWorkloads = {"bn_stats", "bn_backward", "tensor_scalar", "tensor_tensor", "reciprocal"};

}  // namespace

int BenchMain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> bm_args = {"dvejit-bench"};
  std::vector<std::string> workloads_sel;  // empty: all of kWorkloads
  std::string json_file;
  std::vector<int> sizes = {512, 8192, 16384};
  bool torch = false;
  bool cold = false;
  int threads = 1;
  auto usage_error = [&](const std::string& what) {
    err << "dvejit: bench: " << what << " (dvejit bench --help)\n";
    return 2;
  };
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--help" || a == "-h") {
      out << "usage: dvejit bench [--json FILE] [--quick] [--compare-torch] [--workload W]...\n"
             "                    [--threads T] [--cold]\n"
             "                    [Google Benchmark flags, e.g. --benchmark_filter=REGEX]\n"
          << "Workloads " << absl::StrJoin(kWorkloads, ", ") << " on 128 channels\n"
             "x {512, 8192, 16384} elements, fp32 and bf16, on the tiers roof, interp, jit_unfused,\n"
             "jit_fused; each entry is WORKLOAD/128xN/DTYPE/TIER with counters ratio_to_roof (median\n"
             "time over the roof kernel's median, measured in this run), bytes_per_second (minimal\n"
             "bytes over the median time) and median_us.\n"
             "Also: cold compile and cache-hit time of the BN backward chain, and tiny instructions\n"
             "(1 channel x 8 elements; counter ns_per_instruction, the median run's nanoseconds per\n"
             "instruction). --quick: 512 and 8192 only, short runs (a --benchmark_min_time given\n"
             "too wins). --compare-torch: PyTorch's CPU batch norm on the same shapes (1 thread);\n"
             "with --benchmark_filter='^$', that alone. --threads T: the jit tiers split each\n"
             "region's channel blocks across T threads (1-256, default 1; the roof and the\n"
             "interpreter stay on one, and the targets are single-thread).\n"
             "--cold: before each timed run of every workload tier, the roof's included, the\n"
             "workload's rows are evicted from every cache level (clflush), so that the ratios\n"
             "compare with memory bandwidth instead of the caches' (context field caches: cold; the\n"
             "default, warm, runs on the rows the previous run left in the caches). Compile,\n"
             "cache-hit, tiny-instruction and PyTorch timings are warm either way.\n"
             "Workloads are set up when first run. Without --compare-torch, a filter that matches\n"
             "nothing is a usage error (exit 2), as is a bad regular expression.\n";
      return 0;
    } else if (a == "--json" || a == "--workload") {
      if (!has_value) return usage_error(Cat(a, " needs a value"));
      const std::string& v = args[++i];
      if (a == "--json") {
        json_file = v;
        bm_args.push_back("--benchmark_out=" + v);
        bm_args.push_back("--benchmark_out_format=json");
      } else if (std::find(kWorkloads.begin(), kWorkloads.end(), v) == kWorkloads.end()) {
        return usage_error(Cat("unknown workload '", v, "' (one of ", absl::StrJoin(kWorkloads, ", "), ")"));
      } else if (std::find(workloads_sel.begin(), workloads_sel.end(), v) == workloads_sel.end()) {
        workloads_sel.push_back(v);
      }
    } else if (a == "--quick") {
      sizes = {512, 8192};
      // Right after the program name: a --benchmark_min_time given anywhere on the line wins.
      bm_args.insert(bm_args.begin() + 1, "--benchmark_min_time=0.05");
    } else if (a == "--compare-torch") {
      torch = true;
    } else if (a == "--cold") {
      cold = true;
    } else if (a == "--threads") {
      const std::optional<int> n = ParseThreadCount(has_value ? std::optional<std::string>(args[++i]) : std::nullopt);
      if (!n) return usage_error(kThreadsRange);
      threads = *n;
    } else if (a.rfind("--benchmark_", 0) == 0) {
      bm_args.push_back(a);
    } else {
      return usage_error(Cat("unexpected argument '", a, "'"));
    }
  }
  if (workloads_sel.empty()) workloads_sel = kWorkloads;
  std::vector<char*> argv;
  for (std::string& a : bm_args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  // Google Benchmark leaves the flags it does not know, or whose value it could not parse:
  // refused before the workloads are set up.
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) return 2;
  if (const std::string problem = FilterProblem(benchmark::GetBenchmarkFilter()); !problem.empty())
    return usage_error(problem);
  // An unwritable output file, found before the set-up (Google Benchmark refuses it only when the
  // runs start: "invalid file name", exit 1). Probed last, so no usage error leaves it created.
  if (!json_file.empty() && !std::ofstream(json_file, std::ios::app)) {
    err << "dvejit: bench: cannot write '" << json_file << "'\n";
    return 2;
  }
  if (!JitTier::Global().available())
    err << "dvejit bench: " << JitTier::Global().unavailable_reason() << " (jit tiers skipped)\n";
  std::vector<std::unique_ptr<LazyInstance>> instances;
  for (const std::string& w : workloads_sel)
    for (int e : sizes)
      for (Dtype dt : {Dtype::FP32, Dtype::BFLOAT16}) {
        instances.push_back(std::make_unique<LazyInstance>(w, e, dt, cold));
        LazyInstance* in = instances.back().get();
        for (const char* tier : {"roof", "interp", "jit_unfused", "jit_fused"})
          benchmark::RegisterBenchmark(Cat(w, "/128x", e, "/", DtName(dt), "/", tier).c_str(),
                                       [in, tier, threads](benchmark::State& s) { RunTier(s, in->get(), tier, threads); })
              ->Unit(benchmark::kMicrosecond);
      }
  RegisterJitOverheads(instances);
  // Which host: the targets are ratios to a roof measured on it, and hosts differ.
  benchmark::AddCustomContext("roof_isa", roof::Isa());
  benchmark::AddCustomContext("cpu_model", CpuModel());
  benchmark::AddCustomContext("jit_target", JitTier::Global().target_description());
  benchmark::AddCustomContext("jit_threads", Cat(threads));
  benchmark::AddCustomContext("caches", cold ? "cold" : "warm");
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // Nothing matched (Google Benchmark said so on stderr, and exits 0): an error, unless the run
  // is for the PyTorch comparison alone (--compare-torch --benchmark_filter='^$'). The --json
  // file Google Benchmark opened holds nothing: not left behind as if it were a result.
  std::error_code ec;
  if (ran == 0 && !json_file.empty() && std::filesystem::is_regular_file(json_file, ec) &&
      std::filesystem::file_size(json_file, ec) == 0)
    std::filesystem::remove(json_file, ec);
  if (ran == 0 && !torch)
    return usage_error(Cat("--benchmark_filter '", benchmark::GetBenchmarkFilter(), "' matches no benchmark"));
  if (torch) return RunTorchComparison(out, err);
  return 0;
}

}  // namespace dvejit
