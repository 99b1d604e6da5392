// dvejit._dvejit: the pybind11 binding of the emulator for Python (python/dvejit/__init__.py
// re-exports it). Machines with zero-copy NumPy views of SBUF/PSUM, registers and Parameter RAM;
// the assembler, disassembler and validator; programs; the spec's dtype conversions. Every
// dvejit error becomes a Python exception of its kind (DecodeError, InvalidError, ...); nothing
// escapes as a C++ exception or aborts the interpreter.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "frontend/address.h"
#include "frontend/assembler.h"
#include "frontend/diag.h"
#include "frontend/disassembler.h"
#include "frontend/instruction.h"
#include "frontend/isa.h"
#include "frontend/microcode.h"
#include "frontend/strcat.h"
#include "frontend/validate.h"
#include "kernels/numerics.h"
#include "runtime/executor.h"
#include "runtime/machine.h"

namespace py = pybind11;

namespace dvejit::python {
namespace {

// ---- errors ------------------------------------------------------------------------------

// The exception classes, created once at import (module-lifetime references).
struct ErrorTypes {
  PyObject* base = nullptr;
  PyObject* by_kind[6] = {};  // indexed by ErrorKind
};
ErrorTypes g_errors;

PyObject* TypeFor(std::optional<ErrorKind> kind) {
  if (!kind) return g_errors.base;
  return g_errors.by_kind[static_cast<int>(*kind)];
}

// Raises the Python exception for `s` (GIL held): message = the dvejit message, attributes
// kind, predicate and (for a run) executed.
[[noreturn]] void Throw(const absl::Status& s, std::optional<int64_t> executed = std::nullopt) {
  const std::optional<ErrorKind> kind = ErrorKindOf(s);
  PyObject* type = TypeFor(kind);
  const std::string message(s.message());
  py::object exc = py::handle(type)(py::str(message));
  exc.attr("kind") = kind ? py::str(std::string(ErrorKindName(*kind))) : py::str("error");
  exc.attr("predicate") = py::str(PredicateOf(s));
  exc.attr("message") = py::str(message);
  exc.attr("executed") = executed ? py::object(py::int_(*executed)) : py::object(py::none());
  PyErr_SetObject(type, exc.ptr());
  throw py::error_already_set();
}

[[noreturn]] void Usage(std::string_view field, std::string_view value, std::string_view expected) {
  Throw(ToStatus(MakeViolation(ErrorKind::Usage, "", field, value, expected), Location{}));
}

template <typename T>
T Unwrap(absl::StatusOr<T> v) {
  if (!v.ok()) Throw(v.status());
  return *std::move(v);
}
void Check(const absl::Status& s) {
  if (!s.ok()) Throw(s);
}

// ---- names -------------------------------------------------------------------------------

Generation ParseGen(const std::string& name) {
  auto g = ParseGeneration(name);
  if (!g) Usage("gen", Cat("'", name, "'"), "sunda, cayman, mariana or maverick");
  return *g;
}

Space ParseSpace(const std::string& name) {
  if (name == "sbuf" || name == "SBUF") return Space::Sbuf;
  if (name == "psum" || name == "PSUM") return Space::Psum;
  Usage("space", Cat("'", name, "'"), "sbuf or psum");
}

// A data dtype from a dvejit name ("fp32", "bf16", "BFLOAT16", ...) or a NumPy dtype.
Dtype ParseDtype(const py::object& obj) {
  if (py::isinstance<py::str>(obj)) {
    const std::string name = obj.cast<std::string>();
    auto d = ParseDtypeName(name);
    if (!d || !IsValidDtype(static_cast<uint8_t>(*d), true))
      Usage("dtype", Cat("'", name, "'"),
            "one of fp32 fp32r bf16 fp16 fp8e3 fp8e4 fp8e5 int8 uint8 int16 uint16 int32 uint32");
    return *d;
  }
  const py::dtype dt = py::dtype::from_args(obj);
  const char k = dt.kind();
  const auto size = dt.itemsize();
  if (k == 'f' && size == 4) return Dtype::FP32;
  if (k == 'f' && size == 2) return Dtype::FP16;
  if (k == 'i' && size == 1) return Dtype::INT8;
  if (k == 'u' && size == 1) return Dtype::UINT8;
  if (k == 'i' && size == 2) return Dtype::INT16;
  if (k == 'u' && size == 2) return Dtype::UINT16;
  if (k == 'i' && size == 4) return Dtype::INT32;
  if (k == 'u' && size == 4) return Dtype::UINT32;
  Usage("dtype", std::string(py::str(py::handle(dt))),
        "float32, float16, (u)int8/16/32 or a dvejit dtype name (bf16 and fp8 as raw bits)");
}

// The NumPy type that holds a dtype's values (float) or raw bits (bf16, fp8).
py::dtype NumpyDtype(Dtype d) {
  switch (d) {
    case Dtype::FP32: case Dtype::FP32R: return py::dtype("float32");
    case Dtype::FP16: return py::dtype("float16");
    case Dtype::BFLOAT16: case Dtype::UINT16: return py::dtype("uint16");
    case Dtype::FP8_EXP3: case Dtype::FP8_EXP4: case Dtype::FP8_EXP5: case Dtype::UINT8:
      return py::dtype("uint8");
    case Dtype::INT8: return py::dtype("int8");
    case Dtype::INT16: return py::dtype("int16");
    case Dtype::INT32: return py::dtype("int32");
    case Dtype::UINT32: return py::dtype("uint32");
    default: break;
  }
  Usage("dtype", DtypeName(static_cast<uint8_t>(d)), "a supported data dtype");
}

std::string AsmName(Dtype d) { return std::string(LookupDtype(static_cast<uint8_t>(d))->asmname); }

// ---- programs ----------------------------------------------------------------------------

// Contiguous bytes of a bytes-like object.
std::vector<uint8_t> BufferBytes(const py::handle& obj) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  const auto* p = static_cast<const uint8_t*>(view.buf);
  std::vector<uint8_t> out(p, p + view.len);
  PyBuffer_Release(&view);
  return out;
}

bool IsBytesLike(const py::handle& obj) { return PyObject_CheckBuffer(obj.ptr()) != 0; }

// A decoded program: records plus the generation its text (if any) was assembled for.
struct Program {
  std::vector<Instruction> records;
  Generation gen = Generation::Cayman;
  bool from_text = false;
};

std::vector<Instruction> Decode(const py::handle& source, Generation gen, bool* from_text) {
  if (py::isinstance<py::str>(source)) {
    const std::string text = source.cast<std::string>();
    if (from_text) *from_text = true;
    return Unwrap(Assemble(text, gen));
  }
  if (IsBytesLike(source)) {
    const std::vector<uint8_t> bytes = BufferBytes(source);
    return Unwrap(DecodeStream(bytes));
  }
  Usage("program", std::string(py::str(py::type::of(source))),
        "assembly text (str), 64-byte records (bytes-like) or a dvejit.Program");
}

py::bytes ToBytes(std::span<const Instruction> prog) {
  const std::vector<uint8_t> b = EncodeStream(prog);
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

// ---- the machine -------------------------------------------------------------------------

struct PyMachine {
  std::unique_ptr<Machine> machine;
  RunOptions options;     // profile and the device-profile roster
  std::string profile;
  std::mutex mu;          // one run (or host mutation through the API) at a time

  PyMachine(const std::string& gen_name, const std::string& profile_name,
            const std::string& table_set, int threads) {
    const Generation gen = ParseGen(gen_name);
    SetThreads(threads);
    if (profile_name == "contract") {
      options.profile = Profile::Contract;
    } else if (profile_name == "device") {
      options.profile = Profile::Device;
    } else {
      Usage("profile", Cat("'", profile_name, "'"), "contract or device");
    }
    profile = profile_name;
    options.table_set = table_set;
    auto roster = ucode::ResolveRoster(ucode::UcodeGenOf(gen), table_set, nullptr);
    if (!roster.ok()) Usage("table_set", Cat("'", table_set, "'"), std::string(roster.status().message()));
    if (options.profile == Profile::Device) options.roster = roster->enabled;
    machine = std::make_unique<Machine>(gen);
    machine->state().saturate = roster->saturate;
  }

  Generation gen() const { return machine->gen(); }
  void SetThreads(int threads) {
    if (!ThreadCountInRange(threads)) Usage("threads", Cat(threads), Cat("1 to ", kMaxThreads));
    options.threads = threads;
  }
};

ExecutionTier ParseTier(const std::string& tier) {
  if (tier == "interp") return ExecutionTier::Interp;
  if (tier == "jit") return ExecutionTier::Jit;
  if (tier == "auto") return ExecutionTier::Auto;
  Usage("tier", Cat("'", tier, "'"), "interp, jit or auto");
}

py::dict ReportDict(const RunReport& r) {
  py::dict d;
  d["executed"] = r.executed;
  py::dict per;
  for (const auto& [name, n] : r.per_opcode) per[py::str(name)] = n;
  d["per_opcode"] = per;
  py::list warnings;
  for (const std::string& w : r.warnings) warnings.append(w);
  d["warnings"] = warnings;
  d["device_noops"] = r.device_noops;
  d["issued_steps"] = r.issued_steps;
  d["tier"] = r.tier;
  py::list notes;
  for (const std::string& n : r.tier_notes) notes.append(n);
  d["tier_notes"] = notes;
  d["jit_cache_hit"] = r.jit_cache_hit;
  d["jit_compile_ms"] = r.jit_compile_ms;
  d["jit_object_cache_hit"] = r.jit_object_cache_hit;
  d["jit_compiled_instructions"] = r.jit_compiled_instructions;
  d["jit_threads"] = r.jit_threads;
  if (!r.trace.empty()) {
    py::list trace;
    for (const TraceEntry& t : r.trace) {
      py::dict e;
      const OpcodeInfo* info = LookupOpcode(t.opcode);
      e["index"] = t.index;
      e["opcode"] = t.opcode;
      e["name"] = info ? std::string(info->name) : std::string("?");
      e["skipped"] = t.skipped;
      if (t.fast_row >= 0) {
        e["fast_row"] = t.fast_row;
        e["slow_row"] = t.slow_row;
        e["issued_steps"] = t.issued_steps;
      }
      trace.append(e);
    }
    d["trace"] = trace;
  }
  d["summary"] = r.Summary();
  return d;
}

py::dict Run(PyMachine& self, const py::object& program, const std::string& tier,
             bool strict_events, bool trace) {
  RunOptions options = self.options;
  options.tier = ParseTier(tier);
  options.strict_events = strict_events;
  options.trace = trace;
  RunReport report;
  if (py::isinstance<Program>(program)) {
    const Program& p = program.cast<const Program&>();
    if (p.from_text && p.gen != self.gen())
      Usage("program", Cat("assembled for ", GenerationName(p.gen)),
            Cat("a program for ", GenerationName(self.gen()), " (text addresses depend on it)"));
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mu);
    report = RunProgram(*self.machine, p.records, options);
  } else {
    const std::vector<Instruction> records = Decode(program, self.gen(), nullptr);
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mu);
    report = RunProgram(*self.machine, records, options);
  }
  if (!report.status.ok()) Throw(report.status, report.executed);
  return ReportDict(report);
}

int64_t Execute(PyMachine& self, const Program& p, const std::string& tier) {
  RunOptions options = self.options;
  options.tier = ParseTier(tier);
  if (p.from_text && p.gen != self.gen())
    Usage("program", Cat("assembled for ", GenerationName(p.gen)),
          Cat("a program for ", GenerationName(self.gen())));
  RunReport report;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.mu);
    report = RunProgram(*self.machine, p.records, options);
  }
  if (!report.status.ok()) Throw(report.status, report.executed);
  return report.executed;
}

// Zero-copy view: `partitions` rows from `first`, `count` elements of `dtype` from `offset`,
// rows Machine::Pitch bytes apart. The array keeps the Python Machine object alive.
py::array View(const py::object& self_obj, Space space, uint32_t first, uint32_t partitions,
               uint32_t offset, const py::object& dtype_obj, uint32_t count) {
  PyMachine& self = self_obj.cast<PyMachine&>();
  const Dtype d = ParseDtype(dtype_obj);
  const uint32_t size = static_cast<uint32_t>(DtypeSize(d));
  if (count == 0) Usage("count", "0", ">= 1");
  if (offset % size != 0) Usage("offset", Cat(offset), Cat("a multiple of the dtype size ", size));
  const uint64_t bytes = static_cast<uint64_t>(count) * size;
  if (bytes > 0xFFFFFFFFull) Usage("count", Cat(count), "fewer bytes than a partition holds");
  // Machine::Read checks the region exactly as Write does; with zero rows of output it is only
  // the bounds check, so read nothing: ask for the check through a 1-byte probe instead.
  uint8_t probe = 0;
  Check(self.machine->Read(space, first, 1, offset, 1, std::span<uint8_t>(&probe, 1)));
  if (partitions == 0 || static_cast<uint64_t>(first) + partitions > kPartitions)
    Usage("partitions", Cat(first, "..", static_cast<uint64_t>(first) + partitions),
          "a non-empty range inside 0..128");
  if (offset + bytes > self.machine->ActiveBytes(space))
    Usage("bytes", Cat("[", offset, ", ", offset + bytes, ")"),
          Cat("inside the ", self.machine->ActiveBytes(space), " active bytes of a ",
              SpaceName(space), " partition"));
  uint8_t* base = self.machine->state().PartitionBase(space, first) + offset;
  const auto pitch = static_cast<py::ssize_t>(self.machine->Pitch(space));
  return py::array(NumpyDtype(d), {static_cast<py::ssize_t>(partitions), static_cast<py::ssize_t>(count)},
                   {pitch, static_cast<py::ssize_t>(size)}, base, self_obj);
}

// A host-memory copy of a region (Machine::Read).
py::array ReadRegion(PyMachine& self, Space space, uint32_t first, uint32_t partitions,
                     uint32_t offset, const py::object& dtype_obj, uint32_t count) {
  const Dtype d = ParseDtype(dtype_obj);
  const uint32_t size = static_cast<uint32_t>(DtypeSize(d));
  const uint64_t row = static_cast<uint64_t>(count) * size;
  if (count == 0 || row > 0xFFFFFFFFull) Usage("count", Cat(count), "1 .. the partition's bytes");
  py::array out(NumpyDtype(d), {static_cast<py::ssize_t>(partitions), static_cast<py::ssize_t>(count)});
  auto* p = static_cast<uint8_t*>(out.mutable_data());
  std::lock_guard<std::mutex> lock(self.mu);
  Check(self.machine->Read(space, first, partitions, offset, static_cast<uint32_t>(row),
                           std::span<uint8_t>(p, static_cast<size_t>(row) * partitions)));
  return out;
}

// Machine::Write of a 1-D (one partition) or 2-D (rows = partitions) array, as its raw bytes.
void WriteRegion(PyMachine& self, Space space, uint32_t first, uint32_t offset,
                 const py::array& data) {
  if (data.ndim() != 1 && data.ndim() != 2)
    Usage("data", Cat(data.ndim(), " dimensions"), "a 1-D or 2-D array");
  const py::array c = py::array::ensure(data, py::array::c_style);
  if (!c) throw py::error_already_set();
  const uint64_t rows = data.ndim() == 2 ? static_cast<uint64_t>(data.shape(0)) : 1;
  const uint64_t total = static_cast<uint64_t>(c.nbytes());
  if (rows == 0 || total == 0) Usage("data", "an empty array", "at least one element");
  const uint64_t row_bytes = total / rows;
  if (rows > kPartitions || row_bytes > 0xFFFFFFFFull)
    Usage("data", Cat(rows, " rows x ", row_bytes, " bytes"), "at most 128 rows of one partition each");
  std::lock_guard<std::mutex> lock(self.mu);
  Check(self.machine->Write(space, first, static_cast<uint32_t>(rows), offset,
                            std::span<const uint8_t>(static_cast<const uint8_t*>(c.data()), total),
                            static_cast<uint32_t>(row_bytes)));
}

template <typename T>
py::array StateView(const py::object& self_obj, T* data, py::ssize_t n, const char* dtype) {
  return py::array(py::dtype(dtype), {n}, {static_cast<py::ssize_t>(sizeof(T))}, data, self_obj);
}

py::dict Lane(PyMachine& self, int c) {
  if (c < 0 || c >= kPartitions) Usage("lane", Cat(c), "0..127");
  const LaneState& l = self.machine->state().lanes[c];
  py::dict d;
  d["bn"] = py::make_tuple(l.bn_n, l.bn_mean, l.bn_a, l.bn_b, l.bn_c);
  py::list imm, mv, idx;
  for (int i = 0; i < 8; ++i) {
    imm.append(l.imm[i]);
    mv.append(l.mv[i]);
    idx.append(l.idx[i]);
  }
  d["imm"] = imm;
  d["imm_count"] = l.imm_count;
  d["imm_bitvec"] = l.imm_bitvec;
  d["mv"] = mv;
  d["idx"] = idx;
  d["acc"] = l.acc;
  return d;
}

// ---- conversions -------------------------------------------------------------------------

// fp32 values → the raw storage of `d` (the spec's store conversion, §3.2).
py::array Encode(const py::array& values, const py::object& dtype_obj) {
  const Dtype d = ParseDtype(dtype_obj);
  const auto in = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(values);
  if (!in) throw py::error_already_set();
  std::vector<py::ssize_t> shape(in.shape(), in.shape() + in.ndim());
  py::array out(NumpyDtype(d), shape);
  const int size = DtypeSize(d);
  const float* src = in.data();
  auto* dst = static_cast<uint8_t*>(out.mutable_data());
  const py::ssize_t n = in.size();
  {
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) {
      const uint32_t raw = num::StoreFromF32(d, src[i]);
      std::memcpy(dst + i * size, &raw, static_cast<size_t>(size));  // little-endian host
    }
  }
  return out;
}

// Raw storage of `d` → fp32 values (exact widening; int32/uint32 round to nearest even).
py::array DecodeValues(const py::array& raw, const py::object& dtype_obj) {
  const Dtype d = ParseDtype(dtype_obj);
  const int size = DtypeSize(d);
  const py::array c = py::array::ensure(raw, py::array::c_style);
  if (!c) throw py::error_already_set();
  if (c.itemsize() != size)
    Usage("raw", Cat("items of ", c.itemsize(), " bytes"),
          Cat(size, "-byte items holding ", DtypeName(static_cast<uint8_t>(d)), " bits"));
  std::vector<py::ssize_t> shape(c.shape(), c.shape() + c.ndim());
  py::array_t<float> out(shape);
  const auto* src = static_cast<const uint8_t*>(c.data());
  float* dst = out.mutable_data();
  const py::ssize_t n = c.size();
  {
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) {
      uint32_t v = 0;
      std::memcpy(&v, src + i * size, static_cast<size_t>(size));
      dst[i] = num::LoadAsF32(d, v);
    }
  }
  return out;
}

// ---- module ------------------------------------------------------------------------------

PyObject* NewError(const char* name, const char* doc, PyObject* bases) {
  PyObject* t = PyErr_NewExceptionWithDoc(name, doc, bases, nullptr);
  if (!t) throw py::error_already_set();
  return t;
}

void AddErrors(py::module_& m) {
  g_errors.base = NewError("dvejit.DvejitError",
                           "Base of every dvejit error. Attributes: kind ('decode', 'invalid', "
                           "'unsupported', 'runtime', 'syntax', 'usage'), predicate (the "
                           "validation.md name, or ''), message, executed (instructions "
                           "completed, for errors of a run; else None).",
                           PyExc_Exception);
  auto sub = [&](ErrorKind k, const char* name, const char* doc, PyObject* extra) {
    PyObject* bases = extra ? PyTuple_Pack(2, g_errors.base, extra) : PyTuple_Pack(1, g_errors.base);
    if (!bases) throw py::error_already_set();
    PyObject* t = NewError(name, doc, bases);
    Py_DECREF(bases);
    g_errors.by_kind[static_cast<int>(k)] = t;
  };
  sub(ErrorKind::Decode, "dvejit.DecodeError",
      "The bytes are not records: a length that is not a multiple of 64, an unlisted opcode.",
      nullptr);
  sub(ErrorKind::Invalid, "dvejit.InvalidError",
      "A validation.md predicate failed (the predicate attribute names it).", nullptr);
  sub(ErrorKind::Unsupported, "dvejit.UnsupportedError",
      "Valid ISA that dvejit does not execute.", nullptr);
  sub(ErrorKind::Runtime, "dvejit.ExecutionError",
      "A run-time error (kind 'runtime'): a register address that does not decode, an "
      "unsatisfiable wait under strict events. executed = instructions completed.",
      nullptr);
  sub(ErrorKind::Syntax, "dvejit.AsmSyntaxError",
      "Assembly text that does not parse ('syntax: line L, column C: ...').", PyExc_ValueError);
  sub(ErrorKind::Usage, "dvejit.UsageError",
      "Bad arguments to an API call (a region outside memory, an unknown dtype, ...).",
      PyExc_ValueError);
  m.add_object("DvejitError", py::handle(g_errors.base));
  m.add_object("DecodeError", py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Decode)]));
  m.add_object("InvalidError", py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Invalid)]));
  m.add_object("UnsupportedError",
               py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Unsupported)]));
  m.add_object("ExecutionError", py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Runtime)]));
  m.add_object("AsmSyntaxError", py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Syntax)]));
  m.add_object("UsageError", py::handle(g_errors.by_kind[static_cast<int>(ErrorKind::Usage)]));
}

}  // namespace

void InitModule(py::module_& m) {
  m.doc() = "dvejit: the AWS Neuron DVE emulator (C++ core). Use the `dvejit` package.";
  AddErrors(m);

  py::class_<Program>(m, "Program",
                      "A decoded program: from assembly text (assembled for `gen`) or 64-byte "
                      "records. Running a Program skips decoding.")
      .def(py::init([](const py::object& source, const std::string& gen) {
             Program p;
             p.gen = ParseGen(gen);
             p.records = Decode(source, p.gen, &p.from_text);
             return p;
           }),
           py::arg("source"), py::arg("gen") = "cayman")
      .def("__len__", [](const Program& p) { return p.records.size(); })
      .def_property_readonly("gen", [](const Program& p) { return std::string(GenerationName(p.gen)); })
      .def("to_bytes", [](const Program& p) { return ToBytes(p.records); })
      .def("__bytes__", [](const Program& p) { return ToBytes(p.records); })
      .def("disassemble", [](const Program& p) { return DisassembleStream(p.records, p.gen); })
      .def("validate",
           [](const Program& p, bool for_execution) {
             Check(ValidateProgram(p.records, p.gen, for_execution));
           },
           py::arg("for_execution") = false)
      .def("__repr__", [](const Program& p) {
        return Cat("<dvejit.Program ", p.records.size(), " records, ", GenerationName(p.gen), ">");
      });

  py::class_<PyMachine>(m, "Machine",
                        "One emulated DVE: SBUF, PSUM, registers, Parameter RAM, lane state.")
      .def(py::init<const std::string&, const std::string&, const std::string&, int>(),
           py::arg("gen") = "cayman", py::arg("profile") = "contract",
           py::arg("table_set") = "default", py::arg("threads") = 1)
      .def_property(
          "threads", [](const PyMachine& s) { return s.options.threads; },
          [](PyMachine& s, int threads) {
            std::lock_guard<std::mutex> lock(s.mu);
            s.SetThreads(threads);
          },
          "Threads (1-256, default 1) the JIT tier splits each compiled region's channel blocks "
          "across (regions under 1 MiB stay on one); results are the same for every count.")
      .def_property_readonly("gen", [](const PyMachine& s) { return std::string(GenerationName(s.gen())); })
      .def_property_readonly("profile", [](const PyMachine& s) { return s.profile; })
      .def("reset",
           [](PyMachine& s) {
             std::lock_guard<std::mutex> lock(s.mu);
             s.machine->Reset();
           },
           "Every byte and all state back to zero (views stay valid: memory is reused).")
      .def("preload_reciprocals",
           [](PyMachine& s) {
             std::lock_guard<std::mutex> lock(s.mu);
             s.machine->PreloadReciprocals();
           },
           "Parameter RAM entry k = fp32(1/(k+1)) (semantics.md §1).")
      .def("run", &Run, py::arg("program"), py::arg("tier") = "interp",
           py::arg("strict_events") = false, py::arg("trace") = false,
           "Validates then runs `program` (text, bytes or Program); returns the report dict.")
      .def("execute", &Execute, py::arg("program"), py::arg("tier") = "interp",
           "The lean run used by dvejit.ops: a Program under the machine's options, no report; "
           "returns the instructions executed.")
      .def("active_bytes", [](const PyMachine& s, const std::string& space) {
             return s.machine->ActiveBytes(ParseSpace(space));
           }, py::arg("space") = "sbuf")
      .def("pitch", [](const PyMachine& s, const std::string& space) {
             return s.machine->Pitch(ParseSpace(space));
           }, py::arg("space") = "sbuf")
      .def("sbuf",
           [](const py::object& self, uint32_t first, uint32_t partitions, uint32_t offset,
              const py::object& dtype, uint32_t count) {
             return View(self, Space::Sbuf, first, partitions, offset, dtype, count);
           },
           py::arg("partition_start"), py::arg("partitions"), py::arg("offset"),
           py::arg("dtype"), py::arg("count"))
      .def("psum",
           [](const py::object& self, uint32_t first, uint32_t partitions, uint32_t offset,
              const py::object& dtype, uint32_t count) {
             return View(self, Space::Psum, first, partitions, offset, dtype, count);
           },
           py::arg("partition_start"), py::arg("partitions"), py::arg("offset"),
           py::arg("dtype"), py::arg("count"))
      .def("read",
           [](PyMachine& s, const std::string& space, uint32_t first, uint32_t partitions,
              uint32_t offset, const py::object& dtype, uint32_t count) {
             return ReadRegion(s, ParseSpace(space), first, partitions, offset, dtype, count);
           },
           py::arg("space"), py::arg("partition_start"), py::arg("partitions"), py::arg("offset"),
           py::arg("dtype"), py::arg("count"))
      .def("write",
           [](PyMachine& s, const std::string& space, uint32_t first, uint32_t offset,
              const py::array& data) { WriteRegion(s, ParseSpace(space), first, offset, data); },
           py::arg("space"), py::arg("partition_start"), py::arg("offset"), py::arg("data"))
      .def("set_register",
           [](PyMachine& s, int i, uint32_t v) { Check(s.machine->SetRegister(i, v)); })
      .def("get_register", [](PyMachine& s, int i) { return Unwrap(s.machine->GetRegister(i)); })
      .def("set_param_ram",
           [](PyMachine& s, int i, float v) { Check(s.machine->SetParamRam(i, v)); })
      .def("get_param_ram", [](PyMachine& s, int i) { return Unwrap(s.machine->GetParamRam(i)); })
      .def_property_readonly(
          "registers",
          [](const py::object& self) {
            PyMachine& s = self.cast<PyMachine&>();
            return StateView(self, s.machine->state().regs, kRegisters, "uint32");
          },
          "The 64 registers as a writable uint32 view.")
      .def_property_readonly(
          "param_ram",
          [](const py::object& self) {
            PyMachine& s = self.cast<PyMachine&>();
            return StateView(self, s.machine->state().pram, kParamRamEntries, "float32");
          },
          "The 256 Parameter RAM entries as a writable float32 view.")
      .def_property_readonly(
          "semaphores",
          [](const py::object& self) {
            PyMachine& s = self.cast<PyMachine&>();
            return StateView(self, s.machine->state().semaphores, 32, "uint32");
          })
      .def("lane", &Lane, py::arg("channel"), "A copy of lane c's state as a dict.")
      .def("__repr__", [](const PyMachine& s) {
        return Cat("<dvejit.Machine gen=", GenerationName(s.gen()), " profile=", s.profile, ">");
      });

  m.def("assemble",
        [](const std::string& text, const std::string& gen) {
          return ToBytes(Unwrap(Assemble(text, ParseGen(gen))));
        },
        py::arg("text"), py::arg("gen") = "cayman", "Assembly text → 64-byte records (bytes).");
  m.def("disassemble",
        [](const py::object& data, const std::string& gen) {
          const Generation g = ParseGen(gen);
          if (py::isinstance<Program>(data)) return DisassembleStream(data.cast<const Program&>().records, g);
          if (!IsBytesLike(data) || py::isinstance<py::str>(data))
            Usage("data", std::string(py::str(py::type::of(data))), "bytes-like 64-byte records");
          return DisassembleStream(Unwrap(DecodeStream(BufferBytes(data))), g);
        },
        py::arg("data"), py::arg("gen") = "cayman", "Records → assembly text, one line each.");
  m.def("validate",
        [](const py::object& program, const std::string& gen, bool for_execution) {
          const Generation g = ParseGen(gen);
          if (py::isinstance<Program>(program)) {
            Check(ValidateProgram(program.cast<const Program&>().records, g, for_execution));
            return;
          }
          Check(ValidateProgram(Decode(program, g, nullptr), g, for_execution));
        },
        py::arg("program"), py::arg("gen") = "cayman", py::arg("for_execution") = false,
        "Raises the first failing check (InvalidError, ...) or returns None.");
  m.def("encode", &Encode, py::arg("values"), py::arg("dtype"),
        "fp32 values → raw storage of dtype (spec rounding; bf16 → uint16, fp8 → uint8).");
  m.def("decode", &DecodeValues, py::arg("raw"), py::arg("dtype"),
        "Raw storage of dtype → fp32 values.");
  m.def("numpy_dtype", [](const py::object& d) { return NumpyDtype(ParseDtype(d)); },
        py::arg("dtype"), "The NumPy dtype holding a dvejit dtype's values or raw bits.");
  m.def("dtype_name", [](const py::object& d) { return AsmName(ParseDtype(d)); }, py::arg("dtype"),
        "The assembly name of a dtype (fp32, bf16, ...).");
  m.def("dtype_size", [](const py::object& d) { return DtypeSize(ParseDtype(d)); }, py::arg("dtype"));
  m.def("partition_stride",
        [](const std::string& space, const std::string& gen) {
          return PartitionStride(ParseSpace(space), ParseGen(gen));
        },
        py::arg("space") = "sbuf", py::arg("gen") = "cayman");
  m.def("alu_op_names", [] {
    py::list out;
    for (int code = 0; code < 256; ++code)
      if (const AluOpInfo* a = LookupAluOp(static_cast<uint8_t>(code)))
        out.append(py::make_tuple(std::string(a->asmname), code, (a->flags & (BV | GBV)) != 0));
    return out;
  }, "(asm name, code, is_bitvec) of every ALU op.");
  m.attr("tiers") = py::make_tuple("interp", "jit", "auto");
  m.attr("max_threads") = kMaxThreads;  // Machine.threads and ops.set_threads take 1 to this
  m.attr("PARTITIONS") = kPartitions;
}

}  // namespace dvejit::python

PYBIND11_MODULE(_dvejit, m) { dvejit::python::InitModule(m); }
