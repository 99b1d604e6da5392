// libFuzzer entry for the microcode table reader and decoders (frontend/microcode.h).
//
// The input is a table-directory image:
//   <dve_info.json text> 0x00 <version.json text> 0x00 <flags byte> <blob pool>
// A missing first NUL means the whole input is dve_info.json; an empty version part means there
// is no version.json. flags & 3 picks the generation passed to the reader (0: detect, 1..3:
// gen2..gen4); flags & 4 hands each blob one byte more than the reader asks for (oversized
// files). Blobs are served from the pool in the order the reader asks for them (tables[] order,
// then dve_table_keys order within a table), each taking what the reader's limit allows, so a
// short pool truncates the later blobs.
//
// Everything the reader returns is then decoded: every opcode of every set end to end, rosters,
// and diffs of every pair of sets. Nothing may crash, throw or read out of bounds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "frontend/microcode.h"

namespace {

using namespace dvejit::ucode;

void Exercise(const TableDir& d) {
  for (const TableSet& s : d.sets) {
    for (int op = 0; op < 256; ++op) {
      absl::StatusOr<OpDecode> dec = DecodeOp(s, static_cast<uint8_t>(op));
      absl::StatusOr<Microsteps> ms = MicrostepsOf(s, static_cast<uint8_t>(op));
      if (dec.ok() && ms.ok() && dec->issued_steps != ms->issued_steps) __builtin_trap();
      if (dec.ok() && dec->entry.enabled() != s.Enabled(static_cast<uint8_t>(op))) __builtin_trap();
    }
    (void)s.ControlRow(~uint64_t{0});
    (void)s.SlowRow(~uint64_t{0});
    (void)s.DatapathBytes(~uint64_t{0});
    for (TableKey k : KeysOf(d.ucode_gen))
      if (const Blob* b = s.BlobFor(k)) (void)IdentifyBlob(b->sha256);
    absl::StatusOr<Roster> r = ResolveRoster(d.ucode_gen, s.name, &d);
    if (!r.ok()) __builtin_trap();  // every listed set resolves
    for (const TableSet& t : d.sets) {
      absl::StatusOr<SetDiff> diff = DiffSets(s, t);
      if (diff.ok() && &s == &t && !diff->empty()) __builtin_trap();
    }
  }
  (void)ResolveRoster(d.ucode_gen, "default", nullptr);
  (void)ResolveRoster(d.ucode_gen, "saturate", nullptr);
}

// The pure decoders on raw slices, independent of the reader.
void DecodeRaw(std::span<const uint8_t> data) {
  uint8_t row[16] = {};
  uint8_t block[64] = {};
  for (size_t i = 0; i < data.size() && i < 64; ++i) block[i] = data[i];
  for (size_t i = 0; i < 16; ++i) row[i] = block[i];
  std::span<const uint8_t, 16> r(row);
  (void)DecodeGen2ControlRow(r);
  (void)DecodeFastControlRow(r);
  SlowProgram p = DecodeSlowProgram(r);
  if (IssuedSteps(&p) != 1 + (uint32_t{p.loop_count} + 1) * kSlowStepCount) __builtin_trap();
  for (int g = 1; g <= 5; ++g) {
    DatapathBlock dp = DecodeDatapathBlock(g, std::span<const uint8_t, 64>(block));
    if (dp.pipeline_depth < 0 || dp.pipeline_depth > 8) __builtin_trap();
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{block[i]} << (8 * i);
    OpcodeEntry e = DecodeOpcodeEntry(g, v);
    if (e.enabled() != (v != 0)) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  DecodeRaw(std::span<const uint8_t>(data, size));

  std::string_view info = in, version, pool;
  bool has_version = false;
  uint8_t flags = 0;
  if (size_t nul = in.find('\0'); nul != std::string_view::npos) {
    info = in.substr(0, nul);
    std::string_view rest = in.substr(nul + 1);
    size_t nul2 = rest.find('\0');
    version = rest.substr(0, nul2);
    has_version = !version.empty();
    if (nul2 != std::string_view::npos) {
      pool = rest.substr(nul2 + 1);
      if (!pool.empty()) {
        flags = static_cast<uint8_t>(pool[0]);
        pool.remove_prefix(1);
      }
    }
  }
  size_t offset = 0;
  FileReader reader = [&](const std::string& name,
                          size_t max_bytes) -> absl::StatusOr<std::string> {
    if (name == "dve_info.json") return std::string(info);
    if (name == "version.json") {
      if (!has_version) return absl::NotFoundError("no such file");
      return std::string(version);
    }
    size_t want = (flags & 4) ? max_bytes + 1 : max_bytes;
    size_t take = std::min(want, pool.size() - offset);
    std::string out(pool.substr(offset, take));
    offset += take;
    return out;
  };
  const int gen_flag = flags & 3;
  std::optional<int> gen;
  if (gen_flag) gen = gen_flag + 1;
  absl::StatusOr<TableDir> d = ReadTableDirFrom("fuzz", reader, gen);
#ifdef DVEJIT_FUZZ_VERBOSE  // for checking what a corpus file reaches
  std::fprintf(stderr, "%s\n", d.ok() ? "ok" : std::string(d.status().message()).c_str());
#endif
  if (d.ok()) {
    if (d->sets.empty() || !IsUcodeGen(d->ucode_gen)) __builtin_trap();
    Exercise(*d);
  } else if (d.status().message().empty()) {
    __builtin_trap();  // every error says what and where
  }
  return 0;
}
