// Microcode tables (spec/microcode.md): SHA-256, the decoders against the bytes the spec and
// seed 004 quote, the table-directory reader on good and bad images, rosters, diffs and the
// `dvejit ucode` command.
#include "frontend/microcode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "frontend/sha256.h"
#include "frontend/strcat.h"
#include "tools/ucode_command.h"

namespace dvejit::ucode {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

std::string Msg(const absl::Status& s) {
  absl::string_view m = s.message();
  return std::string(m.data(), m.size());
}

std::vector<uint8_t> Bytes(std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// ---------------------------------------------------------------- SHA-256

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(Sha256Hex(Sha256Of({})),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex(Sha256Of(Bytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(Sha256Of(Bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::vector<uint8_t> million(1000000, 'a');
  EXPECT_EQ(Sha256Hex(Sha256Of(million)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  const Sha256Digest whole = Sha256Of(data);
  for (size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 127u, 999u, 1000u}) {
    Sha256 h;
    h.Update(std::span<const uint8_t>(data).first(split));
    h.Update(std::span<const uint8_t>(data).subspan(split));
    EXPECT_EQ(h.Finish(), whole) << "split " << split;
  }
}

// ---------------------------------------------------------------- geometry, generations

TEST(Geometry, MatchesSpecTable) {
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Opcode).bytes, 2048u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Opcode).rows, 256u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Control).bytes, 2048u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Control).rows, 128u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Datapath).bytes, 8192u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::Datapath).rows, 128u);
  EXPECT_EQ(BlobGeometryOf(2, TableKey::ControlSlow).bytes, 0u);
  for (int g : {3, 4}) {
    EXPECT_EQ(BlobGeometryOf(g, TableKey::Opcode).bytes, 1024u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::ControlFast).bytes, 4096u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::ControlSlow).bytes, 4096u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::ControlSlow).rows, 256u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::Datapath).bytes, 16384u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::Datapath).stride, 64u);
    EXPECT_EQ(BlobGeometryOf(g, TableKey::Control).bytes, 0u);
  }
  EXPECT_THAT(KeysOf(2), ElementsAre(TableKey::Opcode, TableKey::Control, TableKey::Datapath));
  EXPECT_THAT(KeysOf(4), ElementsAre(TableKey::Opcode, TableKey::ControlFast,
                                     TableKey::ControlSlow, TableKey::Datapath));
  EXPECT_TRUE(KeysOf(5).empty());
  EXPECT_EQ(TableKeyName(TableKey::ControlSlow), "control_slow_table");
  EXPECT_EQ(ParseTableKey("control_table"), TableKey::Control);
  EXPECT_EQ(ParseTableKey("control"), std::nullopt);
}

TEST(Generations, UcodeGenOfHardware) {
  EXPECT_EQ(UcodeGenOf(Generation::Sunda), 2);
  EXPECT_EQ(UcodeGenOf(Generation::Cayman), 3);
  EXPECT_EQ(UcodeGenOf(Generation::Mariana), 4);
  EXPECT_EQ(UcodeGenOf(Generation::Maverick), 4);
  EXPECT_EQ(ParseUcodeGen("gen2"), 2);
  EXPECT_EQ(ParseUcodeGen("4"), 4);
  EXPECT_EQ(ParseUcodeGen("cayman"), 3);
  EXPECT_EQ(ParseUcodeGen("maverick"), 4);
  EXPECT_EQ(ParseUcodeGen("gen5"), std::nullopt);
  EXPECT_THAT(StandardSetNames(4), ElementsAre("default", "saturate", "transformer"));
  EXPECT_EQ(StandardSetNames(2).size(), 5u);
  EXPECT_EQ(StandardSetNames(3).size(), 5u);
}

// ---------------------------------------------------------------- decoders

TEST(OpcodeEntry, Gen4WorkedValue) {
  OpcodeEntry e = DecodeOpcodeEntry(4, 0x3010);  // gen4 default op 65
  EXPECT_TRUE(e.enabled());
  EXPECT_EQ(e.fast_row, 16u);
  EXPECT_EQ(e.slow_row, 48u);
  EXPECT_TRUE(e.runs_slow);
  OpcodeEntry f = DecodeOpcodeEntry(3, 0x30);  // Copy: fast 48 only
  EXPECT_EQ(f.fast_row, 48u);
  EXPECT_EQ(f.slow_row, 0u);
  EXPECT_FALSE(f.runs_slow);
  EXPECT_FALSE(DecodeOpcodeEntry(4, 0).enabled());
  // Row 0 with a slow row: enabled though the fast row is 0.
  OpcodeEntry g = DecodeOpcodeEntry(4, 0x0600);
  EXPECT_TRUE(g.enabled());
  EXPECT_EQ(g.fast_row, 0u);
  EXPECT_EQ(g.slow_row, 6u);
}

TEST(OpcodeEntry, Gen2RowAndRecordedSlow) {
  OpcodeEntry e = DecodeOpcodeEntry(2, (uint64_t{3} << 7) | 0x45);
  EXPECT_EQ(e.fast_row, 0x45u);
  EXPECT_EQ(e.slow_row, 3u);
  EXPECT_FALSE(e.runs_slow);  // gen2 has no slow table
  OpcodeEntry big = DecodeOpcodeEntry(2, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(big.fast_row, 0x7Fu);
  EXPECT_EQ(big.slow_row, 0xFFFFFFFFFFFFFFFFull >> 7);
}

TEST(FastRow, ControlFast16) {
  const uint8_t row[16] = {0x00, 0x00, 0x00, 0x00, 0x20, 0x80, 0x09, 0x00};
  FastControlRow r = DecodeFastControlRow(std::span<const uint8_t, 16>(row));
  EXPECT_EQ(r.word, 0x0009802000000000ull);
  EXPECT_EQ(r.lane_class, 0);
  EXPECT_EQ(r.operand_pc, 0);
  EXPECT_EQ(r.step_config, 0);
  EXPECT_THAT(r.issue_marker, ElementsAre(0x20, 0x80));
  EXPECT_EQ(r.step_op, 0x09);
  EXPECT_EQ(r.high_op, 0);
  EXPECT_FALSE(r.high_bytes_nonzero);
}

TEST(FastRow, PoolRowAndHighBytes) {
  uint8_t row[16] = {0x01, 0x00, 0x02, 0x08, 0xa0, 0x89, 0x0c, 0x00};  // gen4 fast row 1 (Pool)
  FastControlRow r = DecodeFastControlRow(std::span<const uint8_t, 16>(row));
  EXPECT_EQ(r.lane_class, 1);
  EXPECT_EQ(r.operand_pc, 0);
  EXPECT_EQ(r.step_config, 0x0802);
  EXPECT_THAT(r.issue_marker, ElementsAre(0xa0, 0x89));
  EXPECT_EQ(r.step_op, 0x0c);
  row[7] = 0x5a;
  row[12] = 1;
  r = DecodeFastControlRow(std::span<const uint8_t, 16>(row));
  EXPECT_EQ(r.high_op, 0x5a);
  EXPECT_TRUE(r.high_bytes_nonzero);
  // Saturate's rewired QuantizeMX row: 01 92 00 00 08 80 01 00.
  const uint8_t sat[16] = {0x01, 0x92, 0x00, 0x00, 0x08, 0x80, 0x01, 0x00};
  r = DecodeFastControlRow(std::span<const uint8_t, 16>(sat));
  EXPECT_EQ(r.lane_class, 1);
  EXPECT_EQ(r.operand_pc, 0x92);
  EXPECT_THAT(r.issue_marker, ElementsAre(0x08, 0x80));
  EXPECT_EQ(r.step_op, 0x01);
}

TEST(SlowProgram, WorkedRow48) {
  const uint8_t row[16] = {0x00, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x01, 0x00};
  SlowProgram p = DecodeSlowProgram(std::span<const uint8_t, 16>(row));
  // The head step: the leading nibbles [0,0,3] (low nibble first) replace the default 0x30c.
  EXPECT_THAT(p.steps, ElementsAre(0x300, 0x30c, 0x30c, 0x30c));
  EXPECT_TRUE(p.head_substituted);
  EXPECT_EQ(p.loop_count, 1);
  EXPECT_EQ(p.loop_count_byte, 6);
  EXPECT_THAT(p.payload, ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_EQ(p.issues(), 8u);            // 4 steps x (1 + 1)
  EXPECT_EQ(IssuedSteps(&p), 9u);       // + the fast setup step
  EXPECT_EQ(IssuedSteps(nullptr), 1u);  // fast-only
}

TEST(SlowProgram, SeedRows0And1) {
  const uint8_t row0[16] = {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x00, 0x00};
  SlowProgram p0 = DecodeSlowProgram(std::span<const uint8_t, 16>(row0));
  EXPECT_THAT(p0.steps, ElementsAre(0x30c, 0x30c, 0x30c, 0x30c));
  EXPECT_FALSE(p0.head_substituted);
  EXPECT_EQ(p0.loop_count, 0);
  EXPECT_EQ(IssuedSteps(&p0), 5u);
  const uint8_t row1[16] = {0x00, 0xc1, 0x30, 0x0c, 0xc3, 0x30, 0x03, 0x00};
  SlowProgram p1 = DecodeSlowProgram(std::span<const uint8_t, 16>(row1));
  EXPECT_THAT(p1.steps, ElementsAre(0x100, 0x30c, 0x30c, 0x30c));  // head nibbles [0,0,1]
  EXPECT_EQ(p1.loop_count, 3);
  EXPECT_EQ(IssuedSteps(&p1), 17u);  // 1 + 4 x 4
}

TEST(SlowProgram, LoopCountFromByte7AndPayload) {
  // byte[6] == 0: the loop count is byte[7].
  const uint8_t row[16] = {0x0c, 0x40, 0x30, 0x0c, 0xc3, 0x30, 0x00, 0x0a,
                           0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x00, 0x00};
  SlowProgram p = DecodeSlowProgram(std::span<const uint8_t, 16>(row));
  EXPECT_EQ(p.loop_count, 0x0a);
  EXPECT_EQ(p.loop_count_byte, 7);
  EXPECT_EQ(p.byte7, 0x0a);
  EXPECT_THAT(p.steps, ElementsAre(0x00c, 0x304, 0x30c, 0x30c));
  EXPECT_THAT(p.payload, ElementsAre(0x11, 0x22, 0x33, 0x44, 0x55, 0x66));
  EXPECT_FALSE(p.high_bytes_nonzero);
  EXPECT_EQ(IssuedSteps(&p), 1u + 11u * 4u);
  // byte[6] != 0 wins even when byte[7] is set; bytes 14..15 are flagged.
  const uint8_t row2[16] = {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x0f, 0x02,
                            0, 0, 0, 0, 0, 0, 0x01, 0x00};
  SlowProgram q = DecodeSlowProgram(std::span<const uint8_t, 16>(row2));
  EXPECT_EQ(q.loop_count, 0x0f);
  EXPECT_EQ(q.loop_count_byte, 6);
  EXPECT_EQ(q.byte7, 0x02);
  EXPECT_TRUE(q.high_bytes_nonzero);
  EXPECT_EQ(IssuedSteps(&q), 1u + 16u * 4u);
  // The largest loop count: 1 + 256 x 4, no overflow.
  const uint8_t row3[16] = {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0xff};
  SlowProgram r = DecodeSlowProgram(std::span<const uint8_t, 16>(row3));
  EXPECT_EQ(IssuedSteps(&r), 1025u);
}

TEST(Gen2Row, FieldsAndLaneModes) {
  const uint8_t idle[16] = {0x55, 0x55, 0x10, 0x00, 0x00, 0x00, 0x10};
  Gen2ControlRow r = DecodeGen2ControlRow(std::span<const uint8_t, 16>(idle));
  EXPECT_EQ(r.lane_mode_word, 0x5555);
  EXPECT_TRUE(r.idle);
  EXPECT_THAT(r.lane_modes, ElementsAre(1, 1, 1, 1, 1, 1, 1, 1));
  EXPECT_EQ(r.op_select, 0x10);
  EXPECT_EQ(r.operand_mux[0], 0x10);

  const uint8_t row[16] = {0x50, 0x55, 0x83, 0xaa, 0x1f, 0x80, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0};
  r = DecodeGen2ControlRow(std::span<const uint8_t, 16>(row));
  EXPECT_EQ(r.lane_mode_word, 0x5550);
  EXPECT_FALSE(r.idle);
  EXPECT_THAT(r.lane_modes, ElementsAre(0, 0, 1, 1, 1, 1, 1, 1));  // lanes 0,1 disabled
  EXPECT_EQ(r.op_select, 0x83);
  EXPECT_EQ(r.pc_imm, 0x1f);
  EXPECT_THAT(r.issue_marker, ElementsAre(0x1f, 0x80));
  EXPECT_THAT(r.operand_mux, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_FALSE(r.high_bytes_nonzero);

  const uint8_t r5505[16] = {0x05, 0x55};
  EXPECT_THAT(DecodeGen2ControlRow(std::span<const uint8_t, 16>(r5505)).lane_modes,
              ElementsAre(1, 1, 0, 0, 1, 1, 1, 1));
  const uint8_t r5520[16] = {0x20, 0x55};
  EXPECT_THAT(DecodeGen2ControlRow(std::span<const uint8_t, 16>(r5520)).lane_modes,
              ElementsAre(0, 0, 2, 0, 1, 1, 1, 1));
  const uint8_t r55c0[16] = {0xc0, 0x55, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x04};
  Gen2ControlRow c = DecodeGen2ControlRow(std::span<const uint8_t, 16>(r55c0));
  EXPECT_THAT(c.lane_modes, ElementsAre(0, 0, 0, 3, 1, 1, 1, 1));
  EXPECT_TRUE(c.high_bytes_nonzero);
}

std::array<uint8_t, 64> Block(std::initializer_list<uint64_t> lanes) {
  std::array<uint8_t, 64> b{};
  int i = 0;
  for (uint64_t w : lanes) {
    for (int k = 0; k < 8; ++k) b[8 * i + k] = static_cast<uint8_t>(w >> (8 * k));
    ++i;
  }
  return b;
}

TEST(Datapath, IdleWordsOffAndDepth) {
  EXPECT_EQ(IdleLaneWord(2), 0x00100000u);
  EXPECT_EQ(IdleLaneWord(3), uint64_t{1} << 32);
  EXPECT_EQ(IdleLaneWord(4), uint64_t{1} << 42);
  EXPECT_EQ(IdleLaneWord(7), 0u);

  std::array<uint8_t, 64> zero{};
  DatapathBlock off = DecodeDatapathBlock(4, zero);
  EXPECT_TRUE(off.off);
  EXPECT_EQ(off.pipeline_depth, 0);

  const uint64_t i4 = uint64_t{1} << 42;
  auto b = Block({0x1234, 0x5678, 0x9abcdef012345678ull, i4, i4, i4, i4, i4});
  DatapathBlock d = DecodeDatapathBlock(4, b);
  EXPECT_FALSE(d.off);
  EXPECT_EQ(d.pipeline_depth, 3);
  EXPECT_EQ(d.lanes[2], 0x9abcdef012345678ull);
  EXPECT_THAT(d.idle, ElementsAre(false, false, false, true, true, true, true, true));
  // The gen3 idle word is not idle on gen4 and vice versa.
  auto g3 = Block({uint64_t{1} << 32, uint64_t{1} << 32, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(DecodeDatapathBlock(3, g3).pipeline_depth, 0);
  EXPECT_EQ(DecodeDatapathBlock(4, g3).pipeline_depth, 8);
  // gen2: idle 0x00100000; a live lane after an idle one does not count.
  auto g2 = Block({7, 0x00100000, 9, 0x00100000, 0x00100000, 0x00100000, 0x00100000, 0x00100000});
  EXPECT_EQ(DecodeDatapathBlock(2, g2).pipeline_depth, 1);
  // All lanes idle: depth 0 but not off.
  auto all_idle = Block({i4, i4, i4, i4, i4, i4, i4, i4});
  DatapathBlock ai = DecodeDatapathBlock(4, all_idle);
  EXPECT_FALSE(ai.off);
  EXPECT_EQ(ai.pipeline_depth, 0);
}

// ---------------------------------------------------------------- rosters

TEST(Roster, BuiltinCounts) {
  EXPECT_EQ(BuiltinRoster(2).size(), 46u);
  EXPECT_EQ(BuiltinRoster(3).size(), 52u);
  EXPECT_EQ(BuiltinRoster(4).size(), 59u);
  EXPECT_TRUE(BuiltinRoster(1).empty());
  std::vector<int> common;
  for (int op = 0; op < 256; ++op)
    if (BuiltinEnabled(2, op) && BuiltinEnabled(3, op) && BuiltinEnabled(4, op))
      common.push_back(op);
  const std::vector<int> want = {65,  66,  67,  68,  69,  70,  71,  72,  73,  77,  78,
                                 81,  82,  83,  84,  88,  94,  97,  98,  99,  100, 101,
                                 102, 105, 106, 107, 108, 109, 110, 111, 114, 127, 130,
                                 131, 132, 142, 148, 153, 157, 158, 229, 232, 234};
  EXPECT_EQ(want.size(), 43u);
  EXPECT_EQ(common, want);
  for (int g : {2, 3, 4}) {
    auto r = BuiltinRoster(g);
    EXPECT_TRUE(std::is_sorted(r.begin(), r.end()));
    EXPECT_EQ(std::set<uint8_t>(r.begin(), r.end()).size(), r.size());
  }
  for (int op : {140, 141, 159}) {
    EXPECT_TRUE(BuiltinEnabled(2, op)) << op;
    EXPECT_FALSE(BuiltinEnabled(3, op)) << op;
    EXPECT_FALSE(BuiltinEnabled(4, op)) << op;
  }
  for (int op : {96, 147, 152, 154, 155, 188, 230, 233, 240}) {
    EXPECT_FALSE(BuiltinEnabled(2, op)) << op;
    EXPECT_TRUE(BuiltinEnabled(3, op)) << op;
    EXPECT_TRUE(BuiltinEnabled(4, op)) << op;
  }
  for (int op : {48, 119, 120, 224, 225, 226, 227}) {
    EXPECT_FALSE(BuiltinEnabled(3, op)) << op;
    EXPECT_TRUE(BuiltinEnabled(4, op)) << op;
  }
  EXPECT_FALSE(BuiltinEnabled(4, 0));
  EXPECT_FALSE(BuiltinEnabled(4, 255));
}

TEST(Roster, ResolveBuiltin) {
  absl::StatusOr<Roster> r = ResolveRoster(4, "default");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->builtin);
  EXPECT_FALSE(r->saturate);
  EXPECT_EQ(r->Count(), 59u);
  EXPECT_TRUE(r->Enabled(227));

  absl::StatusOr<Roster> sat = ResolveRoster(4, "saturate");
  ASSERT_TRUE(sat.ok()) << sat.status();
  EXPECT_TRUE(sat->saturate);
  EXPECT_EQ(sat->enabled, r->enabled);

  EXPECT_TRUE(IsSaturateSet("saturate"));
  EXPECT_FALSE(IsSaturateSet("default"));
  EXPECT_FALSE(IsSaturateSet("Saturate"));

  absl::StatusOr<Roster> bad = ResolveRoster(3, "saturate");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(Msg(bad.status()), HasSubstr("saturate"));
  bad = ResolveRoster(4, "transformer");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(Msg(bad.status()), HasSubstr("table directory"));
  EXPECT_FALSE(ResolveRoster(5, "default").ok());

  EXPECT_EQ(OpcodeEnabled(2, "default", 140).value(), true);
  EXPECT_EQ(OpcodeEnabled(3, "default", 140).value(), false);
  EXPECT_EQ(OpcodeEnabled(4, "default", 48).value(), true);
  EXPECT_FALSE(OpcodeEnabled(2, "transformer", 65).ok());
}

// ---------------------------------------------------------------- table images

class TempDir {
 public:
  explicit TempDir(std::string_view tag) {
    static int counter = 0;
    path_ = fs::path(::testing::TempDir()) /
            Cat("dvejit_ucode_", ::getpid(), "_", counter++, "_", tag);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

struct SetImage {
  std::string name;
  std::map<TableKey, std::vector<uint8_t>> blobs;
  std::optional<std::vector<int>> ops;  // default: the opcodes with a nonzero entry
};

class Image {
 public:
  explicit Image(int gen) : gen_(gen) {}
  int gen() const { return gen_; }

  SetImage& AddSet(const std::string& name) {
    SetImage s;
    s.name = name;
    for (TableKey k : KeysOf(gen_)) s.blobs[k].assign(BlobGeometryOf(gen_, k).bytes, 0);
    // Every datapath lane idle by default.
    std::vector<uint8_t>& dp = s.blobs[TableKey::Datapath];
    for (size_t i = 0; i < dp.size(); i += 8)
      for (int b = 0; b < 8; ++b) dp[i + b] = static_cast<uint8_t>(IdleLaneWord(gen_) >> (8 * b));
    sets_.push_back(s);
    return sets_.back();
  }
  SetImage& Set(const std::string& name) {
    for (SetImage& s : sets_)
      if (s.name == name) return s;
    ADD_FAILURE() << "no set " << name;
    return sets_.front();
  }
  std::vector<SetImage>& sets() { return sets_; }

  void Entry(SetImage& s, int op, uint64_t v) {
    const int stride = gen_ == 2 ? 8 : 4;
    for (int b = 0; b < stride; ++b)
      s.blobs[TableKey::Opcode][op * stride + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  void Row(SetImage& s, TableKey k, int row, std::initializer_list<uint8_t> bytes) {
    std::vector<uint8_t>& blob = s.blobs[k];
    std::fill(blob.begin() + row * 16, blob.begin() + row * 16 + 16, 0);
    std::copy(bytes.begin(), bytes.end(), blob.begin() + row * 16);
  }
  void Lanes(SetImage& s, int block, std::initializer_list<uint64_t> lanes) {
    auto b = ::dvejit::ucode::Block(lanes);
    std::copy(b.begin(), b.end(), s.blobs[TableKey::Datapath].begin() + block * 64);
  }
  static std::string FileOf(const SetImage& s, TableKey k) {
    return Cat(s.name, "_", TableKeyName(k), ".bin");
  }
  Json Info() const {
    Json j;
    Json keys = Json::array();
    for (TableKey k : KeysOf(gen_)) keys.push_back(std::string(TableKeyName(k)));
    j["dve_table_keys"] = keys;
    j["tables"] = Json::array();
    for (const SetImage& s : sets_) {
      Json t;
      t["name"] = s.name;
      for (TableKey k : KeysOf(gen_)) t[std::string(TableKeyName(k))] = FileOf(s, k);
      std::vector<int> ops;
      if (s.ops) {
        ops = *s.ops;
      } else {
        const int stride = gen_ == 2 ? 8 : 4;
        const std::vector<uint8_t>& o = s.blobs.at(TableKey::Opcode);
        for (int op = 0; op < 256; ++op)
          if (std::any_of(o.begin() + op * stride, o.begin() + (op + 1) * stride,
                          [](uint8_t x) { return x != 0; }))
            ops.push_back(op);
      }
      t["ops"] = ops;
      j["tables"].push_back(t);
    }
    return j;
  }
  // Writes dve_info.json (info, or Info()), version.json and every blob.
  void Write(const fs::path& dir, const std::optional<Json>& info = std::nullopt) const {
    WriteFile(dir / "dve_info.json", (info ? *info : Info()).dump(2));
    WriteFile(dir / "version.json", R"({"neuronx_cc": "2.24.5133.0+58f8de22"})");
    for (const SetImage& s : sets_)
      for (const auto& [k, bytes] : s.blobs)
        WriteFile(dir / FileOf(s, k), std::string(bytes.begin(), bytes.end()));
  }
  static void WriteFile(const fs::path& p, const std::string& data) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
  }

 private:
  int gen_;
  std::vector<SetImage> sets_;
};

// A gen4 image built from the bytes seed 004 quotes, plus generated rows.
Image Gen4Image() {
  Image img(4);
  SetImage& d = img.AddSet("default");
  // Every built-in roster opcode enabled, fast-only on a generated row, then the seed's entries.
  int row = 150;
  for (uint8_t op : BuiltinRoster(4)) img.Entry(d, op, static_cast<uint64_t>(row++));
  img.Entry(d, 65, 0x3010);   // TensorTensorArith: fast 16, slow 48
  img.Entry(d, 70, 0x30);     // Copy: fast 48
  img.Entry(d, 71, 0x30);     // Cast: fast 48
  img.Entry(d, 73, 0x0640);   // Memset: fast 64, slow 6
  img.Entry(d, 77, 0x0648);   // Rng: fast 72, slow 6
  img.Entry(d, 102, 0x264c);  // fast 76, slow 38
  img.Entry(d, 105, 0x164c);  // fast 76, slow 22
  img.Entry(d, 106, 0x0a30);  // StreamShuffle: fast 48, slow 10
  img.Entry(d, 227, 0x8f);    // QuantizeMX: fast 143
  img.Row(d, TableKey::ControlFast, 1, {0x01, 0x00, 0x02, 0x08, 0xa0, 0x89, 0x0c, 0x00});
  img.Row(d, TableKey::ControlFast, 16, {0x00, 0x00, 0x00, 0x00, 0x20, 0x80, 0x09, 0x00});
  img.Row(d, TableKey::ControlFast, 48, {0x00, 0x00, 0x00, 0x00, 0x20, 0x80, 0x08, 0x00});
  img.Row(d, TableKey::ControlFast, 111, {0x00, 0x00, 0xe8, 0x00, 0xa0, 0x82, 0x08, 0x00});
  img.Row(d, TableKey::ControlFast, 143, {0x00, 0x00, 0x00, 0x00, 0x20, 0x80, 0x79, 0x00});
  img.Row(d, TableKey::ControlSlow, 0, {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x00, 0x00});
  img.Row(d, TableKey::ControlSlow, 1, {0x00, 0xc1, 0x30, 0x0c, 0xc3, 0x30, 0x03, 0x00});
  img.Row(d, TableKey::ControlSlow, 6,
          {0x00, 0xce, 0x30, 0x0c, 0xc3, 0x30, 0x00, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06});
  img.Row(d, TableKey::ControlSlow, 10, {0x00, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x02, 0x00});
  img.Row(d, TableKey::ControlSlow, 20, {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x01, 0x00});
  img.Row(d, TableKey::ControlSlow, 22, {0x00, 0xc0, 0x30, 0x0c, 0xc3, 0x30, 0x03, 0x00});
  img.Row(d, TableKey::ControlSlow, 38, {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x0a, 0x00});
  img.Row(d, TableKey::ControlSlow, 48, {0x00, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x01, 0x00});
  const uint64_t i4 = uint64_t{1} << 42;
  img.Lanes(d, 0, {0, 0, 0, 0, 0, 0, 0, 0});
  img.Lanes(d, 16, {0x11, 0x22, 0x33, i4, i4, i4, i4, i4});
  img.Lanes(d, 48, {0x44, i4, i4, i4, i4, i4, i4, i4});

  SetImage sat = d;  // saturate: a surgical patch of the quantize rows
  sat.name = "saturate";
  img.sets().push_back(sat);
  SetImage& s = img.Set("saturate");
  img.Row(s, TableKey::ControlFast, 143, {0x01, 0x92, 0x00, 0x00, 0x08, 0x80, 0x01, 0x00});
  img.Row(s, TableKey::ControlSlow, 20, {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x02, 0x00});

  SetImage& t = img.AddSet("transformer");  // a different, compacted roster
  img.Entry(t, 65, 0x0205);
  img.Entry(t, 70, 0x03);
  img.Entry(t, 200, 0x07);
  img.Row(t, TableKey::ControlFast, 5, {0x02, 0x10, 0x00, 0x00, 0x20, 0x80, 0x09, 0x00});
  img.Row(t, TableKey::ControlSlow, 2, {0x0c, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x00, 0x00});
  return img;
}

Image Gen2Image() {
  Image img(2);
  for (std::string_view name : StandardSetNames(2)) {
    SetImage& s = img.AddSet(std::string(name));
    for (int r = 0; r < 128; ++r) img.Row(s, TableKey::Control, r, {0x55, 0x55, 0x10, 0, 0, 0, 0x10});
    int row = 10;
    for (uint8_t op : BuiltinRoster(2)) img.Entry(s, op, static_cast<uint64_t>(row++));
    img.Entry(s, 65, (uint64_t{3} << 7) | 5);  // row 5, slow index 3 (recorded only)
    img.Row(s, TableKey::Control, 5,
            {0x50, 0x55, 0x12, 0x00, 0x07, 0x80, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06});
    img.Lanes(s, 5, {0xabc, 0xdef, 0x00100000, 0x00100000, 0x00100000, 0x00100000, 0x00100000,
                     0x00100000});
  }
  return img;
}

Image Gen3Image() {
  Image img(3);
  for (std::string_view name : StandardSetNames(3)) {
    SetImage& s = img.AddSet(std::string(name));
    int row = 100;
    for (uint8_t op : BuiltinRoster(3)) img.Entry(s, op, static_cast<uint64_t>(row++));
    img.Entry(s, 65, 0x0210);
    img.Row(s, TableKey::ControlFast, 16, {0x00, 0x07, 0x00, 0x00, 0x20, 0x80, 0x09, 0x00});
    img.Row(s, TableKey::ControlSlow, 2, {0x00, 0xc1, 0x30, 0x0c, 0xc3, 0x30, 0x02, 0x00});
  }
  return img;
}

absl::StatusOr<TableDir> WriteAndRead(const Image& img, const TempDir& dir,
                                      std::optional<int> gen = std::nullopt) {
  img.Write(dir.path());
  return ReadTableDir(dir.str(), gen);
}

// ---------------------------------------------------------------- reader, good images

TEST(Reader, Gen4ImageDecodesEndToEnd) {
  TempDir dir("gen4");
  Image img = Gen4Image();
  absl::StatusOr<TableDir> t = WriteAndRead(img, dir);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ucode_gen, 4);
  EXPECT_EQ(t->gen_source, "set names");
  EXPECT_THAT(t->keys, ElementsAre("opcode_table", "control_fast_table", "control_slow_table",
                                   "datapath_table"));
  ASSERT_EQ(t->sets.size(), 3u);
  EXPECT_EQ(t->sets[0].name, "default");
  ASSERT_TRUE(t->version.has_value());
  EXPECT_THAT(*t->version, HasSubstr("2.24.5133.0+58f8de22"));
  EXPECT_TRUE(t->notes.empty()) << t->notes.front();

  const TableSet* d = t->Find("default");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(t->Find("nope"), nullptr);
  EXPECT_EQ(d->Entry(65), 0x3010u);
  EXPECT_EQ(d->opcode.file, "default_opcode_table.bin");
  EXPECT_EQ(d->opcode.bytes.size(), 1024u);
  EXPECT_EQ(d->opcode.sha256, Sha256Of(d->opcode.bytes));
  EXPECT_EQ(d->ops.size(), 59u);
  EXPECT_EQ(d->PathOf(d->control_slow), dir.str() + "/default_control_slow_table.bin");
  EXPECT_EQ(d->BlobFor(TableKey::Control), nullptr);
  EXPECT_EQ(d->BlobFor(TableKey::ControlSlow), &d->control_slow);

  absl::StatusOr<OpDecode> op = DecodeOp(*d, 65);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->entry.value, 0x3010u);
  EXPECT_EQ(op->entry.fast_row, 16u);
  EXPECT_EQ(op->entry.slow_row, 48u);
  EXPECT_THAT(op->control_bytes,
              ElementsAre(0, 0, 0, 0, 0x20, 0x80, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  ASSERT_TRUE(op->fast.has_value());
  EXPECT_FALSE(op->gen2.has_value());
  EXPECT_EQ(op->fast->step_op, 0x09);
  EXPECT_THAT(op->fast->issue_marker, ElementsAre(0x20, 0x80));
  ASSERT_TRUE(op->slow.has_value());
  EXPECT_THAT(*op->slow_bytes,
              ElementsAre(0x00, 0xc3, 0x30, 0x0c, 0xc3, 0x30, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(op->slow->steps, ElementsAre(0x300, 0x30c, 0x30c, 0x30c));
  EXPECT_EQ(op->slow->loop_count, 1);
  EXPECT_EQ(op->datapath.pipeline_depth, 3);
  EXPECT_EQ(op->datapath.lanes[0], 0x11u);
  EXPECT_EQ(op->issued_steps, 9u);

  // Copy: fast-only, shares row 48 with Cast.
  absl::StatusOr<OpDecode> copy = DecodeOp(*d, 70);
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->slow.has_value());
  EXPECT_EQ(copy->fast->step_op, 0x08);
  EXPECT_EQ(copy->issued_steps, 1u);
  EXPECT_EQ(copy->datapath.pipeline_depth, 1);
  EXPECT_EQ(DecodeOp(*d, 71)->control_bytes, copy->control_bytes);

  // Memset and Rng share slow row 6 (loop count in byte 7), differ in the fast row.
  absl::StatusOr<Microsteps> memset = MicrostepsOf(*d, 73);
  absl::StatusOr<Microsteps> rng = MicrostepsOf(*d, 77);
  ASSERT_TRUE(memset.ok() && rng.ok());
  EXPECT_EQ(memset->fast_row, 64u);
  EXPECT_EQ(rng->fast_row, 72u);
  EXPECT_EQ(memset->slow_row, 6u);
  EXPECT_EQ(rng->slow_row, 6u);
  EXPECT_EQ(memset->issued_steps, 1u + 8u * 4u);
  EXPECT_EQ(rng->issued_steps, memset->issued_steps);
  EXPECT_EQ(DecodeOp(*d, 73)->slow->payload, (std::array<uint8_t, 6>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(MicrostepsOf(*d, 102)->issued_steps, 1u + 11u * 4u);
  EXPECT_EQ(MicrostepsOf(*d, 105)->issued_steps, 1u + 4u * 4u);
  EXPECT_EQ(MicrostepsOf(*d, 65)->issued_steps, 9u);
  EXPECT_EQ(MicrostepsOf(*d, 70)->issued_steps, 1u);

  // A disabled opcode decodes row 0 and says so.
  absl::StatusOr<OpDecode> off = DecodeOp(*d, 3);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->entry.enabled());
  EXPECT_TRUE(off->datapath.off);

  // Bounds-checked raw rows.
  EXPECT_TRUE(d->ControlRow(255).ok());
  absl::StatusOr<std::span<const uint8_t, 16>> past = d->ControlRow(256);
  EXPECT_EQ(past.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(Msg(past.status()), HasSubstr("default_control_fast_table.bin"));
  EXPECT_THAT(Msg(past.status()), HasSubstr("256"));
  EXPECT_THAT(Msg(d->SlowRow(1000).status()), HasSubstr("default_control_slow_table.bin"));
  EXPECT_THAT(Msg(d->DatapathBytes(256).status()), HasSubstr("default_datapath_table.bin"));
}

TEST(Reader, RosterFromDirectory) {
  TempDir dir("roster");
  absl::StatusOr<TableDir> t = WriteAndRead(Gen4Image(), dir);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Roster> def = ResolveRoster(4, "default", &*t);
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_FALSE(def->builtin);
  EXPECT_EQ(def->Count(), 59u);
  for (uint8_t op : BuiltinRoster(4)) EXPECT_TRUE(def->Enabled(op)) << int{op};

  absl::StatusOr<Roster> tr = ResolveRoster(4, "transformer", &*t);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr->Count(), 3u);
  EXPECT_TRUE(tr->Enabled(200));
  EXPECT_FALSE(tr->Enabled(71));
  EXPECT_EQ(OpcodeEnabled(4, "transformer", 71, &*t).value(), false);
  EXPECT_EQ(OpcodeEnabled(4, "transformer", 65, &*t).value(), true);
  EXPECT_TRUE(ResolveRoster(4, "saturate", &*t)->saturate);

  absl::StatusOr<Roster> missing = ResolveRoster(4, "transformer_fwd", &*t);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing.status()), HasSubstr("dve_info.json"));
  EXPECT_THAT(Msg(missing.status()), HasSubstr("default, saturate, transformer"));
  absl::StatusOr<Roster> wrong_gen = ResolveRoster(3, "default", &*t);
  EXPECT_FALSE(wrong_gen.ok());
  EXPECT_THAT(Msg(wrong_gen.status()), HasSubstr("gen4"));
}

TEST(Reader, DiffSets) {
  TempDir dir("diff");
  absl::StatusOr<TableDir> t = WriteAndRead(Gen4Image(), dir);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<SetDiff> sat = DiffSets(*t->Find("default"), *t->Find("saturate"));
  ASSERT_TRUE(sat.ok());
  EXPECT_TRUE(sat->entries.empty());
  EXPECT_THAT(sat->control_rows, ElementsAre(143u));
  EXPECT_THAT(sat->slow_rows, ElementsAre(20u));
  EXPECT_TRUE(sat->datapath_blocks.empty());
  EXPECT_FALSE(sat->empty());

  absl::StatusOr<SetDiff> same = DiffSets(*t->Find("default"), *t->Find("default"));
  EXPECT_TRUE(same->empty());

  absl::StatusOr<SetDiff> tr = DiffSets(*t->Find("default"), *t->Find("transformer"));
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr->entries.size(), 59u + 1u);  // every default op differs, and 200 is new
  EXPECT_THAT(tr->datapath_blocks, ElementsAre(0u, 16u, 48u));
  EXPECT_EQ(std::count(tr->slow_rows.begin(), tr->slow_rows.end(), 2u), 1);
}

TEST(Reader, Gen2Image) {
  TempDir dir("gen2");
  absl::StatusOr<TableDir> t = WriteAndRead(Gen2Image(), dir);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ucode_gen, 2);
  EXPECT_EQ(t->gen_source, "table keys");
  EXPECT_EQ(t->sets.size(), 5u);
  const TableSet* d = t->Find("transformer_bwd2");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->opcode.bytes.size(), 2048u);
  EXPECT_EQ(d->control.bytes.size(), 2048u);
  EXPECT_TRUE(d->control_slow.bytes.empty());
  EXPECT_EQ(d->BlobFor(TableKey::ControlSlow), nullptr);
  EXPECT_EQ(d->BlobFor(TableKey::Control), &d->control);
  EXPECT_EQ(d->Entry(65), (uint64_t{3} << 7) | 5);

  absl::StatusOr<OpDecode> op = DecodeOp(*d, 65);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->entry.fast_row, 5u);
  EXPECT_EQ(op->entry.slow_row, 3u);
  ASSERT_TRUE(op->gen2.has_value());
  EXPECT_FALSE(op->fast.has_value());
  EXPECT_FALSE(op->slow.has_value());
  EXPECT_EQ(op->gen2->lane_mode_word, 0x5550);
  EXPECT_EQ(op->gen2->op_select, 0x12);
  EXPECT_EQ(op->gen2->pc_imm, 0x07);
  EXPECT_THAT(op->gen2->operand_mux, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(op->datapath.pipeline_depth, 2);
  EXPECT_EQ(op->issued_steps, 1u);
  absl::StatusOr<OpDecode> other = DecodeOp(*d, 66);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->gen2->idle);
  EXPECT_EQ(other->datapath.pipeline_depth, 0);  // all lanes idle
  absl::StatusOr<Microsteps> ms = MicrostepsOf(*d, 65);
  EXPECT_EQ(ms->slow_row, 3u);
  EXPECT_EQ(ms->issued_steps, 1u);
  EXPECT_EQ(d->SlowRow(0).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(d->ControlRow(128).status()), HasSubstr("transformer_bwd2_control_table.bin"));
  EXPECT_EQ(ResolveRoster(2, "default", &*t)->Count(), 46u);

  absl::StatusOr<TableDir> as4 = ReadTableDir(dir.str(), 4);
  EXPECT_FALSE(as4.ok());
  EXPECT_THAT(Msg(as4.status()), HasSubstr("dve_info.json"));
  EXPECT_TRUE(ReadTableDir(dir.str(), 2).ok());
}

TEST(Reader, Gen3VersusGen4) {
  {
    TempDir dir("g3names");
    absl::StatusOr<TableDir> t = WriteAndRead(Gen3Image(), dir);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ucode_gen, 3);
    EXPECT_EQ(t->gen_source, "set names");
    EXPECT_EQ(MicrostepsOf(*t->Find("default"), 65)->issued_steps, 1u + 3u * 4u);
  }
  // Only a default set: the datapath idle words decide.
  Image g3(3);
  g3.AddSet("default");
  {
    TempDir dir("idle3");
    absl::StatusOr<TableDir> t = WriteAndRead(g3, dir);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ucode_gen, 3);
    EXPECT_EQ(t->gen_source, "datapath idle words");
  }
  Image g4(4);
  g4.AddSet("default");
  {
    TempDir dir("idle4");
    absl::StatusOr<TableDir> t = WriteAndRead(g4, dir);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ucode_gen, 4);
  }
  // Nothing tells: an error unless the generation is given; the directory name decides.
  Image blank(4);
  SetImage& s = blank.AddSet("default");
  std::fill(s.blobs[TableKey::Datapath].begin(), s.blobs[TableKey::Datapath].end(), 0);
  {
    TempDir dir("blank");
    absl::StatusOr<TableDir> t = WriteAndRead(blank, dir);
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(Msg(t.status()), HasSubstr("pass the generation"));
    EXPECT_THAT(Msg(t.status()), HasSubstr("dve_info.json"));
    absl::StatusOr<TableDir> given = ReadTableDir(dir.str(), 3);
    ASSERT_TRUE(given.ok()) << given.status();
    EXPECT_EQ(given->ucode_gen, 3);
    EXPECT_EQ(given->gen_source, "given");
    EXPECT_EQ(given->sets[0].ucode_gen, 3);
    EXPECT_FALSE(ReadTableDir(dir.str(), 2).ok());
    EXPECT_FALSE(ReadTableDir(dir.str(), 9).ok());
  }
  {
    TempDir parent("named");
    fs::path p = parent.path() / "dve_bin_gen4";
    fs::create_directories(p);
    blank.Write(p);
    absl::StatusOr<TableDir> t = ReadTableDir(p.string() + "/");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->ucode_gen, 4);
    EXPECT_EQ(t->gen_source, "directory name");
  }
}

TEST(Reader, NotesForOpsMismatchAndOddNames) {
  TempDir dir("notes");
  Image img(4);
  SetImage& s = img.AddSet("custom");
  img.Entry(s, 65, 0x10);
  img.Entry(s, 66, 0x11);
  s.ops = std::vector<int>{65, 67};
  img.Write(dir.path());
  fs::remove(dir.path() / "version.json");
  absl::StatusOr<TableDir> t = ReadTableDir(dir.str(), 4);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->version.has_value());
  std::string all;
  for (const std::string& n : t->notes) all += n + "\n";
  EXPECT_THAT(all, HasSubstr("no version.json"));
  EXPECT_THAT(all, HasSubstr("entry is 0: 67"));
  EXPECT_THAT(all, HasSubstr("missing from \"ops\": 66"));
  EXPECT_THAT(all, HasSubstr("\"custom\" is not a standard gen4 set"));
  // The roster comes from the opcode table, not from "ops".
  EXPECT_TRUE(OpcodeEnabled(4, "custom", 66, &*t).value());
  EXPECT_FALSE(OpcodeEnabled(4, "custom", 67, &*t).value());
}

TEST(Reader, SharedBlobFilesAreAccepted) {
  TempDir dir("shared");
  Image img = Gen4Image();
  img.Write(dir.path());
  Json info = img.Info();
  info["tables"][2]["datapath_table"] = "default_datapath_table.bin";
  Image::WriteFile(dir.path() / "dve_info.json", info.dump());
  absl::StatusOr<TableDir> t = ReadTableDir(dir.str());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Find("transformer")->datapath.bytes, t->Find("default")->datapath.bytes);
}

// ---------------------------------------------------------------- reader, bad images

class BadDir : public ::testing::Test {
 protected:
  void SetUp() override { img_.Write(dir_.path()); }
  absl::Status Read(std::optional<int> gen = std::nullopt) {
    absl::StatusOr<TableDir> t = ReadTableDir(dir_.str(), gen);
    return t.status();
  }
  void Expect(const absl::Status& s, std::string_view file, std::string_view also = "") {
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(Msg(s), HasSubstr(dir_.str() + "/" + std::string(file)));
    if (!also.empty()) {
      EXPECT_THAT(Msg(s), HasSubstr(std::string(also)));
    }
  }
  void WriteInfo(const Json& j) { Image::WriteFile(dir_.path() / "dve_info.json", j.dump()); }
  void WriteInfoText(const std::string& s) { Image::WriteFile(dir_.path() / "dve_info.json", s); }
  void Resize(const std::string& file, size_t n, uint8_t fill = 0) {
    std::string data(n, static_cast<char>(fill));
    Image::WriteFile(dir_.path() / file, data);
  }
  Image img_ = Gen4Image();
  TempDir dir_{"bad"};
};

TEST_F(BadDir, TruncatedBlob) {
  Resize("default_opcode_table.bin", 1000);
  Expect(Read(), "default_opcode_table.bin", "wrong size: 1000 bytes, expected exactly 1024");
}

TEST_F(BadDir, OversizedBlob) {
  Resize("saturate_control_slow_table.bin", 4097);
  Expect(Read(), "saturate_control_slow_table.bin", "more than 4096 bytes");
  Resize("saturate_control_slow_table.bin", 1 << 20);
  Expect(Read(), "saturate_control_slow_table.bin", "control_slow_table");
}

TEST_F(BadDir, EmptyBlob) {
  Resize("transformer_datapath_table.bin", 0);
  Expect(Read(), "transformer_datapath_table.bin", "0 bytes, expected exactly 16384");
}

TEST_F(BadDir, MissingBlobFile) {
  fs::remove(dir_.path() / "default_control_fast_table.bin");
  absl::Status s = Read();
  Expect(s, "default_control_fast_table.bin", "no such file");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
}

TEST_F(BadDir, BlobIsADirectory) {
  fs::remove(dir_.path() / "default_control_fast_table.bin");
  fs::create_directory(dir_.path() / "default_control_fast_table.bin");
  Expect(Read(), "default_control_fast_table.bin", "not a regular file");
}

TEST_F(BadDir, MissingInfo) {
  fs::remove(dir_.path() / "dve_info.json");
  Expect(Read(), "dve_info.json");
}

TEST_F(BadDir, NotADirectory) {
  absl::StatusOr<TableDir> t = ReadTableDir(dir_.str() + "/nowhere");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(Msg(t.status()), HasSubstr("nowhere: not a directory"));
}

TEST_F(BadDir, MalformedJson) {
  std::string text = img_.Info().dump();
  WriteInfoText(text.substr(0, text.size() / 2));
  Expect(Read(), "dve_info.json", "malformed JSON");
  WriteInfoText("");
  Expect(Read(), "dve_info.json", "malformed JSON");
  WriteInfoText(std::string("{\"a\":\0}", 7));
  Expect(Read(), "dve_info.json", "malformed JSON");
  WriteInfoText(std::string(100000, '['));
  Expect(Read(), "dve_info.json", "nested deeper");
  WriteInfoText("[1, 2]");
  Expect(Read(), "dve_info.json", "expected a JSON object");
}

TEST_F(BadDir, MalformedVersionJson) {
  Image::WriteFile(dir_.path() / "version.json", "{\"v\": ");
  Expect(Read(), "version.json", "malformed JSON");
}

TEST_F(BadDir, MissingKeys) {
  Json j = img_.Info();
  j.erase("dve_table_keys");
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "missing key \"dve_table_keys\"");

  j = img_.Info();
  j.erase("tables");
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "missing key \"tables\"");

  j = img_.Info();
  j["tables"][1].erase("datapath_table");
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "tables[1] (set \"saturate\"): missing key \"datapath_table\"");

  j = img_.Info();
  j["tables"][0].erase("name");
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "tables[0]: missing key \"name\"");

  j = img_.Info();
  j["tables"][2].erase("ops");
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "missing key \"ops\"");
}

TEST_F(BadDir, BadKeyLists) {
  Json j = img_.Info();
  j["dve_table_keys"] = {"opcode_table", "control_fast_table", "datapath_table"};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "neither the gen2 set");

  j["dve_table_keys"] = {"opcode_table", "control_fast_table", "control_slow_table",
                         "datapath_table", "bogus_table"};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "unknown table key \"bogus_table\"");

  j["dve_table_keys"] = {"opcode_table", "opcode_table"};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "listed twice");

  j["dve_table_keys"] = "opcode_table";
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "not an array");

  j = img_.Info();
  j["tables"] = Json::array();
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "\"tables\" is empty");
}

TEST_F(BadDir, BadTableEntries) {
  Json j = img_.Info();
  j["tables"][1]["name"] = "default";
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "set name listed twice");

  j = img_.Info();
  j["tables"][0]["ops"] = {65, 300};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "the number 300");

  j["tables"][0]["ops"] = {65, -1};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "the number -1");

  j["tables"][0]["ops"] = {65, "66"};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "a string");

  j["tables"][0]["ops"] = {65, 66.5};
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "0..255");

  j = img_.Info();
  j["tables"][0]["opcode_table"] = "../default_opcode_table.bin";
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "not a plain file name");

  j["tables"][0]["opcode_table"] = 5;
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "\"opcode_table\" is not a string");

  j = img_.Info();
  j["tables"][0] = "default";
  WriteInfo(j);
  Expect(Read(), "dve_info.json", "tables[0] is not an object");
}

TEST_F(BadDir, SlowRowPastTheEnd) {
  SetImage& s = img_.Set("saturate");
  img_.Entry(s, 81, 0x10010);  // slow row 256
  img_.Write(dir_.path());
  absl::Status st = Read();
  Expect(st, "saturate_opcode_table.bin", "opcode 81");
  EXPECT_THAT(Msg(st), HasSubstr("slow row 256, past the end"));
  EXPECT_THAT(Msg(st), HasSubstr("saturate_control_slow_table.bin"));
  img_.Entry(s, 81, 0xFFFFFFFF);
  img_.Write(dir_.path());
  Expect(Read(), "saturate_opcode_table.bin", "past the end");
}

TEST(ReaderFrom, InMemoryAndThrowingReaders) {
  Image img = Gen4Image();
  std::map<std::string, std::string> files;
  files["dve_info.json"] = img.Info().dump();
  for (const SetImage& s : img.sets())
    for (const auto& [k, b] : s.blobs) files[Image::FileOf(s, k)] = std::string(b.begin(), b.end());
  int calls = 0;
  FileReader mem = [&](const std::string& name, size_t) -> absl::StatusOr<std::string> {
    ++calls;
    auto it = files.find(name);
    if (it == files.end()) return absl::NotFoundError("no such file");
    return it->second;
  };
  absl::StatusOr<TableDir> t = ReadTableDirFrom("image", mem);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ucode_gen, 4);
  EXPECT_EQ(calls, 2 + 12);  // dve_info.json, version.json and twelve blobs
  EXPECT_EQ(t->Find("saturate")->PathOf(t->Find("saturate")->opcode),
            "image/saturate_opcode_table.bin");

  files.erase("transformer_opcode_table.bin");
  absl::StatusOr<TableDir> miss = ReadTableDirFrom("image", mem);
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(Msg(miss.status()), "image/transformer_opcode_table.bin: no such file");

  FileReader thrower = [](const std::string& name, size_t) -> absl::StatusOr<std::string> {
    if (name == "dve_info.json") throw std::runtime_error("boom");
    return absl::NotFoundError("x");
  };
  absl::StatusOr<TableDir> th = ReadTableDirFrom("image", thrower);
  ASSERT_FALSE(th.ok());
  EXPECT_THAT(Msg(th.status()), HasSubstr("image/dve_info.json"));
  EXPECT_THAT(Msg(th.status()), HasSubstr("boom"));
}

TEST(KnownBlobs, IdentifyAgainstATable) {
  // The sources quote no digest of a shipped microcode blob, so the built-in table is empty.
  EXPECT_TRUE(KnownBlobs().empty());
  const Sha256Digest abc = Sha256Of(Bytes("abc"));
  EXPECT_EQ(IdentifyBlob(abc), nullptr);
  const KnownBlob table[] = {
      {"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "b0", "empty.bin"},
      {"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "b1", "abc.bin"}};
  const KnownBlob* k = IdentifyBlob(abc, table);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->file, "abc.bin");
  EXPECT_EQ(IdentifyBlob(Sha256Of(Bytes("abd")), table), nullptr);
  const uint8_t raw[] = {0x00, 0xc3, 0x30, 0x0c};
  EXPECT_EQ(FormatBytes(raw), "00 c3 30 0c");
}

// ---------------------------------------------------------------- the CLI

struct CliResult {
  int rc;
  std::string out, err;
};

CliResult RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "ucode");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  int rc = UcodeMain(static_cast<int>(argv.size()), argv.data(), out, err);
  return {rc, out.str(), err.str()};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { Gen4Image().Write(dir_.path()); }
  TempDir dir_{"cli"};
};

TEST_F(Cli, Help) {
  CliResult r = RunCli({"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: dvejit ucode DIR"));
  EXPECT_THAT(r.out, HasSubstr("--diff A B"));
  EXPECT_TRUE(r.err.empty());
}

TEST_F(Cli, UsageErrors) {
  const std::string d = dir_.str();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {d, "--bogus"},
           {d, "--op"},
           {d, "--op", "256"},
           {d, "--op", "abc"},
           {d, "--op", "0x"},
           {d, "--set"},
           {d, "--diff", "default"},
           {d, "--gen", "gen9"},
           {d, d},
           {d, "--set", "nosuch"},
           {d, "--diff", "default", "nosuch"},
       }) {
    CliResult r = RunCli(args);
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    EXPECT_EQ(r.rc, 2) << joined;
    EXPECT_THAT(r.err, HasSubstr("dvejit ucode: ")) << joined;
    EXPECT_TRUE(r.out.empty()) << joined;
  }
  CliResult r = RunCli({d, "--set", "nosuch"});
  EXPECT_THAT(r.err, HasSubstr("no table set \"nosuch\""));
  EXPECT_THAT(r.err, HasSubstr("default, saturate, transformer"));
}

TEST_F(Cli, BadDirectoryExitsOne) {
  Image::WriteFile(dir_.path() / "saturate_datapath_table.bin", std::string(100, 'x'));
  CliResult r = RunCli({dir_.str()});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr(dir_.str() + "/saturate_datapath_table.bin"));
  EXPECT_THAT(r.err, HasSubstr("wrong size"));
  r = RunCli({dir_.str() + "/missing"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("not a directory"));
  Image::WriteFile(dir_.path() / "dve_info.json", "{");
  r = RunCli({dir_.str(), "--op", "65"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr(dir_.str() + "/dve_info.json: malformed JSON"));
}

TEST_F(Cli, Listing) {
  CliResult r = RunCli({dir_.str()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("generation: gen4 (from set names)"));
  EXPECT_THAT(r.out, HasSubstr("2.24.5133.0+58f8de22"));
  EXPECT_THAT(r.out, HasSubstr("sets: default, saturate, transformer"));
  EXPECT_THAT(r.out, HasSubstr("set default: 59 opcodes enabled (6 with a slow program)"));
  EXPECT_THAT(r.out, HasSubstr("set saturate: 59 opcodes enabled (6 with a slow program); "
                               "saturating integer arithmetic"));
  EXPECT_THAT(r.out, HasSubstr("set transformer: 3 opcodes enabled"));
  EXPECT_THAT(r.out, HasSubstr("matches the built-in gen4 default roster (59 opcodes)"));
  EXPECT_THAT(r.out, HasSubstr("roster: 48 65 66"));
  std::ifstream f(dir_.path() / "default_opcode_table.bin", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_THAT(r.out, HasSubstr("default_opcode_table.bin  1024 B  sha256 " +
                               Sha256Hex(Sha256Of(bytes)) + "  (not a known shipped blob)"));
  EXPECT_THAT(r.out, HasSubstr("op 65"));
  EXPECT_THAT(r.out, HasSubstr("V=0x3010"));
  EXPECT_THAT(r.out, HasSubstr("fast  16  slow 48"));

  CliResult one = RunCli({dir_.str(), "--set", "transformer"});
  ASSERT_EQ(one.rc, 0);
  EXPECT_THAT(one.out, HasSubstr("set transformer"));
  EXPECT_THAT(one.out, Not(HasSubstr("set default:")));
  EXPECT_THAT(one.out, HasSubstr("roster: 65 70 200"));
}

TEST_F(Cli, DecodeOp) {
  CliResult r = RunCli({dir_.str(), "--set", "default", "--op", "65"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("set default, op 65"));
  EXPECT_THAT(r.out, HasSubstr("V=0x3010 fast_row=16 slow_row=48"));
  EXPECT_THAT(r.out, HasSubstr("control_fast_table[16]: 00 00 00 00 20 80 09 00 00 00"));
  EXPECT_THAT(r.out, HasSubstr("lane_class=0x00 operand_pc=0x00 step_config=0x0000 "
                               "issue_marker=20 80 step_op=0x09 high_op=0x00"));
  EXPECT_THAT(r.out, HasSubstr("control_slow_table[48]: 00 c3 30 0c c3 30 01 00"));
  EXPECT_THAT(r.out, HasSubstr("steps: 0x300 0x30c 0x30c 0x30c (head substituted) "
                               "loop_count=1 (byte 6)"));
  EXPECT_THAT(r.out, HasSubstr("4 steps x 2 iterations = 8 issues"));
  EXPECT_THAT(r.out, HasSubstr("datapath_table[16]: 0x11 0x22 0x33 0x40000000000"));
  EXPECT_THAT(r.out, HasSubstr("pipeline_depth=3"));
  EXPECT_THAT(r.out, HasSubstr("issued_steps=9"));

  CliResult hex = RunCli({dir_.str(), "--set=default", "--op=0x41"});
  EXPECT_EQ(hex.out, r.out);

  CliResult all = RunCli({dir_.str(), "--op", "71"});
  ASSERT_EQ(all.rc, 0);
  EXPECT_THAT(all.out, HasSubstr("set default, op 71"));
  EXPECT_THAT(all.out, HasSubstr("set saturate, op 71"));
  EXPECT_THAT(all.out, HasSubstr("set transformer, op 71"));
  EXPECT_THAT(all.out, HasSubstr("V=0x0 (disabled in this set)"));
  EXPECT_THAT(all.out, HasSubstr("fast-only (slow_row 0)"));
  EXPECT_THAT(all.out, HasSubstr("issued_steps=1"));
}

TEST_F(Cli, Diff) {
  CliResult r = RunCli({dir_.str(), "--diff", "default", "saturate"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("diff default -> saturate:"));
  EXPECT_THAT(r.out, HasSubstr("opcode_table entries differing: 0"));
  EXPECT_THAT(r.out, HasSubstr("control_fast_table rows differing: 1"));
  EXPECT_THAT(r.out, HasSubstr("row 143: 00 00 00 00 20 80 79 00 00 00 00 00 00 00 00 00 -> "
                               "01 92 00 00 08 80 01 00"));
  EXPECT_THAT(r.out, HasSubstr("control_slow_table rows differing: 1"));
  EXPECT_THAT(r.out, HasSubstr("row 20: "));
  EXPECT_THAT(r.out, HasSubstr("datapath_table blocks differing: 0"));
  EXPECT_THAT(r.out, Not(HasSubstr("roster:")));

  CliResult same = RunCli({dir_.str(), "--diff", "saturate", "saturate"});
  EXPECT_THAT(same.out, HasSubstr("diff saturate -> saturate: no differences"));

  CliResult tr = RunCli({dir_.str(), "--diff", "default", "transformer"});
  EXPECT_THAT(tr.out, HasSubstr("op 200"));
  EXPECT_THAT(tr.out, HasSubstr("0x0 -> 0x7"));
  EXPECT_THAT(tr.out, HasSubstr("block 16: lane 0 0x11 -> 0x40000000000;"));
}

TEST(CliGen2, DecodeOpAndGenFlag) {
  TempDir dir("cli2");
  Gen2Image().Write(dir.path());
  CliResult r = RunCli({dir.str(), "--op", "65", "--set", "default"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("generation: gen2 (from table keys)"));
  EXPECT_THAT(r.out, HasSubstr("control_table[5]: 50 55 12 00 07 80 01 02 03 04 05 06"));
  EXPECT_THAT(r.out, HasSubstr("lane_modes=0x5550 [0,0,1,1,1,1,1,1] op_select=0x12 pc_imm=0x07 "
                               "issue_marker=07 80 operand_mux=01 02 03 04 05 06"));
  EXPECT_THAT(r.out, HasSubstr("slow index 3: recorded only"));
  EXPECT_THAT(r.out, HasSubstr("issued_steps=1"));
  CliResult list = RunCli({dir.str(), "--set", "default"});
  EXPECT_THAT(list.out, HasSubstr("set default: 46 opcodes enabled\n"));
  EXPECT_THAT(list.out, HasSubstr("(recorded only)"));
  CliResult wrong = RunCli({dir.str(), "--gen", "mariana"});
  EXPECT_EQ(wrong.rc, 1);
  EXPECT_THAT(wrong.err, HasSubstr("dve_info.json"));

  TempDir blank_dir("cli_blank");
  Image blank(4);
  SetImage& s = blank.AddSet("default");
  std::fill(s.blobs[TableKey::Datapath].begin(), s.blobs[TableKey::Datapath].end(), 0);
  blank.Write(blank_dir.path());
  EXPECT_EQ(RunCli({blank_dir.str()}).rc, 1);
  CliResult given = RunCli({blank_dir.str(), "--gen", "cayman"});
  EXPECT_EQ(given.rc, 0) << given.err;
  EXPECT_THAT(given.out, HasSubstr("generation: gen3 (given)"));
}

}  // namespace
}  // namespace dvejit::ucode
