// The dvejit command-line tool: asm, dis, validate, run, ucode, train-step.
// Exit codes (validation.md §1): 0 success, 1 an invalid program or runtime error, 2 usage.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/assembler.h"
#include "frontend/diag.h"
#include "frontend/disassembler.h"
#include "frontend/microcode.h"
#include "frontend/strcat.h"
#include "frontend/validate.h"
#include "frontend/operands.h"
#include "ir/passes.h"
#include "runtime/executor.h"
#include "runtime/jit_tier.h"
#include "runtime/machine.h"
#include "runtime/npy.h"
#include "tools/bench_command.h"
#include "tools/program_io.h"
#include "tools/train_step.h"
#include "tools/ucode_command.h"

namespace dvejit {
namespace {

constexpr int kOk = 0, kFail = 1, kUsage = 2;

int UsageError(std::string_view msg, std::string_view help) {
  std::cerr << "dvejit: " << msg << "\n" << help;
  return kUsage;
}
// Errors of kind `usage` exit 2, every other kind 1.
int ReportError(const absl::Status& s) {
  std::cerr << "dvejit: " << s.message() << "\n";
  return ErrorKindOf(s) == ErrorKind::Usage ? kUsage : kFail;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool IsHelp(std::string_view a) { return a == "--help" || a == "-h"; }

// A program file over kMaxProgramBytes is refused from its size, before any of it is read
// (reading it would take seconds and twice its size in memory only to fail). Returns 0 when
// the size is fine or unknown (the read then reports unreadable files).
int CheckProgramSize(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size <= kMaxProgramBytes) return kOk;
  std::cerr << "dvejit: " << path << ": " << size << " bytes, more than the " << kMaxProgramBytes
            << " a program file may have\n";
  return kUsage;
}

// Parses `--gen G`; returns false on a bad value.
bool TakeGen(const std::vector<std::string>& args, size_t& i, Generation* gen) {
  if (i + 1 >= args.size()) return false;
  auto g = ParseGeneration(args[++i]);
  if (!g) return false;
  *gen = *g;
  return true;
}

// Parses the value of `--profile`; false on a bad value.
bool ParseProfile(const std::optional<std::string>& v, Profile* profile) {
  if (v == "contract") *profile = Profile::Contract;
  else if (v == "device") *profile = Profile::Device;
  else return false;
  return true;
}

// Parses the value of `--reg N=VALUE` into `regs`; false on a bad value.
bool ParseRegister(const std::optional<std::string>& v, std::vector<std::pair<int, uint32_t>>* regs) {
  const size_t eq = v ? v->find('=') : std::string::npos;
  uint64_t n, val;
  if (!v || eq == std::string::npos || !ParseU64(std::string_view(*v).substr(0, eq), &n) ||
      n >= kRegisters || !ParseU64(std::string_view(*v).substr(eq + 1), &val) || val > 0xFFFFFFFFu)
    return false;
  regs->emplace_back(static_cast<int>(n), static_cast<uint32_t>(val));
  return true;
}
constexpr char kBadProfile[] = "--profile needs contract or device";
std::string BadRegister(const std::optional<std::string>& v) {
  return Cat("--reg needs N=VALUE with N in 0..63 and a 32-bit VALUE, got '", v.value_or(""), "'");
}

constexpr char kAsmHelp[] =
    "usage: dvejit asm IN.s -o OUT.bin [--gen sunda|cayman|mariana|maverick]\n"
    "Assembles text (docs/asm.md) into a stream of 64-byte records.\n";
constexpr char kDisHelp[] =
    "usage: dvejit dis IN.bin [--gen sunda|cayman|mariana|maverick]\n"
    "Prints one canonical assembly line per 64-byte record.\n";
constexpr char kValidateHelp[] =
    "usage: dvejit validate [--gen sunda|cayman|mariana|maverick] IN.{bin,s}\n"
    "Checks every record against spec/validation.md. Exit 0 when all are valid, 1 when one is\n"
    "not (the error names the predicate), 2 on usage errors.\n";
constexpr char kRunHelp[] =
    "usage: dvejit run PROGRAM [--gen GEN] [--profile contract|device] [--preload-recip]\n"
    "                  [--reg N=VALUE]... [--load SPACE:P:OFF=FILE.npy]...\n"
    "                  [--dump SPACE:P:OFF:DTYPE:ROWSxCOLS=FILE.npy]... [--strict-events]\n"
    "                  [--ucode DIR] [--table-set NAME] [--trace] [--tier interp|jit|auto]\n"
    "                  [--jit-cache DIR] [--threads T]\n"
    "  PROGRAM   binary stream (64-byte records) or assembly text; GEN defaults to cayman\n"
    "  --load    a 1-D or 2-D .npy array of any dtype; row r's raw bytes go to partition P+r\n"
    "            at byte offset OFF (decimal or 0x-hex) of SPACE (sbuf or psum), before the run\n"
    "  --dump    after the run, ROWS partitions from P, COLS elements of DTYPE from OFF, saved as\n"
    "            a ROWSxCOLS .npy (bf16 as uint16 bits, fp8 as uint8 bits). DTYPE: fp32 fp16\n"
    "            bf16 fp8e3 fp8e4 fp8e5 int8 uint8 int16 uint16 int32 uint32\n"
    "  --ucode DIR        a microcode table directory (dve_info.json + blobs); the trace then\n"
    "                     shows each instruction's fast row, slow row and issued micro-steps\n"
    "  --table-set NAME   the active table set (default 'default'; 'saturate' makes integer ALU\n"
    "                     arithmetic clamp). Under --profile device an opcode the set disables is\n"
    "                     rejected (opcode_in_table_set); without --ucode the built-in rosters apply\n"
    "  --trace            print one line per executed instruction to stderr\n"
    "  --tier T           interp (tier 0), jit (compile the stream with LLVM), or auto (default:\n"
    "                     interpret a stream the first time, compile it when it repeats)\n"
    "  --jit-cache DIR    keep compiled streams in DIR across runs (or DVEJIT_JIT_CACHE_DIR)\n"
    "  --threads T        compiled streams split each region's channel blocks across up to T\n"
    "                     threads (1-256, default 1; regions under 1 MiB stay on one). The\n"
    "                     results are the same for every T\n"
    "Exit 0 on success, 1 on an invalid program or runtime error (dumps are not written),\n"
    "2 on usage errors. A run report goes to stderr.\n";
// The pass list comes from the pipeline itself (ir/pipeline.cc), so the help cannot go stale.
std::string IrHelp() {
  std::string help =
      "usage: dvejit ir PROGRAM [--gen GEN] [--profile contract|device] [--reg N=VALUE]...\n"
      "Prints the stream's IR as lowered, then after the JIT's passes, in this order:\n ";
  size_t line = 1;
  const std::vector<std::string> names = ir::PassNames();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string item = Cat(" ", names[i], i + 1 < names.size() ? "," : "");
    if (line + item.size() > 96) help += "\n ", line = 1;
    help += item, line += item.size();
  }
  return help +
         "\n  --profile  what ImmLd and PtrMulti lower to, as in dvejit run (default contract)\n"
         "  --reg      a register's value, for addresses taken from registers (as in dvejit run,\n"
         "             registers hold 0 unless set)\n"
         "Exit 0 on success, 1 on an invalid program, 2 on usage errors.\n";
}
constexpr char kMainHelp[] =
    "usage: dvejit COMMAND [ARGS]\n"
    "commands:\n"
    "  asm         assemble text into 64-byte records\n"
    "  dis         disassemble records into text\n"
    "  validate    check records against the spec\n"
    "  run         execute a program on an emulated DVE\n"
    "  ucode       inspect DVE microcode table directories\n"
    "  ir          print a stream's IR before and after the JIT's passes\n"
    "  bench       benchmark the workloads on every tier against a roof kernel\n"
    "  train-step  replay a built-in batch-norm training step and report its accuracy and speed\n"
    "Run 'dvejit COMMAND --help' for a command's options.\n";

// The common arguments of asm, dis and validate: one input file, --gen, and (asm) -o OUT.
// Returns an exit code when the command is already done (help shown, usage error).
std::optional<int> ParseFileArgs(const std::vector<std::string>& args, const char* help,
                                 std::string_view needs, std::string* in, Generation* gen,
                                 std::string* out = nullptr) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (IsHelp(args[i])) return (std::cout << help, kOk);
    if (out != nullptr && args[i] == "-o" && i + 1 < args.size()) {
      *out = args[++i];
    } else if (args[i] == "--gen") {
      if (!TakeGen(args, i, gen)) return UsageError("--gen needs sunda|cayman|mariana|maverick", help);
    } else if (in->empty() && !args[i].empty() && args[i][0] != '-') {
      *in = args[i];
    } else {
      return UsageError(Cat("unexpected argument '", args[i], "'"), help);
    }
  }
  if (in->empty() || (out != nullptr && out->empty())) return UsageError(needs, help);
  return std::nullopt;
}

int CmdAsm(const std::vector<std::string>& args) {
  std::string in, out;
  Generation gen = Generation::Cayman;
  if (auto done = ParseFileArgs(args, kAsmHelp, "asm needs IN.s and -o OUT.bin", &in, &gen, &out)) return *done;
  if (int rc = CheckProgramSize(in); rc != kOk) return rc;
  auto text = ReadFileBytes(in, kMaxProgramBytes);
  if (!text.ok()) return ReportError(text.status());
  auto prog = Assemble(std::string_view(reinterpret_cast<const char*>(text->data()), text->size()), gen);
  if (!prog.ok()) return ReportError(prog.status());
  const std::vector<uint8_t> bytes = EncodeStream(*prog);
  FILE* f = std::fopen(out.c_str(), "wb");
  if (f == nullptr) return UsageError(Cat("cannot write '", out, "'"), "");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) return UsageError(Cat("cannot write '", out, "'"), "");
  return kOk;
}

int CmdDis(const std::vector<std::string>& args) {
  std::string in;
  Generation gen = Generation::Cayman;
  if (auto done = ParseFileArgs(args, kDisHelp, "dis needs IN.bin", &in, &gen)) return *done;
  if (int rc = CheckProgramSize(in); rc != kOk) return rc;
  auto bytes = ReadFileBytes(in, kMaxProgramBytes);
  if (!bytes.ok()) return ReportError(bytes.status());
  auto prog = DecodeStream(*bytes);
  if (!prog.ok()) return ReportError(prog.status());
  std::cout << DisassembleStream(*prog, gen);
  return kOk;
}

int CmdValidate(const std::vector<std::string>& args) {
  std::string in;
  Generation gen = Generation::Cayman;
  if (auto done = ParseFileArgs(args, kValidateHelp, "validate needs a program file", &in, &gen)) return *done;
  if (int rc = CheckProgramSize(in); rc != kOk) return rc;
  auto prog = LoadProgram(in, gen);
  if (!prog.ok()) return ReportError(prog.status());
  if (auto s = ValidateProgram(*prog, gen); !s.ok()) return ReportError(s);
  std::cerr << "valid: " << prog->size() << " instruction(s) for " << GenerationName(gen) << "\n";
  return kOk;
}

// ---- run ----
struct RegionSpec {
  Space space;
  uint32_t partition;
  uint32_t offset;
};
bool ParseRegion(std::string_view s, RegionSpec* r, std::string* err) {
  // SPACE:P:OFF
  const size_t a = s.find(':'), b = s.find(':', a == std::string_view::npos ? a : a + 1);
  if (a == std::string_view::npos || b == std::string_view::npos) {
    *err = "expected SPACE:P:OFF";
    return false;
  }
  const std::string_view space = s.substr(0, a), p = s.substr(a + 1, b - a - 1), off = s.substr(b + 1);
  if (space == "sbuf") r->space = Space::Sbuf;
  else if (space == "psum") r->space = Space::Psum;
  else { *err = Cat("SPACE is sbuf or psum, got '", space, "'"); return false; }
  uint64_t pv, ov;
  if (p.empty() || p.find_first_not_of("0123456789") != std::string_view::npos || !ParseU64(p, &pv) || pv > 127) {
    *err = Cat("P is a decimal partition 0..127, got '", p, "'");
    return false;
  }
  if (!ParseU64(off, &ov) || ov > 0xFFFFFFFFu) {
    *err = Cat("OFF is a decimal or 0x-hex byte offset, got '", off, "'");
    return false;
  }
  r->partition = static_cast<uint32_t>(pv);
  r->offset = static_cast<uint32_t>(ov);
  return true;
}

struct DumpSpec {
  RegionSpec region;
  Dtype dtype;
  uint32_t rows, cols;
  std::string path;
};
const char* NpyDescr(Dtype d) {
  switch (d) {
    case Dtype::FP32: return "<f4";
    case Dtype::FP16: return "<f2";
    case Dtype::BFLOAT16:
    case Dtype::UINT16: return "<u2";
    case Dtype::INT16: return "<i2";
    case Dtype::INT32: return "<i4";
    case Dtype::UINT32: return "<u4";
    case Dtype::INT8: return "|i1";
    default: return "|u1";  // uint8 and the fp8 formats (as bits)
  }
}

int CmdRun(const std::vector<std::string>& args) {
  std::string program;
  Generation gen = Generation::Cayman;
  RunOptions options;
  options.tier = ExecutionTier::Auto;
  bool preload = false;
  std::vector<std::pair<int, uint32_t>> regs;
  std::vector<std::pair<RegionSpec, std::string>> loads;
  std::vector<DumpSpec> dumps;
  std::string ucode_dir;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (IsHelp(a)) return std::cout << kRunHelp, kOk;
    if (a == "--gen") {
      if (!TakeGen(args, i, &gen)) return UsageError("--gen needs sunda|cayman|mariana|maverick", kRunHelp);
    } else if (a == "--profile") {
      if (auto v = value(); !ParseProfile(v, &options.profile)) return UsageError(kBadProfile, kRunHelp);
    } else if (a == "--preload-recip") {
      preload = true;
    } else if (a == "--strict-events") {
      options.strict_events = true;
    } else if (a == "--trace") {
      options.trace = true;
    } else if (a == "--jit-cache") {
      auto v = value();
      if (!v || v->empty()) return UsageError("--jit-cache needs a directory", kRunHelp);
      // The engine creates the directory and its parents when it starts; a path it could not
      // create would make the JIT unavailable for the run, so it is refused here.
      std::error_code ec;
      for (std::filesystem::path q = std::filesystem::absolute(*v, ec); !ec; q = q.parent_path()) {
        if (std::filesystem::exists(q, ec)) {
          if (!std::filesystem::is_directory(q, ec))
            return UsageError(Cat("--jit-cache: '", *v, "' cannot be a directory ('", q.string(), "' is a file)"), kRunHelp);
          break;
        }
        if (q == q.parent_path()) break;
      }
      setenv("DVEJIT_JIT_CACHE_DIR", v->c_str(), 1);
    } else if (a == "--tier") {
      auto v = value();
      if (v == "interp") options.tier = ExecutionTier::Interp;
      else if (v == "jit") options.tier = ExecutionTier::Jit;
      else if (v == "auto") options.tier = ExecutionTier::Auto;
      else return UsageError("--tier needs interp, jit or auto", kRunHelp);
    } else if (a == "--threads") {
      const std::optional<int> n = ParseThreadCount(value());
      if (!n) return UsageError(kThreadsRange, kRunHelp);
      options.threads = *n;
    } else if (a == "--ucode") {
      auto v = value();
      if (!v) return UsageError("--ucode needs a table directory", kRunHelp);
      ucode_dir = *v;
    } else if (a == "--table-set") {
      auto v = value();
      if (!v || v->empty()) return UsageError("--table-set needs a set name", kRunHelp);
      options.table_set = *v;
    } else if (a == "--reg") {
      if (auto v = value(); !ParseRegister(v, &regs)) return UsageError(BadRegister(v), kRunHelp);
    } else if (a == "--load") {
      auto v = value();
      const size_t eq = v ? v->find('=') : std::string::npos;
      RegionSpec r;
      std::string err = "expected SPACE:P:OFF=FILE.npy";
      if (!v || eq == std::string::npos || eq + 1 == v->size() || !ParseRegion(std::string_view(*v).substr(0, eq), &r, &err))
        return UsageError(Cat("--load '", v.value_or(""), "': ", err), kRunHelp);
      loads.emplace_back(r, v->substr(eq + 1));
    } else if (a == "--dump") {
      auto v = value();
      const size_t eq = v ? v->find('=') : std::string::npos;
      std::string err = "expected SPACE:P:OFF:DTYPE:ROWSxCOLS=FILE.npy";
      DumpSpec d;
      bool ok = v && eq != std::string::npos && eq + 1 < v->size();
      if (ok) {
        const std::string spec = v->substr(0, eq);
        const size_t c3 = spec.rfind(':');
        const size_t c2 = c3 == std::string::npos || c3 == 0 ? std::string::npos : spec.rfind(':', c3 - 1);
        ok = c2 != std::string::npos && ParseRegion(std::string_view(spec).substr(0, c2), &d.region, &err);
        if (ok) {
          const std::string dt = spec.substr(c2 + 1, c3 - c2 - 1), shape = spec.substr(c3 + 1);
          auto parsed = ParseDtypeName(dt);
          const size_t x = shape.find('x');
          uint64_t rows, cols;
          if (!parsed || !IsValidDtype(static_cast<uint8_t>(*parsed), false) ||
              dt == "FP32R" || dt == "fp32r") {
            ok = false;
            err = Cat("DTYPE is one of fp32 fp16 bf16 fp8e3 fp8e4 fp8e5 int8 uint8 int16 uint16 int32 uint32, got '", dt, "'");
          } else if (x == std::string::npos || !ParseU64(shape.substr(0, x), &rows) ||
                     !ParseU64(shape.substr(x + 1), &cols) || rows == 0 || cols == 0 ||
                     rows > kPartitions || cols > (uint64_t{1} << 24)) {
            ok = false;
            err = Cat("ROWSxCOLS is like 128x512 (1..128 rows), got '", shape, "'");
          } else {
            d.dtype = *parsed;
            d.rows = static_cast<uint32_t>(rows);
            d.cols = static_cast<uint32_t>(cols);
            d.path = v->substr(eq + 1);
          }
        }
      }
      if (!ok) return UsageError(Cat("--dump '", v.value_or(""), "': ", err), kRunHelp);
      dumps.push_back(d);
    } else if (program.empty() && !a.empty() && a[0] != '-') {
      program = a;
    } else {
      return UsageError(Cat("unexpected argument '", a, "'"), kRunHelp);
    }
  }
  if (program.empty()) return UsageError("run needs a PROGRAM", kRunHelp);

  // The microcode table set: roster (device profile), saturate, trace rows.
  std::optional<ucode::TableDir> tables;
  if (!ucode_dir.empty()) {
    auto dir = ucode::ReadTableDir(ucode_dir, ucode::UcodeGenOf(gen));
    if (!dir.ok()) return ReportError(dir.status());
    tables = std::move(*dir);
    options.tables = tables->Find(options.table_set);
    if (options.tables == nullptr)
      return UsageError(Cat("--table-set '", options.table_set, "' is not in ", ucode_dir), kRunHelp);
  }
  auto roster = ucode::ResolveRoster(ucode::UcodeGenOf(gen), options.table_set,
                                     tables ? &*tables : nullptr);
  if (!roster.ok()) return UsageError(Cat(roster.status().message()), kRunHelp);
  if (options.profile == Profile::Device) options.roster = roster->enabled;

  Machine machine(gen);
  machine.state().saturate = roster->saturate;
  // Dumps are checked against the geometry before anything runs.
  for (const DumpSpec& d : dumps) {
    const uint64_t bytes = static_cast<uint64_t>(d.cols) * DtypeSize(d.dtype);
    if (d.region.space == Space::Psum && GeometryOf(gen).psum_size == 0)
      return UsageError(Cat("--dump: ", GenerationName(gen), " has no PSUM"), "");
    if (d.region.partition + d.rows > kPartitions ||
        d.region.offset + bytes > machine.ActiveBytes(d.region.space))
      return UsageError(Cat("--dump ", d.path, ": ", d.rows, " rows x ", bytes, " bytes from ",
                            SpaceName(d.region.space), "[", d.region.partition, "]+", d.region.offset,
                            " lies outside memory (", machine.ActiveBytes(d.region.space),
                            " active bytes per partition, 128 partitions)"),
                        "");
  }
  if (int rc = CheckProgramSize(program); rc != kOk) return rc;
  auto prog = LoadProgram(program, gen);
  if (!prog.ok()) return ReportError(prog.status());
  if (preload) machine.PreloadReciprocals();
  for (auto [n, v] : regs) (void)machine.SetRegister(n, v);
  for (const auto& [r, path] : loads) {
    auto arr = ReadNpyFile(path);
    if (!arr.ok()) return ReportError(arr.status());
    if (arr->shape.size() != 1 && arr->shape.size() != 2)
      return UsageError(Cat("--load ", path, ": a 1-D or 2-D array is needed, got ", arr->shape.size(), " dimensions"), "");
    const uint64_t rows = arr->shape.size() == 2 ? arr->shape[0] : 1;
    const uint64_t row_bytes = arr->data.size() / (rows == 0 ? 1 : rows);
    if (rows == 0 || row_bytes == 0)
      return UsageError(Cat("--load ", path, ": the array is empty"), "");
    if (rows > kPartitions - r.partition)
      return UsageError(Cat("--load ", path, ": ", rows, " rows from partition ", r.partition,
                            " pass partition 127"), "");
    if (auto s = machine.Write(r.space, r.partition, static_cast<uint32_t>(rows), r.offset,
                               arr->data, static_cast<uint32_t>(row_bytes));
        !s.ok())
      return UsageError(Cat("--load ", path, ": ", s.message()), "");
  }
  const RunReport report = RunProgram(machine, *prog, options);
  std::cerr << report.TraceText() << report.Summary();
  if (!report.status.ok()) return ReportError(report.status);
  for (const DumpSpec& d : dumps) {
    NpyArray a;
    a.descr = NpyDescr(d.dtype);
    a.itemsize = DtypeSize(d.dtype);
    a.shape = {d.rows, d.cols};
    const uint32_t row_bytes = d.cols * a.itemsize;
    a.data.resize(static_cast<size_t>(row_bytes) * d.rows);
    if (auto s = machine.Read(d.region.space, d.region.partition, d.rows, d.region.offset,
                              row_bytes, a.data);
        !s.ok())
      return ReportError(s);
    if (auto s = WriteNpyFile(d.path, a); !s.ok()) return ReportError(s);
  }
  return kOk;
}

int CmdIr(const std::vector<std::string>& args) {
  std::string in;
  Generation gen = Generation::Cayman;
  Profile profile = Profile::Contract;
  std::vector<std::pair<int, uint32_t>> regs;
  const std::string help = IrHelp();
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (IsHelp(a)) return std::cout << help, kOk;
    if (a == "--gen") {
      if (!TakeGen(args, i, &gen)) return UsageError("--gen needs sunda|cayman|mariana|maverick", help);
    } else if (a == "--profile") {
      if (auto v = value(); !ParseProfile(v, &profile)) return UsageError(kBadProfile, help);
    } else if (a == "--reg") {
      if (auto v = value(); !ParseRegister(v, &regs)) return UsageError(BadRegister(v), help);
    } else if (in.empty() && !a.empty() && a[0] != '-') {
      in = a;
    } else {
      return UsageError(Cat("unexpected argument '", a, "'"), help);
    }
  }
  if (in.empty()) return UsageError("ir needs a PROGRAM", help);
  if (int rc = CheckProgramSize(in); rc != kOk) return rc;
  auto prog = LoadProgram(in, gen);
  if (!prog.ok()) return ReportError(prog.status());
  if (auto s = ValidateProgram(*prog, gen, /*for_execution=*/true); !s.ok()) return ReportError(s);
  // Addresses taken from registers are resolved as a run resolves them before compiling.
  uint32_t values[kRegisters] = {};
  for (const auto& [n, v] : regs) values[n] = v;
  auto resolved = ResolveRegisterAddresses(*prog, values, gen);
  if (!resolved.ok()) return ReportError(resolved.status());
  auto text = JitTier::IrText(*resolved, gen, profile);
  if (!text.ok()) return ReportError(text.status());
  std::cout << "; before passes\n" << text->first << "; after passes\n" << text->second;
  return kOk;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return UsageError("missing command", kMainHelp);
  const std::string& cmd = args[0];
  if (IsHelp(cmd)) return std::cout << kMainHelp, kOk;
  if (cmd == "asm") return CmdAsm(args);
  if (cmd == "dis") return CmdDis(args);
  if (cmd == "validate") return CmdValidate(args);
  if (cmd == "run") return CmdRun(args);
  if (cmd == "ir") return CmdIr(args);
  if (cmd == "bench") return BenchMain(args, std::cout, std::cerr);
  if (cmd == "ucode") return UcodeMain(argc - 1, argv + 1, std::cout, std::cerr);
  if (cmd == "train-step") return TrainStepMain(args, std::cout, std::cerr);
  return UsageError(Cat("unknown command '", cmd, "'"), kMainHelp);
}

}  // namespace
}  // namespace dvejit

int main(int argc, char** argv) {
  try {
    return dvejit::Main(argc, argv);
  } catch (const std::exception& e) {  // last line of defence: no abort, a clear message
    std::cerr << "dvejit: internal error: " << e.what() << "\n";
    return 1;
  }
}
