/* The C API (api/dvejit_c.h) from plain C11: create a machine, assemble and decode programs,
 * write inputs, run, read bits back, registers, Parameter RAM, reset, the report, and every
 * error path returning its code with a message. Exits 0 when every check passes. */
#include "api/dvejit_c.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_checks = 0;
static int g_failures = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    ++g_checks;                                                        \
    if (!(cond)) {                                                     \
      ++g_failures;                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)

#define CHECK_STATUS(expr, want)                                                  \
  do {                                                                            \
    dvejit_status got_ = (expr);                                                  \
    ++g_checks;                                                                   \
    if (got_ != (want)) {                                                         \
      ++g_failures;                                                               \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, \
              #expr, dvejit_status_name(got_), dvejit_status_name(want));         \
    }                                                                             \
  } while (0)

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static int contains(const char* haystack, const char* needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

static const char kProgram[] =
    "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
    "TensorScalarArith src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] in_dtype=fp32 "
    "out_dtype=fp32 n=4 op0=add imm0=2.0 op1=mult imm1=3.0\n";

static const char kScale[] =
    "TensorScalarArith src=sbuf[0]+0x0[4:1] dst=sbuf[0]+0x40[4:1] in_dtype=fp32 "
    "out_dtype=fp32 n=2 op0=add imm0=2.0 op1=mult imm1=3.0\n";

static void test_basics(void) {
  CHECK(strcmp(dvejit_version(), "0.1.0") == 0);
  CHECK(strcmp(dvejit_status_name(DVEJIT_OK), "ok") == 0);
  CHECK(strcmp(dvejit_status_name(DVEJIT_ERR_SYNTAX), "syntax") == 0);
  CHECK(strcmp(dvejit_status_name(DVEJIT_ERR_INTERNAL), "internal") == 0);
  CHECK(dvejit_dtype_size(DVEJIT_FP32) == 4);
  CHECK(dvejit_dtype_size(DVEJIT_BF16) == 2);
  CHECK(dvejit_dtype_size(DVEJIT_FP8E5) == 1);
  CHECK(dvejit_dtype_size((dvejit_dtype)0xB) == 0);
}

static void test_create(void) {
  char err[256];
  dvejit_machine* m = (dvejit_machine*)1;
  CHECK_STATUS(dvejit_machine_create("gen9", &m, err, sizeof err), DVEJIT_ERR_USAGE);
  CHECK(m == NULL);
  CHECK(contains(err, "gen9"));
  /* A short buffer gets a truncated, terminated message. */
  char tiny[6];
  CHECK_STATUS(dvejit_machine_create("gen9", &m, tiny, sizeof tiny), DVEJIT_ERR_USAGE);
  CHECK(strlen(tiny) == 5);
  CHECK_STATUS(dvejit_machine_create("cayman", NULL, err, sizeof err), DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_create("maverick", &m, NULL, 0), DVEJIT_OK);
  CHECK(strcmp(dvejit_machine_generation(m), "maverick") == 0);
  CHECK(dvejit_machine_active_bytes(m, DVEJIT_PSUM) == 0);
  CHECK(dvejit_machine_active_bytes(m, DVEJIT_SBUF) == 512u << 10);
  dvejit_machine_destroy(m);
  CHECK_STATUS(dvejit_machine_create(NULL, &m, err, sizeof err), DVEJIT_OK);
  CHECK(strcmp(dvejit_machine_generation(m), "cayman") == 0);
  CHECK(strcmp(err, "") == 0);
  dvejit_machine_destroy(m);
  dvejit_machine_destroy(NULL);
  dvejit_program_destroy(NULL);
}

static void test_run(void) {
  char err[256];
  dvejit_machine* m = NULL;
  dvejit_program* p = NULL;
  CHECK_STATUS(dvejit_machine_create("cayman", &m, err, sizeof err), DVEJIT_OK);
  CHECK_STATUS(dvejit_program_assemble("cayman", kProgram, strlen(kProgram), &p, err, sizeof err),
               DVEJIT_OK);
  CHECK(dvejit_program_size(p) == 2);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP), DVEJIT_OK);
  CHECK(dvejit_report_executed(m) == 2);
  CHECK(dvejit_report_warning_count(m) == 0);
  CHECK(strcmp(dvejit_report_warnings(m), "") == 0);
  CHECK(contains(dvejit_report_summary(m), "TensorScalarArith=1"));
  CHECK(strcmp(dvejit_machine_error(m), "") == 0);

  float out[4 * 8];
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 4, 0x100, DVEJIT_FP32, 8, out, sizeof out),
               DVEJIT_OK);
  int all_nine = 1;
  for (int i = 0; i < 32; ++i) all_nine &= bits_of(out[i]) == 0x41100000u; /* 9.0f */
  CHECK(all_nine);

  /* Encode, decode, run again on a fresh machine state. */
  size_t need = dvejit_program_encode(p, NULL, 0);
  CHECK(need == 128);
  unsigned char records[128];
  CHECK(dvejit_program_encode(p, records, sizeof records) == 128);
  dvejit_program* q = NULL;
  CHECK_STATUS(dvejit_program_decode(records, sizeof records, &q, err, sizeof err), DVEJIT_OK);
  CHECK(dvejit_program_size(q) == 2);
  CHECK_STATUS(dvejit_machine_reset(m), DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 4, 0x100, DVEJIT_FP32, 8, out, sizeof out),
               DVEJIT_OK);
  CHECK(bits_of(out[0]) == 0 && bits_of(out[31]) == 0);
  CHECK_STATUS(dvejit_run(m, q, DVEJIT_PROFILE_DEVICE, 1, DVEJIT_TIER_INTERP), DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 3, 1, 0x11C, DVEJIT_FP32, 1, out, 4),
               DVEJIT_OK);
  CHECK(bits_of(out[0]) == 0x41100000u);

  /* The JIT tier, on one thread and on four: the same bits. A thread count outside 1-256 is
   * refused and changes nothing. */
  CHECK_STATUS(dvejit_machine_set_threads(m, 0), DVEJIT_ERR_USAGE);
  CHECK(contains(dvejit_machine_error(m), "threads"));
  CHECK_STATUS(dvejit_machine_set_threads(m, 257), DVEJIT_ERR_USAGE);
  for (int threads = 1; threads <= 4; threads += 3) {
    CHECK_STATUS(dvejit_machine_set_threads(m, threads), DVEJIT_OK);
    CHECK_STATUS(dvejit_machine_reset(m), DVEJIT_OK);
    CHECK_STATUS(dvejit_run(m, q, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_JIT), DVEJIT_OK);
    CHECK(dvejit_report_tier_used(m) == DVEJIT_TIER_JIT);
    CHECK(dvejit_report_executed(m) == 2);
    CHECK(contains(dvejit_report_summary(m), "(jit"));
    CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 4, 0x100, DVEJIT_FP32, 8, out, sizeof out),
                 DVEJIT_OK);
    all_nine = 1;
    for (int i = 0; i < 32; ++i) all_nine &= bits_of(out[i]) == 0x41100000u;
    CHECK(all_nine);
  }
  CHECK_STATUS(dvejit_machine_set_threads(m, 1), DVEJIT_OK);
  /* Strict events run interpreted: asked for the JIT, the report warns and says why. */
  CHECK_STATUS(dvejit_run(m, q, DVEJIT_PROFILE_CONTRACT, 1, DVEJIT_TIER_JIT), DVEJIT_OK);
  CHECK(dvejit_report_tier_used(m) == DVEJIT_TIER_INTERP);
  CHECK(dvejit_report_warning_count(m) == 1);
  CHECK(contains(dvejit_report_warning(m, 0), "jit tier not used: ran interpreted"));
  CHECK(strcmp(dvejit_report_warning(m, 1), "") == 0);
  CHECK(contains(dvejit_report_warnings(m), "jit tier not used: ran interpreted"));
  CHECK(contains(dvejit_report_summary(m), "warning: jit tier not used"));
  CHECK(strlen(dvejit_report_tier_notes(m)) > 0);

  dvejit_program_destroy(q);
  dvejit_program_destroy(p);
  dvejit_machine_destroy(m);
}

static void test_host_data(void) {
  dvejit_machine* m = NULL;
  dvejit_program* p = NULL;
  CHECK_STATUS(dvejit_machine_create("mariana", &m, NULL, 0), DVEJIT_OK);
  CHECK_STATUS(dvejit_program_assemble("mariana", kScale, strlen(kScale), &p, NULL, 0), DVEJIT_OK);
  const float in[8] = {1.5f, -2.0f, 0.25f, 1e30f, 0.0f, -0.0f, 7.0f, -5.0f};
  CHECK_STATUS(dvejit_machine_write(m, DVEJIT_SBUF, 0, 2, 0, DVEJIT_FP32, 4, in, sizeof in),
               DVEJIT_OK);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP), DVEJIT_OK);
  float out[8];
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 2, 0x40, DVEJIT_FP32, 4, out, sizeof out),
               DVEJIT_OK);
  int exact = 1;
  for (int i = 0; i < 8; ++i) {
    volatile float sum = in[i] + 2.0f; /* two roundings, as the engine does them */
    exact &= bits_of(out[i]) == bits_of(sum * 3.0f);
  }
  CHECK(exact);
  /* PSUM, as uint32 bits. */
  const uint32_t word = 0xCAFEF00Du;
  CHECK_STATUS(dvejit_machine_write(m, DVEJIT_PSUM, 100, 1, 16, DVEJIT_UINT32, 1, &word, 4),
               DVEJIT_OK);
  uint32_t back = 0;
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_PSUM, 100, 1, 16, DVEJIT_UINT32, 1, &back, 4),
               DVEJIT_OK);
  CHECK(back == word);
  dvejit_program_destroy(p);
  dvejit_machine_destroy(m);
}

static void test_registers(void) {
  dvejit_machine* m = NULL;
  CHECK_STATUS(dvejit_machine_create("sunda", &m, NULL, 0), DVEJIT_OK);
  uint32_t v = 0;
  CHECK_STATUS(dvejit_machine_set_register(m, 5, 0x12345678u), DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_get_register(m, 5, &v), DVEJIT_OK);
  CHECK(v == 0x12345678u);
  CHECK_STATUS(dvejit_machine_set_register(m, 64, 1), DVEJIT_ERR_USAGE);
  CHECK(contains(dvejit_machine_error(m), "register"));
  CHECK_STATUS(dvejit_machine_get_register(m, 5, NULL), DVEJIT_ERR_USAGE);
  float f = 0;
  CHECK_STATUS(dvejit_machine_set_param_ram(m, 7, 0.75f), DVEJIT_OK);
  CHECK(strcmp(dvejit_machine_error(m), "") == 0); /* cleared by a call that succeeded */
  CHECK_STATUS(dvejit_machine_get_param_ram(m, 7, &f), DVEJIT_OK);
  CHECK(f == 0.75f);
  CHECK_STATUS(dvejit_machine_get_param_ram(m, 256, &f), DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_preload_reciprocals(m), DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_get_param_ram(m, 2, &f), DVEJIT_OK);
  CHECK(bits_of(f) == 0x3EAAAAABu); /* fp32(1/3) */
  CHECK_STATUS(dvejit_machine_reset(m), DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_get_register(m, 5, &v), DVEJIT_OK);
  CHECK(v == 0);
  CHECK_STATUS(dvejit_machine_get_param_ram(m, 2, &f), DVEJIT_OK);
  CHECK(f == 0.0f);
  dvejit_machine_destroy(m);
}

static void test_errors(void) {
  char err[512];
  dvejit_machine* m = NULL;
  dvejit_program* p = (dvejit_program*)1;
  CHECK_STATUS(dvejit_machine_create("cayman", &m, NULL, 0), DVEJIT_OK);

  const char* syntax = "Memset dtype=fp32 n=\n";
  CHECK_STATUS(dvejit_program_assemble(NULL, syntax, strlen(syntax), &p, err, sizeof err),
               DVEJIT_ERR_SYNTAX);
  CHECK(p == NULL);
  CHECK(contains(err, "line 1"));

  unsigned char bad[64] = {0xFF};
  CHECK_STATUS(dvejit_program_decode(bad, 64, &p, err, sizeof err), DVEJIT_ERR_DECODE);
  CHECK_STATUS(dvejit_program_decode(bad, 63, &p, err, sizeof err), DVEJIT_ERR_DECODE);
  CHECK_STATUS(dvejit_program_decode(NULL, 64, &p, err, sizeof err), DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_program_assemble("nope", "", 0, &p, err, sizeof err), DVEJIT_ERR_USAGE);

  const char* invalid = "Memset dtype=fp32 n=200 dst_element_count=8 set_value=0 dst=sbuf[0]+0x0[8:1]\n";
  CHECK_STATUS(dvejit_program_assemble(NULL, invalid, strlen(invalid), &p, err, sizeof err),
               DVEJIT_OK);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP),
               DVEJIT_ERR_INVALID);
  CHECK(contains(dvejit_machine_error(m), "check_active_channels"));
  CHECK(dvejit_report_executed(m) == 0);
  dvejit_program_destroy(p);

  const char* unsupported = "Exponential\n";
  CHECK_STATUS(dvejit_program_assemble(NULL, unsupported, strlen(unsupported), &p, err, sizeof err),
               DVEJIT_OK);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP),
               DVEJIT_ERR_UNSUPPORTED);
  dvejit_program_destroy(p);

  const char* waits =
      "Memset dtype=fp32 n=4 dst_element_count=8 set_value=0x3F800000 dst=sbuf[0]+0x0[8:1]\n"
      "Copy wait=SEM_GE_IMM:1 semval=1 src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] "
      "in_dtype=fp32 out_dtype=fp32 n=4\n";
  CHECK_STATUS(dvejit_program_assemble(NULL, waits, strlen(waits), &p, err, sizeof err), DVEJIT_OK);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 1, DVEJIT_TIER_INTERP),
               DVEJIT_ERR_RUNTIME);
  CHECK(dvejit_report_executed(m) == 1);
  CHECK(contains(dvejit_machine_error(m), "event_wait_satisfiable"));
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP), DVEJIT_OK);
  /* Bad enum values are usage errors, not crashes. */
  CHECK_STATUS(dvejit_run(m, p, (dvejit_profile)5, 0, DVEJIT_TIER_INTERP), DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, (dvejit_tier)5), DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, (dvejit_tier)0x100), DVEJIT_ERR_USAGE);
  dvejit_program_destroy(p);

  /* A program assembled for another generation. */
  CHECK_STATUS(dvejit_program_assemble("sunda", kProgram, strlen(kProgram), &p, err, sizeof err),
               DVEJIT_OK);
  CHECK_STATUS(dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP), DVEJIT_ERR_USAGE);
  CHECK(contains(dvejit_machine_error(m), "sunda"));
  dvejit_program_destroy(p);

  /* Bounds. */
  float buf[8] = {0};
  const uint32_t active = dvejit_machine_active_bytes(m, DVEJIT_SBUF);
  CHECK_STATUS(dvejit_machine_write(m, DVEJIT_SBUF, 0, 1, active - 4, DVEJIT_FP32, 2, buf, 8),
               DVEJIT_ERR_USAGE);
  CHECK(contains(dvejit_machine_error(m), "active bytes"));
  CHECK_STATUS(dvejit_machine_write(m, DVEJIT_SBUF, 0, 1, active - 8, DVEJIT_FP32, 2, buf, 8),
               DVEJIT_OK);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 127, 2, 0, DVEJIT_FP32, 1, buf, 8),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 1, 0, DVEJIT_FP32, 2, buf, 4),
               DVEJIT_ERR_USAGE); /* size mismatch */
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 1, 0, DVEJIT_FP32, 2, NULL, 8),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_read(m, (dvejit_space)3, 0, 1, 0, DVEJIT_FP32, 2, buf, 8),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 1, 0, (dvejit_dtype)0xB, 2, buf, 8),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 1, 0, (dvejit_dtype)0x10A, 2, buf, 8),
               DVEJIT_ERR_USAGE); /* not truncated into fp32 */
  CHECK_STATUS(dvejit_machine_read(m, (dvejit_space)0x100, 0, 1, 0, DVEJIT_FP32, 2, buf, 8),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_machine_read(m, DVEJIT_SBUF, 0, 1, 0, DVEJIT_FP32, 0xFFFFFFFFu, buf, 8),
               DVEJIT_ERR_USAGE);

  /* NULL handles. */
  CHECK_STATUS(dvejit_run(NULL, NULL, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP),
               DVEJIT_ERR_USAGE);
  CHECK_STATUS(dvejit_run(m, NULL, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_INTERP),
               DVEJIT_ERR_USAGE);
  CHECK(contains(dvejit_machine_error(m), "program"));
  CHECK_STATUS(dvejit_machine_reset(NULL), DVEJIT_ERR_USAGE);
  CHECK(dvejit_program_size(NULL) == 0);
  CHECK(dvejit_report_executed(NULL) == 0);
  CHECK(strcmp(dvejit_report_summary(NULL), "") == 0);
  dvejit_machine_destroy(m);
}

int main(void) {
  test_basics();
  test_create();
  test_run();
  test_host_data();
  test_registers();
  test_errors();
  printf("c_api_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
