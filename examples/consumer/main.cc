// Embeds dvejit through the installed C++ API: assemble a tiny program, give it an input, run
// it, check the output's bits. Exit 0 when they are right.
#include <dvejit/dvejit.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  auto session = dvejit::Session::Create("cayman");
  if (!session.ok()) {
    std::fprintf(stderr, "create: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  // y = (x + 2) * 3 on 4 channels of 8 fp32 values.
  auto program = session->LoadProgram(std::string_view(
      "TensorScalarArith src=sbuf[0]+0x0[8:1] dst=sbuf[0]+0x100[8:1] in_dtype=fp32 "
      "out_dtype=fp32 n=4 op0=add imm0=2.0 op1=mult imm1=3.0\n"));
  if (!program.ok()) {
    std::fprintf(stderr, "assemble: %s\n", std::string(program.status().message()).c_str());
    return 1;
  }
  const dvejit::TensorRegion x{dvejit::MemorySpace::Sbuf, 0, 4, 0x0, dvejit::ElementType::Float32, 8};
  const dvejit::TensorRegion y{dvejit::MemorySpace::Sbuf, 0, 4, 0x100, dvejit::ElementType::Float32, 8};
  if (auto s = session->WriteValues(x, std::vector<float>(32, 1.0f)); !s.ok()) {
    std::fprintf(stderr, "write: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  dvejit::RunResult r = session->Run(*program);
  std::fputs(r.summary.c_str(), stdout);
  if (!r.ok()) {
    std::fprintf(stderr, "run: %s\n", std::string(r.status.message()).c_str());
    return 1;
  }
  auto out = session->ReadValues<float>(y);
  if (!out.ok() || out->size() != 32) return 1;
  for (float v : *out)
    if (std::bit_cast<uint32_t>(v) != 0x41100000u) {  // 9.0f
      std::fprintf(stderr, "wrong value %a\n", static_cast<double>(v));
      return 1;
    }
  // Errors are statuses with a kind.
  auto bad = session->LoadProgram(std::string_view("NotAnOpcode\n"));
  if (bad.ok() || dvejit::ErrorCodeOf(bad.status()) != dvejit::ErrorCode::Syntax) return 1;
  std::printf("consumer (C++): dvejit %s ok, y = 9.0 in 32 lanes\n",
              std::string(dvejit::Version()).c_str());
  return 0;
}
