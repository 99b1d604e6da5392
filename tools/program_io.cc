#include "tools/program_io.h"

#include <string_view>

#include "frontend/assembler.h"
#include "runtime/executor.h"
#include "runtime/npy.h"

namespace dvejit {

bool LooksLikeText(const std::string& path, const std::vector<uint8_t>& bytes) {
  auto ends_with = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends_with(".bin")) return false;
  if (ends_with(".s") || ends_with(".asm") || ends_with(".dve")) return true;
  for (uint8_t b : bytes)
    if (b == 0 || (b < 0x20 && b != '\n' && b != '\r' && b != '\t')) return false;
  return true;
}

absl::StatusOr<std::vector<Instruction>> LoadProgram(const std::string& path, Generation gen) {
  auto bytes = ReadFileBytes(path, kMaxProgramBytes);
  if (!bytes.ok()) return bytes.status();
  if (LooksLikeText(path, *bytes))
    return Assemble(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                    gen);
  return DecodeStream(*bytes);
}

static_assert(kMaxThreads == 256, "kThreadsRange names the limit");

std::optional<int> ParseThreadCount(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 3) return std::nullopt;
  int n = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = 10 * n + (c - '0');
  }
  if (!ThreadCountInRange(n)) return std::nullopt;
  return n;
}

}  // namespace dvejit
