// The DVE microcode tables (spec/microcode.md): read a shipped table directory (dve_info.json,
// version.json and per-set blobs), decode opcode entries, control rows, slow micro-programs and
// datapath blocks, diff two table sets, and answer "is opcode X enabled in table set S".
// dvejit reads and counts microcode; it never executes it (field meanings below the byte level
// are not known). Nothing here throws: every failure is an absl::Status naming the file.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/isa.h"
#include "frontend/sha256.h"

namespace dvejit::ucode {

// ---- generations and geometry (microcode.md §1) ----

// The microcode generation of a hardware generation: 2 for sunda, 3 for cayman, 4 for mariana
// and maverick (encoding.md §9).
int UcodeGenOf(Generation g);
inline bool IsUcodeGen(int g) { return g >= 2 && g <= 4; }
// "gen2".."gen4", "2".."4", or a hardware generation name (sunda, cayman, mariana, maverick).
std::optional<int> ParseUcodeGen(std::string_view s);

enum class TableKey : uint8_t { Opcode, Control, ControlFast, ControlSlow, Datapath };
std::string_view TableKeyName(TableKey k);  // exactly as dve_table_keys spells it
std::optional<TableKey> ParseTableKey(std::string_view s);
// The keys of a generation, in the order dve_info.json lists them; empty for a bad generation.
std::span<const TableKey> KeysOf(int ucode_gen);

struct BlobGeometry {
  size_t bytes = 0;   // exact file size; 0 when the generation has no such table
  size_t rows = 0;    // entries / rows / blocks
  size_t stride = 0;  // bytes per entry / row / block
};
BlobGeometry BlobGeometryOf(int ucode_gen, TableKey key);

// The set names the compiler ships for a generation (microcode.md §1). Other names are accepted
// when reading a directory (and reported as a note).
std::span<const std::string_view> StandardSetNames(int ucode_gen);
inline constexpr std::string_view kDefaultSetName = "default";
// The gen4 `saturate` set: integer ALU arithmetic clamps instead of wrapping (semantics.md §4.3).
bool IsSaturateSet(std::string_view name);

// ---- decoders (microcode.md §2, §3); pure functions of bytes ----

struct OpcodeEntry {
  uint64_t value = 0;     // V = opcode_table[opcode]; 0 = disabled in this set
  uint32_t fast_row = 0;  // gen2: V & 0x7F (the control row); gen3/gen4: V & 0xFF
  uint64_t slow_row = 0;  // gen2: V >> 7 (recorded only: gen2 has no slow table); gen3/4: V >> 8
  bool runs_slow = false; // gen3/gen4 and slow_row != 0
  bool enabled() const { return value != 0; }
};
OpcodeEntry DecodeOpcodeEntry(int ucode_gen, uint64_t v);

// gen2 control row: a 96-bit word in a 16-byte slot [seed, STRONG].
struct Gen2ControlRow {
  uint16_t lane_mode_word = 0;           // bytes[0:2], little-endian
  std::array<uint8_t, 8> lane_modes{};   // lane i = (lane_mode_word >> 2i) & 3; 01 = pass
  uint8_t op_select = 0;                 // byte[2]: 5-bit selector plus a high flag bit
  uint8_t pc_imm = 0;                    // byte[4]: sequencer PC / immediate
  std::array<uint8_t, 2> issue_marker{}; // bytes[4:6] (overlaps pc_imm, as the seed maps it)
  std::array<uint8_t, 6> operand_mux{};  // bytes[6:12]
  bool idle = false;                     // lane_mode_word == 0x5555: all lanes mode 01
  bool high_bytes_nonzero = false;       // bytes[12:16] != 0: outside the 96-bit word
};
Gen2ControlRow DecodeGen2ControlRow(std::span<const uint8_t, 16> row);
inline constexpr uint16_t kGen2IdleLaneModes = 0x5555;

// gen3/gen4 fast row: a 64-bit word in a 16-byte slot [seed, STRONG].
struct FastControlRow {
  uint64_t word = 0;                     // bytes[0:8], little-endian
  uint8_t lane_class = 0;                // byte[0]: lane / op class
  uint8_t operand_pc = 0;                // byte[1]: operand / micro-PC immediate
  uint16_t step_config = 0;              // bytes[2:4], little-endian
  std::array<uint8_t, 2> issue_marker{}; // bytes[4:6]: `20 80` / `a0 8x`
  uint8_t step_op = 0;                   // byte[6]: step-op selector
  uint8_t high_op = 0;                   // byte[7]: high op bits
  bool high_bytes_nonzero = false;       // bytes[8:16] != 0: outside the 64-bit word
};
FastControlRow DecodeFastControlRow(std::span<const uint8_t, 16> row);

// gen3/gen4 slow row: an iterative micro-program (see docs/microcode.md for the grammar as read).
// bytes[0:6] are four 12-bit steps, a nibble stream read low nibble first (step k = nibbles
// 3k, 3k+1, 3k+2, least significant first); the default step is 0x30c; byte[6], or byte[7] when
// byte[6] is zero, is the loop count; bytes[8:14] are the loop payload.
inline constexpr uint16_t kDefaultSlowStep = 0x30c;
inline constexpr int kSlowStepCount = 4;
struct SlowProgram {
  std::array<uint16_t, kSlowStepCount> steps{};  // 12-bit steps, in issue order
  uint8_t loop_count = 0;
  int loop_count_byte = 6;               // where loop_count came from: 6, or 7 when byte[6] == 0
  uint8_t byte7 = 0;                     // raw byte[7]
  std::array<uint8_t, 6> payload{};      // bytes[8:14]
  bool head_substituted = false;         // steps[0] != 0x30c: the leading nibbles replaced it
  bool high_bytes_nonzero = false;       // bytes[14:16] != 0: outside the ~112-bit word
  // Steps issued by the program: (loop_count + 1) x steps.
  uint32_t issues() const { return (uint32_t{loop_count} + 1) * kSlowStepCount; }
};
SlowProgram DecodeSlowProgram(std::span<const uint8_t, 16> row);

// Datapath block: 8 lanes x u64 (little-endian) [ref].
uint64_t IdleLaneWord(int ucode_gen);  // gen2 0x00100000, gen3 1<<32, gen4 1<<42; 0 if bad gen
struct DatapathBlock {
  std::array<uint64_t, 8> lanes{};
  std::array<bool, 8> idle{};  // lane word == IdleLaneWord(gen)
  bool off = false;            // all 64 bytes zero: the datapath is off
  int pipeline_depth = 0;      // leading non-idle lanes; 0 when off
};
DatapathBlock DecodeDatapathBlock(int ucode_gen, std::span<const uint8_t, 64> block);

// microcode.md §4.4: 1 for a fast-only op, 1 + (loop_count + 1) x steps with a slow program.
uint32_t IssuedSteps(const SlowProgram* slow);

// ---- a table directory ----

struct Blob {
  std::string file;            // the file name dve_info.json gives
  std::vector<uint8_t> bytes;  // exactly BlobGeometryOf(gen, key).bytes long
  Sha256Digest sha256{};
};

struct TableSet {
  std::string name;
  int ucode_gen = 0;
  std::string dir;        // the directory it was read from (for messages)
  std::vector<int> ops;   // the "ops" list of dve_info.json, as given
  Blob opcode;            // opcode_table
  Blob control;           // control_table (gen2) or control_fast_table (gen3/gen4)
  Blob control_slow;      // control_slow_table (gen3/gen4); empty for gen2
  Blob datapath;          // datapath_table

  const Blob* BlobFor(TableKey k) const;  // nullptr when the generation has no such key
  std::string PathOf(const Blob& b) const;  // "<dir>/<file>"
  uint64_t Entry(uint8_t opcode) const;     // V, read little-endian (u64 gen2, u32 gen3/gen4)
  bool Enabled(uint8_t opcode) const { return Entry(opcode) != 0; }
  OpcodeEntry DecodedEntry(uint8_t opcode) const { return DecodeOpcodeEntry(ucode_gen, Entry(opcode)); }
  // Raw rows, bounds-checked: a row past the end is an error naming the file.
  absl::StatusOr<std::span<const uint8_t, 16>> ControlRow(uint64_t row) const;
  absl::StatusOr<std::span<const uint8_t, 16>> SlowRow(uint64_t row) const;
  absl::StatusOr<std::span<const uint8_t, 64>> DatapathBytes(uint64_t block) const;
};

struct TableDir {
  std::string path;                    // as given; prefixes every message
  int ucode_gen = 0;
  std::string gen_source;              // how ucode_gen was decided (e.g. "table keys")
  std::vector<std::string> keys;       // dve_table_keys as listed
  std::optional<std::string> version;  // version.json, compact, when the file exists
  std::vector<TableSet> sets;          // in dve_info.json order
  std::vector<std::string> notes;      // non-fatal observations (ops list vs opcode_table, ...)

  const TableSet* Find(std::string_view name) const;  // nullptr when absent
};

// Reads one file of a directory by name. It may stop after max_bytes + 1 bytes (enough for the
// caller to tell the file is too long). A missing file is NotFound.
using FileReader =
    std::function<absl::StatusOr<std::string>(const std::string& name, size_t max_bytes)>;

// Reads and checks a table directory. ucode_gen (2..4) when given must agree with the keys;
// without it the generation comes from dve_table_keys, and gen3 vs gen4 (same keys and sizes)
// from the set names, then the directory name (…gen3 / …gen4), then the datapath idle words.
absl::StatusOr<TableDir> ReadTableDir(const std::string& dir,
                                      std::optional<int> ucode_gen = std::nullopt);
// The same over any file source (in-memory images, the fuzzer). dir_label prefixes messages.
absl::StatusOr<TableDir> ReadTableDirFrom(std::string_view dir_label, const FileReader& read,
                                          std::optional<int> ucode_gen = std::nullopt);

// ---- one opcode, decoded end to end ----

struct OpDecode {
  uint8_t opcode = 0;
  OpcodeEntry entry;
  std::array<uint8_t, 16> control_bytes{};
  std::optional<Gen2ControlRow> gen2;   // gen2
  std::optional<FastControlRow> fast;   // gen3/gen4
  std::optional<std::array<uint8_t, 16>> slow_bytes;  // gen3/gen4 with slow_row != 0
  std::optional<SlowProgram> slow;
  std::array<uint8_t, 64> datapath_bytes{};
  DatapathBlock datapath;               // co-indexed with the fast row
  uint32_t issued_steps = 1;
};
absl::StatusOr<OpDecode> DecodeOp(const TableSet& set, uint8_t opcode);

// What a trace reports per executed instruction (microcode.md §4.4).
struct Microsteps {
  uint32_t fast_row = 0;
  uint64_t slow_row = 0;  // gen2: the recorded index; it issues nothing
  uint32_t issued_steps = 1;
};
absl::StatusOr<Microsteps> MicrostepsOf(const TableSet& set, uint8_t opcode);

// ---- rosters (microcode.md §4.2, §4.3) ----

// The built-in default-set roster of a generation, sorted ascending; empty for a bad generation.
// common (43 opcodes); gen2 adds 3 (46); gen3 adds 9 (52); gen4 adds gen3's plus 7 (59).
std::span<const uint8_t> BuiltinRoster(int ucode_gen);
bool BuiltinEnabled(int ucode_gen, uint8_t opcode);

struct Roster {
  std::string set_name;
  int ucode_gen = 0;
  bool builtin = false;   // from BuiltinRoster rather than a loaded opcode_table
  bool saturate = false;  // IsSaturateSet(set_name)
  std::bitset<256> enabled;
  bool Enabled(uint8_t opcode) const { return enabled.test(opcode); }
  size_t Count() const { return enabled.count(); }
};
// With a directory: the named set must exist there and the directory must be of ucode_gen; an
// opcode is enabled when its opcode_table entry is nonzero. Without one: "default" is the
// built-in roster; "saturate" (gen4 only) is the default roster with saturate set; any other
// name is an error (its roster is only known from a directory).
absl::StatusOr<Roster> ResolveRoster(int ucode_gen, std::string_view set_name,
                                     const TableDir* dir = nullptr);
absl::StatusOr<bool> OpcodeEnabled(int ucode_gen, std::string_view set_name, uint8_t opcode,
                                   const TableDir* dir = nullptr);

// ---- diff of two sets of one generation ----

struct SetDiff {
  std::vector<uint8_t> entries;          // opcodes whose opcode_table entry differs
  std::vector<uint32_t> control_rows;    // control_table / control_fast_table rows
  std::vector<uint32_t> slow_rows;       // control_slow_table rows (gen3/gen4)
  std::vector<uint32_t> datapath_blocks;
  bool empty() const {
    return entries.empty() && control_rows.empty() && slow_rows.empty() && datapath_blocks.empty();
  }
};
absl::StatusOr<SetDiff> DiffSets(const TableSet& a, const TableSet& b);

// ---- known shipped blobs ----

struct KnownBlob {
  std::string_view sha256_hex;  // 64 lowercase hex digits
  std::string_view build;       // e.g. the neuronx_cc version
  std::string_view file;        // e.g. "dve_bin_gen4/default_opcode_table.bin"
};
// The digests of shipped blobs that the sources give (see docs/microcode.md).
std::span<const KnownBlob> KnownBlobs();
const KnownBlob* IdentifyBlob(const Sha256Digest& digest,
                              std::span<const KnownBlob> table = KnownBlobs());

// "00 c3 30 0c" (lowercase, space separated).
std::string FormatBytes(std::span<const uint8_t> bytes);

}  // namespace dvejit::ucode
