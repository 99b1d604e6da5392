/* dvejit's C API: opaque handles for one emulated DVE (dvejit_machine) and one loaded
 * instruction stream (dvejit_program). Every call returns a status code; nothing throws. */
#ifndef DVEJIT_C_H_
#define DVEJIT_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dvejit_machine dvejit_machine;
typedef struct dvejit_program dvejit_program;

/* The kind of an error (validation.md §1). INTERNAL: an unexpected failure (out of memory, a
 * bug); the message says what happened. */
typedef enum dvejit_status {
  DVEJIT_OK = 0,
  DVEJIT_ERR_DECODE = 1,
  DVEJIT_ERR_INVALID = 2,
  DVEJIT_ERR_UNSUPPORTED = 3,
  DVEJIT_ERR_RUNTIME = 4,
  DVEJIT_ERR_SYNTAX = 5,
  DVEJIT_ERR_USAGE = 6,
  DVEJIT_ERR_INTERNAL = 7
} dvejit_status;

/* The *_MAX_ENUM values only make every int from 0 up a value of the enum (so an out-of-range
 * argument is a usage error, not undefined behaviour); they name nothing. */
typedef enum dvejit_space {
  DVEJIT_SBUF = 0,
  DVEJIT_PSUM = 1,
  DVEJIT_SPACE_MAX_ENUM = 0x7FFFFFFF
} dvejit_space;
typedef enum dvejit_profile {
  DVEJIT_PROFILE_CONTRACT = 0,
  DVEJIT_PROFILE_DEVICE = 1,
  DVEJIT_PROFILE_MAX_ENUM = 0x7FFFFFFF
} dvejit_profile;
/* INTERP: the reference interpreter. JIT: the stream compiled with LLVM (a stream the JIT cannot
 * take runs interpreted, with a warning). AUTO: interpreted the first time a stream runs,
 * compiled when it repeats. The report tells which tier ran and why. */
typedef enum dvejit_tier {
  DVEJIT_TIER_INTERP = 0,
  DVEJIT_TIER_JIT = 1,
  DVEJIT_TIER_AUTO = 2,
  DVEJIT_TIER_MAX_ENUM = 0x7FFFFFFF
} dvejit_tier;
/* Host element types, numbered as the ISA's dtype codes. bf16 and fp8 travel as raw bits. */
typedef enum dvejit_dtype {
  DVEJIT_INT8 = 0x2,
  DVEJIT_UINT8 = 0x3,
  DVEJIT_INT16 = 0x4,
  DVEJIT_UINT16 = 0x5,
  DVEJIT_BF16 = 0x6,
  DVEJIT_FP16 = 0x7,
  DVEJIT_INT32 = 0x8,
  DVEJIT_UINT32 = 0x9,
  DVEJIT_FP32 = 0xA,
  DVEJIT_FP8E3 = 0xD,
  DVEJIT_FP8E4 = 0xE,
  DVEJIT_FP8E5 = 0xF,
  DVEJIT_DTYPE_MAX_ENUM = 0x7FFFFFFF
} dvejit_dtype;

const char* dvejit_version(void);                   /* "0.1.0" */
const char* dvejit_status_name(dvejit_status code); /* "ok", "decode", ..., "internal" */
int dvejit_dtype_size(dvejit_dtype dtype);          /* bytes; 0 for an unknown value */

/* ---- machines ----
 * Calls on a machine record their error message in the handle: dvejit_machine_error() returns
 * the message of the last call that failed on it ("" after a call that succeeded). A NULL
 * machine is DVEJIT_ERR_USAGE. A machine is used by one thread at a time. */

/* generation: "sunda", "cayman", "mariana" or "maverick" (NULL: "cayman"). On failure *out is
 * NULL and, when err is not NULL, the message is written to err (at most err_size bytes,
 * NUL-terminated). */
dvejit_status dvejit_machine_create(const char* generation, dvejit_machine** out, char* err,
                                    size_t err_size);
void dvejit_machine_destroy(dvejit_machine* m); /* NULL is fine */
const char* dvejit_machine_error(const dvejit_machine* m);
const char* dvejit_machine_generation(const dvejit_machine* m);
/* Bytes of one partition of the space; 0 when the generation has no such space. */
uint32_t dvejit_machine_active_bytes(const dvejit_machine* m, dvejit_space space);

/* Memory, registers, Parameter RAM, lane state and events back to zero. */
dvejit_status dvejit_machine_reset(dvejit_machine* m);
/* Parameter RAM entry k = fp32(1/(k+1)). */
dvejit_status dvejit_machine_preload_reciprocals(dvejit_machine* m);

/* A region: `partitions` partitions from `first_partition`, `elements` values of `dtype` each
 * from byte `offset`. size must be partitions * elements * dvejit_dtype_size(dtype); data is
 * partition-major. A region outside memory is DVEJIT_ERR_USAGE and changes nothing. */
dvejit_status dvejit_machine_write(dvejit_machine* m, dvejit_space space, uint32_t first_partition,
                                   uint32_t partitions, uint32_t offset, dvejit_dtype dtype,
                                   uint32_t elements, const void* data, size_t size);
dvejit_status dvejit_machine_read(dvejit_machine* m, dvejit_space space, uint32_t first_partition,
                                  uint32_t partitions, uint32_t offset, dvejit_dtype dtype,
                                  uint32_t elements, void* out, size_t size);

dvejit_status dvejit_machine_set_register(dvejit_machine* m, int index, uint32_t value); /* 0..63 */
dvejit_status dvejit_machine_get_register(dvejit_machine* m, int index, uint32_t* value);
dvejit_status dvejit_machine_set_param_ram(dvejit_machine* m, int index, float value); /* 0..255 */
dvejit_status dvejit_machine_get_param_ram(dvejit_machine* m, int index, float* value);

/* ---- programs (immutable once made) ---- */

/* Assembly text (docs/asm.md) of text_size bytes, for generation (NULL: "cayman"); the program
 * runs only on machines of that generation. Errors as for dvejit_machine_create. */
dvejit_status dvejit_program_assemble(const char* generation, const char* text, size_t text_size,
                                      dvejit_program** out, char* err, size_t err_size);
/* 64-byte records back to back. */
dvejit_status dvejit_program_decode(const void* records, size_t size, dvejit_program** out,
                                    char* err, size_t err_size);
void dvejit_program_destroy(dvejit_program* p); /* NULL is fine */
size_t dvejit_program_size(const dvejit_program* p); /* instructions; 0 for NULL */
/* Writes the 64-byte records when capacity suffices; returns the bytes they take either way. */
size_t dvejit_program_encode(const dvejit_program* p, void* out, size_t capacity);

/* ---- running ----
 * Validates the whole program (an invalid one changes nothing), then executes it. The report
 * of the run, also of a failed one, stays readable through the accessors below until the next
 * dvejit_run on the machine. */
dvejit_status dvejit_run(dvejit_machine* m, const dvejit_program* p, dvejit_profile profile,
                         int strict_events, dvejit_tier tier);
/* Threads (1-256, default 1) the JIT tier may split each compiled region's channel blocks
 * across in this machine's later runs; regions that move under 1 MiB stay on the calling
 * thread. The results are the same for every count. Another count is DVEJIT_ERR_USAGE. */
dvejit_status dvejit_machine_set_threads(dvejit_machine* m, int threads);
int64_t dvejit_report_executed(const dvejit_machine* m);      /* instructions completed */
size_t dvejit_report_warning_count(const dvejit_machine* m);
const char* dvejit_report_warning(const dvejit_machine* m, size_t i); /* "" past the end */
const char* dvejit_report_warnings(const dvejit_machine* m); /* one per line, "" when none */
const char* dvejit_report_summary(const dvejit_machine* m);  /* as `dvejit run` prints it */
dvejit_tier dvejit_report_tier_used(const dvejit_machine* m); /* INTERP or JIT */
const char* dvejit_report_tier_notes(const dvejit_machine* m); /* why it ran interpreted; lines */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DVEJIT_C_H_ */
