// The C API over the C++ facade: every entry point catches everything, so no exception and no
// C++ type crosses the boundary.
#include "api/dvejit_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "api/dvejit.h"
#include "frontend/diag.h"
#include "runtime/executor.h"  // kMaxThreads

struct dvejit_machine {
  explicit dvejit_machine(dvejit::Session s) : session(std::move(s)) {}
  dvejit::Session session;
  std::string generation;
  std::string error;  // of the last call that failed; empty after one that succeeded
  // The last run's report.
  int64_t executed = 0;
  std::vector<std::string> warnings;
  std::string warnings_text;
  std::string summary;
  std::string tier_notes;
  int threads = 1;  // dvejit_machine_set_threads
  dvejit_tier tier_used = DVEJIT_TIER_INTERP;
};

struct dvejit_program {
  explicit dvejit_program(dvejit::Program p) : program(std::move(p)) {}
  dvejit::Program program;
};

namespace {

dvejit_status CodeOf(const absl::Status& s) {
  return static_cast<dvejit_status>(dvejit::ErrorCodeOf(s));
}

void CopyMessage(std::string_view msg, char* err, size_t err_size) {
  if (err == nullptr || err_size == 0) return;
  const size_t n = std::min(msg.size(), err_size - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

// Records the outcome of a call on m.
dvejit_status Finish(dvejit_machine* m, const absl::Status& s) {
  if (s.ok()) {
    m->error.clear();
  } else {
    try {
      m->error = std::string(s.message());
    } catch (...) {
      m->error.clear();
    }
  }
  return CodeOf(s);
}

dvejit_status Internal(dvejit_machine* m, const char* what) {
  try {
    m->error = std::string("internal: ") + what;
  } catch (...) {
    m->error.clear();
  }
  return DVEJIT_ERR_INTERNAL;
}

// Runs `body` (returning absl::Status) on a non-NULL machine, catching everything.
template <typename F>
dvejit_status Guard(dvejit_machine* m, F&& body) {
  if (m == nullptr) return DVEJIT_ERR_USAGE;
  try {
    return Finish(m, body());
  } catch (const std::exception& e) {
    return Internal(m, e.what());
  } catch (...) {
    return Internal(m, "unknown exception");
  }
}

// C enums are ints; the C++ enums are one byte. A value that does not fit is refused here
// rather than silently truncated into a valid one.
bool FitsByte(int v) { return v >= 0 && v <= 0xFF; }

absl::Status BadEnum(const char* field, int v) {
  return dvejit::ToStatus(dvejit::MakeViolation(dvejit::ErrorKind::Usage, "", field,
                                                std::to_string(v), "a value of its enum"),
                          dvejit::Location{});
}

absl::StatusOr<dvejit::TensorRegion> Region(dvejit_space space, uint32_t first,
                                            uint32_t partitions, uint32_t offset,
                                            dvejit_dtype dtype, uint32_t elements) {
  if (!FitsByte(space)) return BadEnum("space", space);
  if (!FitsByte(dtype)) return BadEnum("dtype", dtype);
  dvejit::TensorRegion r;
  r.space = static_cast<dvejit::MemorySpace>(space);
  r.first_partition = first;
  r.partitions = partitions;
  r.offset = offset;
  r.dtype = static_cast<dvejit::ElementType>(dtype);
  r.elements = elements;
  return r;
}

absl::Status NullArgument(const char* name) {
  return dvejit::ToStatus(
      dvejit::MakeViolation(dvejit::ErrorKind::Usage, "", name, "NULL", "a pointer"),
      dvejit::Location{});
}

// A getter's body: `out` must not be NULL; then *out = get() unless get() fails.
template <typename T, typename F>
absl::Status GetInto(T* out, F&& get) {
  if (out == nullptr) return NullArgument("value");
  absl::StatusOr<T> v = get();
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

// Creates a handle (or fails), writing the message to err: *out = wrap(*make()).
template <typename Handle, typename Make, typename Wrap>
dvejit_status CreateHandle(Handle** out, char* err, size_t err_size, Make&& make, Wrap&& wrap) {
  if (out == nullptr) {
    CopyMessage("usage: out is NULL", err, err_size);
    return DVEJIT_ERR_USAGE;
  }
  *out = nullptr;
  try {
    auto made = make();
    if (!made.ok()) {
      CopyMessage(std::string(made.status().message()), err, err_size);
      return CodeOf(made.status());
    }
    *out = wrap(std::move(*made));
    CopyMessage("", err, err_size);
    return DVEJIT_OK;
  } catch (const std::exception& e) {
    CopyMessage(std::string("internal: ") + e.what(), err, err_size);
  } catch (...) {
    CopyMessage("internal: unknown exception", err, err_size);
  }
  return DVEJIT_ERR_INTERNAL;
}

// Creates a program (or fails), writing the message to err.
template <typename F>
dvejit_status MakeProgram(dvejit_program** out, char* err, size_t err_size, F&& make) {
  return CreateHandle(out, err, err_size, std::forward<F>(make),
                      [](dvejit::Program p) { return new dvejit_program(std::move(p)); });
}

}  // namespace

extern "C" {

const char* dvejit_version(void) { return DVEJIT_VERSION; }

const char* dvejit_status_name(dvejit_status code) {
  switch (code) {
    case DVEJIT_OK: return "ok";
    case DVEJIT_ERR_DECODE: return "decode";
    case DVEJIT_ERR_INVALID: return "invalid";
    case DVEJIT_ERR_UNSUPPORTED: return "unsupported";
    case DVEJIT_ERR_RUNTIME: return "runtime";
    case DVEJIT_ERR_SYNTAX: return "syntax";
    case DVEJIT_ERR_USAGE: return "usage";
    case DVEJIT_ERR_INTERNAL: return "internal";
  }
  return "unknown";
}

int dvejit_dtype_size(dvejit_dtype dtype) {
  if (!FitsByte(dtype)) return 0;
  return dvejit::ElementSize(static_cast<dvejit::ElementType>(dtype));
}

dvejit_status dvejit_machine_create(const char* generation, dvejit_machine** out, char* err,
                                    size_t err_size) {
  return CreateHandle(
      out, err, err_size,
      [&] { return dvejit::Session::Create(generation != nullptr ? generation : "cayman"); },
      [](dvejit::Session session) {
        auto* m = new dvejit_machine(std::move(session));
        m->generation = m->session.generation();
        return m;
      });
}

void dvejit_machine_destroy(dvejit_machine* m) { delete m; }

const char* dvejit_machine_error(const dvejit_machine* m) {
  return m != nullptr ? m->error.c_str() : "usage: machine is NULL";
}

const char* dvejit_machine_generation(const dvejit_machine* m) {
  return m != nullptr ? m->generation.c_str() : "";
}

uint32_t dvejit_machine_active_bytes(const dvejit_machine* m, dvejit_space space) {
  if (m == nullptr || !FitsByte(space)) return 0;
  return m->session.ActiveBytes(static_cast<dvejit::MemorySpace>(space));
}

dvejit_status dvejit_machine_reset(dvejit_machine* m) {
  return Guard(m, [&] {
    m->session.Reset();
    return absl::OkStatus();
  });
}

dvejit_status dvejit_machine_preload_reciprocals(dvejit_machine* m) {
  return Guard(m, [&] {
    m->session.PreloadReciprocals();
    return absl::OkStatus();
  });
}

dvejit_status dvejit_machine_write(dvejit_machine* m, dvejit_space space, uint32_t first_partition,
                                   uint32_t partitions, uint32_t offset, dvejit_dtype dtype,
                                   uint32_t elements, const void* data, size_t size) {
  return Guard(m, [&]() -> absl::Status {
    auto r = Region(space, first_partition, partitions, offset, dtype, elements);
    if (!r.ok()) return r.status();
    return m->session.Write(*r, data, size);
  });
}

dvejit_status dvejit_machine_read(dvejit_machine* m, dvejit_space space, uint32_t first_partition,
                                  uint32_t partitions, uint32_t offset, dvejit_dtype dtype,
                                  uint32_t elements, void* out, size_t size) {
  return Guard(m, [&]() -> absl::Status {
    auto r = Region(space, first_partition, partitions, offset, dtype, elements);
    if (!r.ok()) return r.status();
    return m->session.Read(*r, out, size);
  });
}

dvejit_status dvejit_machine_set_register(dvejit_machine* m, int index, uint32_t value) {
  return Guard(m, [&] { return m->session.SetRegister(index, value); });
}

dvejit_status dvejit_machine_get_register(dvejit_machine* m, int index, uint32_t* value) {
  return Guard(m, [&] { return GetInto(value, [&] { return m->session.GetRegister(index); }); });
}

dvejit_status dvejit_machine_set_param_ram(dvejit_machine* m, int index, float value) {
  return Guard(m, [&] { return m->session.SetParamRam(index, value); });
}

dvejit_status dvejit_machine_get_param_ram(dvejit_machine* m, int index, float* value) {
  return Guard(m, [&] { return GetInto(value, [&] { return m->session.GetParamRam(index); }); });
}

dvejit_status dvejit_program_assemble(const char* generation, const char* text, size_t text_size,
                                      dvejit_program** out, char* err, size_t err_size) {
  if (text == nullptr && text_size != 0) {
    CopyMessage("usage: text is NULL", err, err_size);
    if (out != nullptr) *out = nullptr;
    return DVEJIT_ERR_USAGE;
  }
  return MakeProgram(out, err, err_size, [&] {
    return dvejit::Program::FromText(std::string_view(text != nullptr ? text : "", text_size),
                                     generation != nullptr ? generation : "cayman");
  });
}

dvejit_status dvejit_program_decode(const void* records, size_t size, dvejit_program** out,
                                    char* err, size_t err_size) {
  if (records == nullptr && size != 0) {
    CopyMessage("usage: records is NULL", err, err_size);
    if (out != nullptr) *out = nullptr;
    return DVEJIT_ERR_USAGE;
  }
  return MakeProgram(out, err, err_size, [&] {
    return dvejit::Program::FromBytes(
        std::span<const uint8_t>(static_cast<const uint8_t*>(records), size));
  });
}

void dvejit_program_destroy(dvejit_program* p) { delete p; }

size_t dvejit_program_size(const dvejit_program* p) {
  return p != nullptr ? p->program.size() : 0;
}

size_t dvejit_program_encode(const dvejit_program* p, void* out, size_t capacity) {
  if (p == nullptr) return 0;
  try {
    const std::vector<uint8_t> bytes = p->program.Encode();
    if (out != nullptr && capacity >= bytes.size()) std::memcpy(out, bytes.data(), bytes.size());
    return bytes.size();
  } catch (...) {
    return 0;
  }
}

dvejit_status dvejit_run(dvejit_machine* m, const dvejit_program* p, dvejit_profile profile,
                         int strict_events, dvejit_tier tier) {
  return Guard(m, [&]() -> absl::Status {
    m->executed = 0;
    m->warnings.clear();
    m->warnings_text.clear();
    m->summary.clear();
    m->tier_notes.clear();
    m->tier_used = DVEJIT_TIER_INTERP;
    if (p == nullptr) return NullArgument("program");
    if (!FitsByte(profile)) return BadEnum("profile", profile);
    if (!FitsByte(tier)) return BadEnum("tier", tier);
    dvejit::RunConfig config;
    config.profile = static_cast<dvejit::RunProfile>(profile);
    config.strict_events = strict_events != 0;
    config.tier = static_cast<dvejit::RunTier>(tier);
    config.threads = m->threads;
    dvejit::RunResult r = m->session.Run(p->program, config);
    m->executed = r.executed;
    m->warnings = std::move(r.warnings);
    for (const std::string& w : m->warnings) m->warnings_text += w + "\n";
    m->summary = std::move(r.summary);
    for (const std::string& n : r.tier_notes) m->tier_notes += n + "\n";
    m->tier_used = static_cast<dvejit_tier>(r.tier_used);
    return r.status;
  });
}

dvejit_status dvejit_machine_set_threads(dvejit_machine* m, int threads) {
  return Guard(m, [&]() -> absl::Status {
    if (!dvejit::ThreadCountInRange(threads))
      return dvejit::ToStatus(dvejit::MakeViolation(dvejit::ErrorKind::Usage, "", "threads", std::to_string(threads),
                                                    "1 to " + std::to_string(dvejit::kMaxThreads)),
                              dvejit::Location{});
    m->threads = threads;
    return absl::OkStatus();
  });
}

int64_t dvejit_report_executed(const dvejit_machine* m) { return m != nullptr ? m->executed : 0; }

size_t dvejit_report_warning_count(const dvejit_machine* m) {
  return m != nullptr ? m->warnings.size() : 0;
}

const char* dvejit_report_warning(const dvejit_machine* m, size_t i) {
  if (m == nullptr || i >= m->warnings.size()) return "";
  return m->warnings[i].c_str();
}

const char* dvejit_report_warnings(const dvejit_machine* m) {
  return m != nullptr ? m->warnings_text.c_str() : "";
}

const char* dvejit_report_summary(const dvejit_machine* m) {
  return m != nullptr ? m->summary.c_str() : "";
}

dvejit_tier dvejit_report_tier_used(const dvejit_machine* m) {
  return m != nullptr ? m->tier_used : DVEJIT_TIER_INTERP;
}

const char* dvejit_report_tier_notes(const dvejit_machine* m) {
  return m != nullptr ? m->tier_notes.c_str() : "";
}

}  // extern "C"
