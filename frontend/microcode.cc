#include "frontend/microcode.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "frontend/diag.h"
#include "frontend/strcat.h"

namespace dvejit::ucode {
namespace {

using Json = nlohmann::json;

constexpr TableKey kGen2Keys[] = {TableKey::Opcode, TableKey::Control, TableKey::Datapath};
constexpr TableKey kGen34Keys[] = {TableKey::Opcode, TableKey::ControlFast, TableKey::ControlSlow,
                                   TableKey::Datapath};

constexpr std::string_view kGen23Sets[] = {"default", "transformer", "transformer_fwd",
                                           "transformer_bwd", "transformer_bwd2"};
constexpr std::string_view kGen4Sets[] = {"default", "saturate", "transformer"};

// microcode.md §4.2.
constexpr uint8_t kRosterGen2[] = {
    65,  66,  67,  68,  69,  70,  71,  72,  73,  77,  78,  81,  82,  83,  84,  88,
    94,  97,  98,  99,  100, 101, 102, 105, 106, 107, 108, 109, 110, 111, 114, 127,
    130, 131, 132, 140, 141, 142, 148, 153, 157, 158, 159, 229, 232, 234};
constexpr uint8_t kRosterGen3[] = {
    65,  66,  67,  68,  69,  70,  71,  72,  73,  77,  78,  81,  82,  83,  84,  88,  94,  96,
    97,  98,  99,  100, 101, 102, 105, 106, 107, 108, 109, 110, 111, 114, 127, 130, 131, 132,
    142, 147, 148, 152, 153, 154, 155, 157, 158, 188, 229, 230, 232, 233, 234, 240};
constexpr uint8_t kRosterGen4[] = {
    48,  65,  66,  67,  68,  69,  70,  71,  72,  73,  77,  78,  81,  82,  83,
    84,  88,  94,  96,  97,  98,  99,  100, 101, 102, 105, 106, 107, 108, 109,
    110, 111, 114, 119, 120, 127, 130, 131, 132, 142, 147, 148, 152, 153, 154,
    155, 157, 158, 188, 224, 225, 226, 227, 229, 230, 232, 233, 234, 240};
static_assert(std::size(kRosterGen2) == 46);
static_assert(std::size(kRosterGen3) == 52);
static_assert(std::size(kRosterGen4) == 59);

constexpr size_t kMaxJsonBytes = 1 << 20;
constexpr int kMaxJsonDepth = 64;

uint64_t LoadLe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool AllZero(std::span<const uint8_t> b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

std::string JoinPath(std::string_view dir, std::string_view file) {
  if (dir.empty()) return std::string(file);
  if (dir.back() == '/') return Cat(dir, file);
  return Cat(dir, "/", file);
}

// Nesting depth of JSON text, ignoring brackets inside strings; guards the parser and dump().
int JsonDepth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return max_depth;
}

// Parses JSON text; every failure (including any exception) becomes a status naming `path`.
absl::StatusOr<Json> ParseJson(const std::string& path, const std::string& text) {
  if (text.size() > kMaxJsonBytes)
    return absl::InvalidArgumentError(
        Cat(path, ": file is larger than ", kMaxJsonBytes, " bytes"));
  if (JsonDepth(text) > kMaxJsonDepth)
    return absl::InvalidArgumentError(
        Cat(path, ": malformed JSON: nested deeper than ", kMaxJsonDepth, " levels"));
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(Cat(path, ": malformed JSON: ", std::string_view(e.what())));
  } catch (...) {
    return absl::InvalidArgumentError(Cat(path, ": malformed JSON"));
  }
}

std::string_view JsonTypeName(const Json& j) {
  try {
    return j.type_name();
  } catch (...) {
    return "value";
  }
}

bool ValidFileName(std::string_view f) {
  if (f.empty() || f == "." || f == "..") return false;
  for (char c : f)
    if (c == '/' || c == '\\' || c == '\0') return false;
  return true;
}

// Short human description of a blob's geometry, for size errors.
std::string GeometryText(int gen, TableKey k) {
  BlobGeometry g = BlobGeometryOf(gen, k);
  if (k == TableKey::Opcode) return Cat(g.rows, " x u", g.stride * 8);
  if (k == TableKey::Datapath) return Cat(g.rows, " blocks x ", g.stride, " B");
  return Cat(g.rows, " rows x ", g.stride, " B");
}

// One file read through the FileReader, cached by name (sets may share files).
class FileCache {
 public:
  FileCache(std::string_view dir, const FileReader& read) : dir_(dir), read_(read) {}
  absl::StatusOr<const std::string*> Get(const std::string& name, size_t max_bytes) {
    auto it = cache_.find(name);
    if (it != cache_.end() && it->second.max_bytes >= max_bytes) return &it->second.data;
    absl::StatusOr<std::string> got;
    try {
      got = read_(name, max_bytes);
    } catch (const std::exception& e) {
      got = absl::InternalError(Cat("read failed: ", std::string_view(e.what())));
    } catch (...) {
      got = absl::InternalError("read failed");
    }
    if (!got.ok()) {
      const absl::string_view m = got.status().message();
      const std::string_view msg(m.data(), m.size());
      std::string path = JoinPath(dir_, name);
      // A reader that already names the file keeps its message.
      if (msg.find(name) == std::string_view::npos)
        return absl::Status(got.status().code(), Cat(path, ": ", msg));
      return got.status();
    }
    Entry& e = cache_[name];
    e.data = *std::move(got);
    e.max_bytes = max_bytes;
    return &e.data;
  }

 private:
  std::string dir_;
  const FileReader& read_;
  struct Entry {
    std::string data;
    size_t max_bytes = 0;
  };
  std::map<std::string, Entry> cache_;
};

// gen3 vs gen4 share keys and sizes; decide from the names, the directory, the idle words.
std::optional<int> DecideGen34(const TableDir& d, std::string* how) {
  bool gen4_name = false, gen3_name = false;
  for (const TableSet& s : d.sets) {
    if (s.name == "saturate") gen4_name = true;
    if (s.name == "transformer_fwd" || s.name == "transformer_bwd" ||
        s.name == "transformer_bwd2")
      gen3_name = true;
  }
  if (gen4_name != gen3_name) {
    *how = "set names";
    return gen4_name ? 4 : 3;
  }
  std::string p = d.path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p.size() >= 4) {
    std::string_view tail = std::string_view(p).substr(p.size() - 4);
    if (tail == "gen3" || tail == "gen4") {
      *how = "directory name";
      return tail == "gen3" ? 3 : 4;
    }
  }
  size_t votes3 = 0, votes4 = 0;
  for (const TableSet& s : d.sets) {
    const std::vector<uint8_t>& b = s.datapath.bytes;
    for (size_t i = 0; i + 8 <= b.size(); i += 8) {
      uint64_t w = LoadLe(&b[i], 8);
      if (w == IdleLaneWord(3)) ++votes3;
      if (w == IdleLaneWord(4)) ++votes4;
    }
  }
  if (votes3 != votes4) {
    *how = "datapath idle words";
    return votes4 > votes3 ? 4 : 3;
  }
  return std::nullopt;
}

absl::StatusOr<TableDir> ReadTableDirImpl(std::string_view dir_label, const FileReader& read,
                                          std::optional<int> want_gen) {
  if (want_gen && !IsUcodeGen(*want_gen))
    return absl::InvalidArgumentError(
        Cat(dir_label, ": microcode generation ", *want_gen, " is not 2, 3 or 4"));
  TableDir d;
  d.path = std::string(dir_label);
  FileCache files(dir_label, read);
  const std::string info_path = JoinPath(dir_label, "dve_info.json");

  // ---- dve_info.json ----
  absl::StatusOr<const std::string*> info_text = files.Get("dve_info.json", kMaxJsonBytes);
  if (!info_text.ok()) return info_text.status();
  absl::StatusOr<Json> info = ParseJson(info_path, **info_text);
  if (!info.ok()) return info.status();
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(Cat(info_path, ": ", what));
  };
  if (!info->is_object()) return bad(Cat("expected a JSON object, found ", JsonTypeName(*info)));
  auto keys_it = info->find("dve_table_keys");
  if (keys_it == info->end()) return bad("missing key \"dve_table_keys\"");
  if (!keys_it->is_array()) return bad("\"dve_table_keys\" is not an array");
  std::set<TableKey> key_set;
  for (const Json& k : *keys_it) {
    if (!k.is_string()) return bad("\"dve_table_keys\" holds a non-string");
    const std::string& name = k.get_ref<const std::string&>();
    std::optional<TableKey> tk = ParseTableKey(name);
    if (!tk) return bad(Cat("unknown table key \"", name, "\" in \"dve_table_keys\""));
    if (!key_set.insert(*tk).second) return bad(Cat("table key \"", name, "\" listed twice"));
    d.keys.push_back(name);
  }
  const std::set<TableKey> gen2_keys(std::begin(kGen2Keys), std::end(kGen2Keys));
  const std::set<TableKey> gen34_keys(std::begin(kGen34Keys), std::end(kGen34Keys));
  int key_gen;  // 2, or 3 for "gen3 or gen4"
  if (key_set == gen2_keys) {
    key_gen = 2;
  } else if (key_set == gen34_keys) {
    key_gen = 3;
  } else {
    return bad(
        "\"dve_table_keys\" is neither the gen2 set [opcode_table, control_table, "
        "datapath_table] nor the gen3/gen4 set [opcode_table, control_fast_table, "
        "control_slow_table, datapath_table]");
  }
  if (want_gen && (key_gen == 2) != (*want_gen == 2))
    return bad(Cat("the table keys are those of ", key_gen == 2 ? "gen2" : "gen3/gen4",
                   ", not of the requested gen", *want_gen));
  // Until gen3 vs gen4 is decided, gen 3 stands for both: sizes and layouts are identical.
  const int layout_gen = key_gen;
  std::span<const TableKey> keys = KeysOf(layout_gen);

  // ---- version.json (optional) ----
  absl::StatusOr<const std::string*> ver_text = files.Get("version.json", kMaxJsonBytes);
  if (ver_text.ok()) {
    absl::StatusOr<Json> ver = ParseJson(JoinPath(dir_label, "version.json"), **ver_text);
    if (!ver.ok()) return ver.status();
    try {
      d.version = ver->dump(-1, ' ', false, Json::error_handler_t::replace);
    } catch (...) {
      d.version = "?";
    }
  } else if (absl::IsNotFound(ver_text.status())) {
    d.notes.push_back("no version.json");
  } else {
    return ver_text.status();
  }

  // ---- tables[] ----
  auto tables_it = info->find("tables");
  if (tables_it == info->end()) return bad("missing key \"tables\"");
  if (!tables_it->is_array()) return bad("\"tables\" is not an array");
  if (tables_it->empty()) return bad("\"tables\" is empty");
  std::set<std::string> names;
  size_t index = 0;
  for (const Json& t : *tables_it) {
    const std::string where = Cat("tables[", index++, "]");
    if (!t.is_object()) return bad(Cat(where, " is not an object"));
    auto name_it = t.find("name");
    if (name_it == t.end()) return bad(Cat(where, ": missing key \"name\""));
    if (!name_it->is_string() || name_it->get_ref<const std::string&>().empty())
      return bad(Cat(where, ": \"name\" is not a non-empty string"));
    TableSet s;
    s.name = name_it->get<std::string>();
    s.ucode_gen = layout_gen;
    s.dir = d.path;
    const std::string set_where = Cat(where, " (set \"", s.name, "\")");
    if (!names.insert(s.name).second) return bad(Cat(set_where, ": set name listed twice"));

    auto ops_it = t.find("ops");
    if (ops_it == t.end()) return bad(Cat(set_where, ": missing key \"ops\""));
    if (!ops_it->is_array()) return bad(Cat(set_where, ": \"ops\" is not an array"));
    for (const Json& op : *ops_it) {
      bool ok = false;
      int64_t v = -1;
      if (op.is_number_unsigned()) {
        uint64_t u = op.get<uint64_t>();
        ok = u <= 255;
        v = ok ? static_cast<int64_t>(u) : -1;
      } else if (op.is_number_integer()) {
        v = op.get<int64_t>();
        ok = v >= 0 && v <= 255;
      }
      if (!ok)
        return bad(Cat(set_where, ": \"ops\" holds ",
                       op.is_number() ? Cat("the number ", op.dump()) : Cat("a ", JsonTypeName(op)),
                       ", expected decimal opcodes 0..255"));
      s.ops.push_back(static_cast<int>(v));
    }

    for (TableKey k : keys) {
      const std::string_view kname = TableKeyName(k);
      auto f_it = t.find(std::string(kname));
      if (f_it == t.end()) return bad(Cat(set_where, ": missing key \"", kname, "\""));
      if (!f_it->is_string()) return bad(Cat(set_where, ": \"", kname, "\" is not a string"));
      const std::string& file = f_it->get_ref<const std::string&>();
      if (!ValidFileName(file))
        return bad(Cat(set_where, ": \"", kname, "\" = \"", file,
                       "\" is not a plain file name in the directory"));
      const size_t want = BlobGeometryOf(layout_gen, k).bytes;
      absl::StatusOr<const std::string*> got = files.Get(file, want);
      if (!got.ok()) return got.status();
      const std::string& bytes = **got;
      if (bytes.size() != want)
        return absl::InvalidArgumentError(
            Cat(JoinPath(dir_label, file), ": wrong size: ",
                bytes.size() > want ? Cat("more than ", want) : Cat(bytes.size()),
                " bytes, expected exactly ", want, " for ", kname, " (",
                GeometryText(layout_gen, k), ") of set \"", s.name, "\""));
      Blob b;
      b.file = file;
      b.bytes.assign(bytes.begin(), bytes.end());
      b.sha256 = Sha256Of(b.bytes);
      switch (k) {
        case TableKey::Opcode: s.opcode = std::move(b); break;
        case TableKey::Control:
        case TableKey::ControlFast: s.control = std::move(b); break;
        case TableKey::ControlSlow: s.control_slow = std::move(b); break;
        case TableKey::Datapath: s.datapath = std::move(b); break;
      }
    }
    for (auto it = t.begin(); it != t.end(); ++it) {
      const std::string& k = it.key();
      if (k == "name" || k == "ops") continue;
      std::optional<TableKey> tk = ParseTableKey(k);
      if (!tk || !key_set.count(*tk))
        d.notes.push_back(Cat("set \"", s.name, "\": key \"", k, "\" ignored"));
    }
    d.sets.push_back(std::move(s));
  }

  // ---- the generation ----
  if (key_gen == 2) {
    d.ucode_gen = 2;
    d.gen_source = want_gen ? "given" : "table keys";
  } else if (want_gen) {
    d.ucode_gen = *want_gen;
    d.gen_source = "given";
  } else {
    std::string how;
    std::optional<int> g = DecideGen34(d, &how);
    if (!g)
      return bad(
          "the tables are gen3/gen4 but nothing tells which (no gen-specific set name, "
          "directory name or datapath idle word); pass the generation");
    d.ucode_gen = *g;
    d.gen_source = how;
  }
  for (TableSet& s : d.sets) s.ucode_gen = d.ucode_gen;

  // ---- row indices, roster consistency, names ----
  const std::span<const std::string_view> standard = StandardSetNames(d.ucode_gen);
  for (const TableSet& s : d.sets) {
    for (int op = 0; op < 256; ++op) {
      OpcodeEntry e = s.DecodedEntry(static_cast<uint8_t>(op));
      if (d.ucode_gen >= 3 && e.slow_row >= BlobGeometryOf(d.ucode_gen, TableKey::ControlSlow).rows)
        return absl::InvalidArgumentError(
            Cat(s.PathOf(s.opcode), ": opcode ", op, ": entry ", Hex(e.value), " names slow row ",
                e.slow_row, ", past the end of ", s.PathOf(s.control_slow), " (",
                BlobGeometryOf(d.ucode_gen, TableKey::ControlSlow).rows, " rows)"));
    }
    std::bitset<256> listed;
    for (int op : s.ops) listed.set(static_cast<size_t>(op));
    std::string listed_zero, unlisted_nonzero;
    for (int op = 0; op < 256; ++op) {
      bool en = s.Enabled(static_cast<uint8_t>(op));
      if (listed.test(static_cast<size_t>(op)) && !en) listed_zero += Cat(" ", op);
      if (!listed.test(static_cast<size_t>(op)) && en) unlisted_nonzero += Cat(" ", op);
    }
    if (!listed_zero.empty())
      d.notes.push_back(Cat("set \"", s.name, "\": \"ops\" lists opcodes whose entry is 0:",
                            listed_zero));
    if (!unlisted_nonzero.empty())
      d.notes.push_back(Cat("set \"", s.name, "\": opcodes with a nonzero entry missing from "
                            "\"ops\":", unlisted_nonzero));
    if (std::find(standard.begin(), standard.end(), s.name) == standard.end())
      d.notes.push_back(Cat("set \"", s.name, "\" is not a standard gen", d.ucode_gen, " set"));
  }
  return d;
}

}  // namespace

// ---- generations and geometry ----

int UcodeGenOf(Generation g) {
  switch (g) {
    case Generation::Sunda: return 2;
    case Generation::Cayman: return 3;
    case Generation::Mariana:
    case Generation::Maverick: return 4;
  }
  return 3;
}

std::optional<int> ParseUcodeGen(std::string_view s) {
  if (s == "gen2" || s == "2") return 2;
  if (s == "gen3" || s == "3") return 3;
  if (s == "gen4" || s == "4") return 4;
  if (std::optional<Generation> g = ParseGeneration(s)) return UcodeGenOf(*g);
  return std::nullopt;
}

std::string_view TableKeyName(TableKey k) {
  switch (k) {
    case TableKey::Opcode: return "opcode_table";
    case TableKey::Control: return "control_table";
    case TableKey::ControlFast: return "control_fast_table";
    case TableKey::ControlSlow: return "control_slow_table";
    case TableKey::Datapath: return "datapath_table";
  }
  return "?";
}

std::optional<TableKey> ParseTableKey(std::string_view s) {
  for (TableKey k : {TableKey::Opcode, TableKey::Control, TableKey::ControlFast,
                     TableKey::ControlSlow, TableKey::Datapath})
    if (TableKeyName(k) == s) return k;
  return std::nullopt;
}

std::span<const TableKey> KeysOf(int ucode_gen) {
  if (ucode_gen == 2) return kGen2Keys;
  if (ucode_gen == 3 || ucode_gen == 4) return kGen34Keys;
  return {};
}

BlobGeometry BlobGeometryOf(int ucode_gen, TableKey key) {
  if (ucode_gen == 2) {
    switch (key) {
      case TableKey::Opcode: return {2048, 256, 8};
      case TableKey::Control: return {2048, 128, 16};
      case TableKey::Datapath: return {8192, 128, 64};
      default: return {};
    }
  }
  if (ucode_gen == 3 || ucode_gen == 4) {
    switch (key) {
      case TableKey::Opcode: return {1024, 256, 4};
      case TableKey::ControlFast:
      case TableKey::ControlSlow: return {4096, 256, 16};
      case TableKey::Datapath: return {16384, 256, 64};
      default: return {};
    }
  }
  return {};
}

std::span<const std::string_view> StandardSetNames(int ucode_gen) {
  if (ucode_gen == 2 || ucode_gen == 3) return kGen23Sets;
  if (ucode_gen == 4) return kGen4Sets;
  return {};
}

bool IsSaturateSet(std::string_view name) { return name == "saturate"; }

// ---- decoders ----

OpcodeEntry DecodeOpcodeEntry(int ucode_gen, uint64_t v) {
  OpcodeEntry e;
  e.value = v;
  if (ucode_gen == 2) {
    e.fast_row = static_cast<uint32_t>(v & 0x7F);
    e.slow_row = v >> 7;
  } else {
    e.fast_row = static_cast<uint32_t>(v & 0xFF);
    e.slow_row = v >> 8;
    e.runs_slow = e.slow_row != 0;
  }
  return e;
}

Gen2ControlRow DecodeGen2ControlRow(std::span<const uint8_t, 16> row) {
  Gen2ControlRow r;
  r.lane_mode_word = static_cast<uint16_t>(LoadLe(&row[0], 2));
  for (int i = 0; i < 8; ++i) r.lane_modes[i] = (r.lane_mode_word >> (2 * i)) & 3;
  r.op_select = row[2];
  r.pc_imm = row[4];
  r.issue_marker = {row[4], row[5]};
  std::copy(row.begin() + 6, row.begin() + 12, r.operand_mux.begin());
  r.idle = r.lane_mode_word == kGen2IdleLaneModes;
  r.high_bytes_nonzero = !AllZero(row.subspan(12, 4));
  return r;
}

FastControlRow DecodeFastControlRow(std::span<const uint8_t, 16> row) {
  FastControlRow r;
  r.word = LoadLe(&row[0], 8);
  r.lane_class = row[0];
  r.operand_pc = row[1];
  r.step_config = static_cast<uint16_t>(LoadLe(&row[2], 2));
  r.issue_marker = {row[4], row[5]};
  r.step_op = row[6];
  r.high_op = row[7];
  r.high_bytes_nonzero = !AllZero(row.subspan(8, 8));
  return r;
}

SlowProgram DecodeSlowProgram(std::span<const uint8_t, 16> row) {
  SlowProgram p;
  // The nibble stream of bytes[0:6], low nibble first: nibble 2i = row[i] & 15, 2i+1 = row[i] >> 4.
  auto nibble = [&](int n) -> uint16_t { return (row[n / 2] >> (4 * (n % 2))) & 0xF; };
  for (int k = 0; k < kSlowStepCount; ++k)
    p.steps[k] = static_cast<uint16_t>(nibble(3 * k) | (nibble(3 * k + 1) << 4) |
                                       (nibble(3 * k + 2) << 8));
  p.byte7 = row[7];
  if (row[6] != 0 || row[7] == 0) {
    p.loop_count = row[6];
    p.loop_count_byte = 6;
  } else {
    p.loop_count = row[7];
    p.loop_count_byte = 7;
  }
  std::copy(row.begin() + 8, row.begin() + 14, p.payload.begin());
  p.head_substituted = p.steps[0] != kDefaultSlowStep;
  p.high_bytes_nonzero = row[14] != 0 || row[15] != 0;
  return p;
}

uint64_t IdleLaneWord(int ucode_gen) {
  switch (ucode_gen) {
    case 2: return 0x00100000;
    case 3: return uint64_t{1} << 32;
    case 4: return uint64_t{1} << 42;
  }
  return 0;
}

DatapathBlock DecodeDatapathBlock(int ucode_gen, std::span<const uint8_t, 64> block) {
  DatapathBlock d;
  const uint64_t idle = IdleLaneWord(ucode_gen);
  for (int i = 0; i < 8; ++i) {
    d.lanes[i] = LoadLe(&block[8 * i], 8);
    d.idle[i] = d.lanes[i] == idle;
  }
  d.off = AllZero(block);
  if (!d.off)
    while (d.pipeline_depth < 8 && !d.idle[d.pipeline_depth]) ++d.pipeline_depth;
  return d;
}

uint32_t IssuedSteps(const SlowProgram* slow) { return slow ? 1 + slow->issues() : 1; }

// ---- TableSet ----

const Blob* TableSet::BlobFor(TableKey k) const {
  switch (k) {
    case TableKey::Opcode: return &opcode;
    case TableKey::Control: return ucode_gen == 2 ? &control : nullptr;
    case TableKey::ControlFast: return ucode_gen >= 3 ? &control : nullptr;
    case TableKey::ControlSlow: return ucode_gen >= 3 ? &control_slow : nullptr;
    case TableKey::Datapath: return &datapath;
  }
  return nullptr;
}

std::string TableSet::PathOf(const Blob& b) const { return JoinPath(dir, b.file); }

uint64_t TableSet::Entry(uint8_t op) const {
  const size_t stride = ucode_gen == 2 ? 8 : 4;
  const size_t at = size_t{op} * stride;
  if (at + stride > opcode.bytes.size()) return 0;
  return LoadLe(&opcode.bytes[at], static_cast<int>(stride));
}

namespace {
template <size_t N>
absl::StatusOr<std::span<const uint8_t, N>> RowOf(const TableSet& s, const Blob& b,
                                                  std::string_view what, uint64_t row) {
  const uint64_t rows = b.bytes.size() / N;
  if (row >= rows)
    return absl::OutOfRangeError(Cat(s.PathOf(b), ": ", what, " ", row, " is past the end (",
                                     rows, " ", what, "s)"));
  return std::span<const uint8_t, N>(b.bytes.data() + row * N, N);
}
}  // namespace

absl::StatusOr<std::span<const uint8_t, 16>> TableSet::ControlRow(uint64_t row) const {
  return RowOf<16>(*this, control, "row", row);
}
absl::StatusOr<std::span<const uint8_t, 16>> TableSet::SlowRow(uint64_t row) const {
  if (ucode_gen == 2)
    return absl::FailedPreconditionError(
        Cat(dir, ": set \"", name, "\": gen2 has no control_slow_table"));
  return RowOf<16>(*this, control_slow, "row", row);
}
absl::StatusOr<std::span<const uint8_t, 64>> TableSet::DatapathBytes(uint64_t block) const {
  return RowOf<64>(*this, datapath, "block", block);
}

const TableSet* TableDir::Find(std::string_view name) const {
  for (const TableSet& s : sets)
    if (s.name == name) return &s;
  return nullptr;
}

// ---- reading ----

absl::StatusOr<TableDir> ReadTableDirFrom(std::string_view dir_label, const FileReader& read,
                                          std::optional<int> ucode_gen) {
  try {
    return ReadTableDirImpl(dir_label, read, ucode_gen);
  } catch (const std::exception& e) {
    return absl::InternalError(
        Cat(dir_label, ": unexpected error reading the tables: ", std::string_view(e.what())));
  } catch (...) {
    return absl::InternalError(Cat(dir_label, ": unexpected error reading the tables"));
  }
}

absl::StatusOr<TableDir> ReadTableDir(const std::string& dir, std::optional<int> ucode_gen) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return absl::NotFoundError(Cat(dir, ": not a directory"));
  FileReader reader = [&dir](const std::string& name,
                             size_t max_bytes) -> absl::StatusOr<std::string> {
    const std::string path = JoinPath(dir, name);
    std::error_code ec2;
    fs::file_status st = fs::status(path, ec2);
    if (!fs::exists(st)) return absl::NotFoundError(Cat(path, ": no such file"));
    if (!fs::is_regular_file(st)) return absl::InvalidArgumentError(Cat(path, ": not a regular file"));
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(Cat(path, ": cannot open: ", std::strerror(errno)));
    std::string data(max_bytes + 1, '\0');
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    if (in.bad()) return absl::DataLossError(Cat(path, ": read error"));
    data.resize(static_cast<size_t>(in.gcount()));
    return data;
  };
  return ReadTableDirFrom(dir, reader, ucode_gen);
}

// ---- one opcode ----

absl::StatusOr<OpDecode> DecodeOp(const TableSet& set, uint8_t opcode) {
  OpDecode d;
  d.opcode = opcode;
  d.entry = set.DecodedEntry(opcode);
  absl::StatusOr<std::span<const uint8_t, 16>> ctl = set.ControlRow(d.entry.fast_row);
  if (!ctl.ok()) return ctl.status();
  std::copy(ctl->begin(), ctl->end(), d.control_bytes.begin());
  if (set.ucode_gen == 2) d.gen2 = DecodeGen2ControlRow(*ctl);
  else d.fast = DecodeFastControlRow(*ctl);
  if (d.entry.runs_slow) {
    absl::StatusOr<std::span<const uint8_t, 16>> slow = set.SlowRow(d.entry.slow_row);
    if (!slow.ok()) return slow.status();
    d.slow_bytes.emplace();
    std::copy(slow->begin(), slow->end(), d.slow_bytes->begin());
    d.slow = DecodeSlowProgram(*slow);
  }
  absl::StatusOr<std::span<const uint8_t, 64>> dp = set.DatapathBytes(d.entry.fast_row);
  if (!dp.ok()) return dp.status();
  std::copy(dp->begin(), dp->end(), d.datapath_bytes.begin());
  d.datapath = DecodeDatapathBlock(set.ucode_gen, *dp);
  d.issued_steps = IssuedSteps(d.slow ? &*d.slow : nullptr);
  return d;
}

absl::StatusOr<Microsteps> MicrostepsOf(const TableSet& set, uint8_t opcode) {
  OpcodeEntry e = set.DecodedEntry(opcode);
  Microsteps m;
  m.fast_row = e.fast_row;
  m.slow_row = e.slow_row;
  if (e.runs_slow) {
    absl::StatusOr<std::span<const uint8_t, 16>> slow = set.SlowRow(e.slow_row);
    if (!slow.ok()) return slow.status();
    SlowProgram p = DecodeSlowProgram(*slow);
    m.issued_steps = IssuedSteps(&p);
  }
  return m;
}

// ---- rosters ----

std::span<const uint8_t> BuiltinRoster(int ucode_gen) {
  switch (ucode_gen) {
    case 2: return kRosterGen2;
    case 3: return kRosterGen3;
    case 4: return kRosterGen4;
  }
  return {};
}

bool BuiltinEnabled(int ucode_gen, uint8_t opcode) {
  std::span<const uint8_t> r = BuiltinRoster(ucode_gen);
  return std::binary_search(r.begin(), r.end(), opcode);
}

absl::StatusOr<Roster> ResolveRoster(int ucode_gen, std::string_view set_name,
                                     const TableDir* dir) {
  if (!IsUcodeGen(ucode_gen))
    return absl::InvalidArgumentError(Cat("microcode generation ", ucode_gen, " is not 2, 3 or 4"));
  Roster r;
  r.set_name = std::string(set_name);
  r.ucode_gen = ucode_gen;
  r.saturate = IsSaturateSet(set_name);
  if (dir) {
    if (dir->ucode_gen != ucode_gen)
      return absl::InvalidArgumentError(Cat(dir->path, ": the tables are gen", dir->ucode_gen,
                                            ", but this generation uses gen", ucode_gen));
    const TableSet* s = dir->Find(set_name);
    if (!s) {
      std::string have;
      for (const TableSet& t : dir->sets) have += Cat(have.empty() ? "" : ", ", t.name);
      return absl::NotFoundError(Cat(dir->path, "/dve_info.json: no table set \"", set_name,
                                     "\" (sets: ", have, ")"));
    }
    for (int op = 0; op < 256; ++op)
      if (s->Enabled(static_cast<uint8_t>(op))) r.enabled.set(static_cast<size_t>(op));
    return r;
  }
  if (set_name != kDefaultSetName && !(r.saturate && ucode_gen == 4))
    return absl::InvalidArgumentError(
        Cat("table set \"", set_name, "\" has no built-in roster for gen", ucode_gen,
            " (built in: default", ucode_gen == 4 ? ", saturate" : "",
            "); give a table directory"));
  r.builtin = true;
  for (uint8_t op : BuiltinRoster(ucode_gen)) r.enabled.set(op);
  return r;
}

absl::StatusOr<bool> OpcodeEnabled(int ucode_gen, std::string_view set_name, uint8_t opcode,
                                   const TableDir* dir) {
  absl::StatusOr<Roster> r = ResolveRoster(ucode_gen, set_name, dir);
  if (!r.ok()) return r.status();
  return r->Enabled(opcode);
}

// ---- diff ----

absl::StatusOr<SetDiff> DiffSets(const TableSet& a, const TableSet& b) {
  if (a.ucode_gen != b.ucode_gen)
    return absl::InvalidArgumentError(Cat("sets \"", a.name, "\" (gen", a.ucode_gen, ") and \"",
                                          b.name, "\" (gen", b.ucode_gen,
                                          ") are of different generations"));
  SetDiff d;
  for (int op = 0; op < 256; ++op)
    if (a.Entry(static_cast<uint8_t>(op)) != b.Entry(static_cast<uint8_t>(op)))
      d.entries.push_back(static_cast<uint8_t>(op));
  auto rows = [](const Blob& x, const Blob& y, size_t stride, std::vector<uint32_t>* out) {
    const size_t n = std::min(x.bytes.size(), y.bytes.size()) / stride;
    for (size_t i = 0; i < n; ++i)
      if (!std::equal(x.bytes.begin() + i * stride, x.bytes.begin() + (i + 1) * stride,
                      y.bytes.begin() + i * stride))
        out->push_back(static_cast<uint32_t>(i));
  };
  rows(a.control, b.control, 16, &d.control_rows);
  if (a.ucode_gen >= 3) rows(a.control_slow, b.control_slow, 16, &d.slow_rows);
  rows(a.datapath, b.datapath, 64, &d.datapath_blocks);
  return d;
}

// ---- known blobs ----

// The sources pin byte values and sizes of the neuronx_cc 2.24.5133.0+58f8de22 blobs but give no
// digest of any microcode blob (seed 004 has none; the sha256 values in the seeds are of firmware
// carves, not of dve_bin_gen*/ files). The table stays empty until a fact sheet supplies them;
// IdentifyBlob and `dvejit ucode` use it as soon as it has entries.
std::span<const KnownBlob> KnownBlobs() { return {}; }

const KnownBlob* IdentifyBlob(const Sha256Digest& digest, std::span<const KnownBlob> table) {
  const std::string hex = Sha256Hex(digest);
  for (const KnownBlob& k : table)
    if (k.sha256_hex == hex) return &k;
  return nullptr;
}

std::string FormatBytes(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i) s.push_back(' ');
    s.push_back(kDigits[bytes[i] >> 4]);
    s.push_back(kDigits[bytes[i] & 15]);
  }
  return s;
}

}  // namespace dvejit::ucode
