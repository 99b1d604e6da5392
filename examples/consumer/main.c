/* Embeds dvejit through the installed C API: the same tiny program as main.cc. */
#include <dvejit/dvejit_c.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char err[512];
  dvejit_machine* m = NULL;
  dvejit_program* p = NULL;
  static const char text[] =
      "TensorScalarArith src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] in_dtype=fp32 "
      "out_dtype=fp32 n=4 op0=add imm0=2.0 op1=mult imm1=3.0\n";
  if (dvejit_machine_create("cayman", &m, err, sizeof err) != DVEJIT_OK ||
      dvejit_program_assemble("cayman", text, strlen(text), &p, err, sizeof err) != DVEJIT_OK) {
    fprintf(stderr, "setup: %s\n", err);
    return 1;
  }
  float x[32], y[32];
  for (int i = 0; i < 32; ++i) x[i] = 1.0f;
  int ok = dvejit_machine_write(m, DVEJIT_SBUF, 0, 4, 0x0, DVEJIT_FP32, 8, x, sizeof x) == DVEJIT_OK &&
           dvejit_run(m, p, DVEJIT_PROFILE_CONTRACT, 0, DVEJIT_TIER_AUTO) == DVEJIT_OK &&
           dvejit_machine_read(m, DVEJIT_SBUF, 0, 4, 0x100, DVEJIT_FP32, 8, y, sizeof y) == DVEJIT_OK;
  if (!ok) fprintf(stderr, "error: %s\n", dvejit_machine_error(m));
  for (int i = 0; ok && i < 32; ++i) {
    uint32_t bits;
    memcpy(&bits, &y[i], sizeof bits);
    ok = bits == 0x41100000u; /* 9.0f */
  }
  if (ok) printf("consumer (C): dvejit %s ok, executed %lld\n", dvejit_version(),
                 (long long)dvejit_report_executed(m));
  dvejit_program_destroy(p);
  dvejit_machine_destroy(m);
  return ok ? 0 : 1;
}
