#include "tools/ucode_command.h"

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/diag.h"
#include "frontend/isa.h"
#include "frontend/microcode.h"
#include "frontend/strcat.h"

namespace dvejit {
namespace {

using namespace ucode;

constexpr std::string_view kUsage =
    "usage: dvejit ucode DIR [--set NAME] [--op N] [--diff SET_A SET_B] [--gen G]\n"
    "\n"
    "Inspect a DVE microcode table directory (dve_bin_gen{2,3,4}/: dve_info.json, version.json\n"
    "and the per-set blobs). Without --op or --diff, lists every table set: its blobs with their\n"
    "sha256 (and the shipped build when recognised), its roster and each enabled opcode's entry.\n"
    "\n"
    "  DIR             the table directory\n"
    "  --set NAME      show only table set NAME\n"
    "  --op N          decode opcode N (decimal or 0x hex) in each shown set: its entry, the\n"
    "                  decoded fast (control) row, slow row and slow program, the datapath block\n"
    "                  and the issued micro-step count\n"
    "  --diff A B      list the opcode entries, control rows, slow rows and datapath blocks that\n"
    "                  differ between sets A and B\n"
    "  --gen G         microcode generation: gen2, gen3, gen4 or sunda, cayman, mariana,\n"
    "                  maverick (needed only when the directory does not tell gen3 from gen4)\n"
    "  --help          this text\n"
    "\n"
    "Exit status: 0 ok, 1 bad table directory, 2 usage error.\n";

std::string_view Sv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

std::string Hex2(uint64_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(v & 0xFF));
  return buf;
}

std::string HexLower(uint64_t v, int digits = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

std::string OpName(int op) {
  const OpcodeInfo* info = LookupOpcode(static_cast<uint8_t>(op));
  return info ? std::string(info->name) : std::string();
}

std::string OpLabel(int op) {
  std::string name = OpName(op);
  return name.empty() ? Cat("op ", op) : Cat("op ", op, " ", name);
}

std::optional<int> ParseOpcodeArg(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  int v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    v = v * base + d;
    if (v > 255) return std::nullopt;
  }
  return v;
}

std::string SetNames(const TableDir& d) {
  std::string s;
  for (const TableSet& t : d.sets) s += Cat(s.empty() ? "" : ", ", t.name);
  return s;
}

std::string_view ControlKeyName(int gen) {
  return TableKeyName(gen == 2 ? TableKey::Control : TableKey::ControlFast);
}

void PrintHeader(const TableDir& d, std::ostream& out) {
  out << "table directory: " << d.path << "\n";
  out << "generation: gen" << d.ucode_gen << " ("
      << (d.gen_source == "given" ? "given" : Cat("from ", d.gen_source)) << ")\n";
  out << "version: " << (d.version ? *d.version : std::string("(no version.json)")) << "\n";
  out << "keys:";
  for (const std::string& k : d.keys) out << " " << k;
  out << "\n";
  out << "sets: " << SetNames(d) << "\n";
  for (const std::string& n : d.notes) out << "note: " << n << "\n";
}

void PrintBlob(const TableSet& s, TableKey k, std::ostream& out) {
  const Blob* b = s.BlobFor(k);
  if (!b) return;
  const KnownBlob* known = IdentifyBlob(b->sha256);
  char line[64];
  std::snprintf(line, sizeof line, "  %-20s", std::string(TableKeyName(k)).c_str());
  out << line << b->file << "  " << b->bytes.size() << " B  sha256 " << Sha256Hex(b->sha256);
  if (known) out << "  known: " << known->file << " (" << known->build << ")";
  else out << "  (not a known shipped blob)";
  out << "\n";
}

void PrintSetListing(const TableSet& s, std::ostream& out) {
  Roster roster;
  for (int op = 0; op < 256; ++op)
    if (s.Enabled(static_cast<uint8_t>(op))) roster.enabled.set(static_cast<size_t>(op));
  int slow = 0;
  for (int op = 0; op < 256; ++op)
    if (s.DecodedEntry(static_cast<uint8_t>(op)).runs_slow) ++slow;
  out << "\nset " << s.name << ": " << roster.Count() << " opcodes enabled";
  if (s.ucode_gen >= 3) out << " (" << slow << " with a slow program)";
  if (IsSaturateSet(s.name)) out << "; saturating integer arithmetic";
  out << "\n";
  for (TableKey k : KeysOf(s.ucode_gen)) PrintBlob(s, k, out);
  out << "  roster:";
  for (int op = 0; op < 256; ++op)
    if (roster.Enabled(static_cast<uint8_t>(op))) out << " " << op;
  out << "\n";
  if (s.name == kDefaultSetName) {
    std::string added, missing;
    for (int op = 0; op < 256; ++op) {
      bool b = BuiltinEnabled(s.ucode_gen, static_cast<uint8_t>(op));
      bool t = roster.Enabled(static_cast<uint8_t>(op));
      if (t && !b) added += Cat(" +", op);
      if (b && !t) missing += Cat(" -", op);
    }
    if (added.empty() && missing.empty())
      out << "  matches the built-in gen" << s.ucode_gen << " default roster ("
          << BuiltinRoster(s.ucode_gen).size() << " opcodes)\n";
    else
      out << "  differs from the built-in gen" << s.ucode_gen << " default roster:" << added
          << missing << "\n";
  }
  out << "  entries:\n";
  for (int op = 0; op < 256; ++op) {
    OpcodeEntry e = s.DecodedEntry(static_cast<uint8_t>(op));
    if (!e.enabled()) continue;
    char line[160];
    std::snprintf(line, sizeof line, "    %-28s V=%-12s fast %3u  slow %llu%s\n",
                  OpLabel(op).c_str(), HexLower(e.value).c_str(), e.fast_row,
                  static_cast<unsigned long long>(e.slow_row),
                  s.ucode_gen == 2 && e.slow_row ? " (recorded only)" : "");
    out << line;
  }
}

void PrintDatapath(const DatapathBlock& d, uint32_t index, std::ostream& out) {
  out << "  datapath_table[" << index << "]:";
  for (uint64_t w : d.lanes) out << " " << HexLower(w);
  out << "\n    ";
  if (d.off) {
    out << "off (all zero)";
  } else {
    out << "lanes:";
    for (bool idle : d.idle) out << (idle ? " idle" : " live");
    out << "  pipeline_depth=" << d.pipeline_depth;
  }
  out << "\n";
}

absl::Status PrintOp(const TableSet& s, int op, std::ostream& out) {
  absl::StatusOr<OpDecode> d = DecodeOp(s, static_cast<uint8_t>(op));
  if (!d.ok()) return d.status();
  const OpcodeEntry& e = d->entry;
  out << "\nset " << s.name << ", " << OpLabel(op) << ": V=" << HexLower(e.value);
  if (!e.enabled()) {
    out << " (disabled in this set)\n";
    return absl::OkStatus();
  }
  out << " fast_row=" << e.fast_row << " slow_row=" << e.slow_row << "\n";
  out << "  " << ControlKeyName(s.ucode_gen) << "[" << e.fast_row
      << "]: " << FormatBytes(d->control_bytes) << "\n";
  if (d->gen2) {
    const Gen2ControlRow& r = *d->gen2;
    out << "    lane_modes=" << HexLower(r.lane_mode_word, 4) << " [";
    for (int i = 0; i < 8; ++i) out << (i ? "," : "") << int{r.lane_modes[i]};
    out << "]" << (r.idle ? " (idle: all lanes mode 01)" : "") << " op_select="
        << Hex2(r.op_select) << " pc_imm=" << Hex2(r.pc_imm)
        << " issue_marker=" << FormatBytes(r.issue_marker)
        << " operand_mux=" << FormatBytes(r.operand_mux);
    if (r.high_bytes_nonzero) out << " (bytes 12..15 nonzero)";
    out << "\n";
    out << "  slow index " << e.slow_row << ": recorded only (gen2 has no control_slow_table)\n";
  }
  if (d->fast) {
    const FastControlRow& r = *d->fast;
    out << "    lane_class=" << Hex2(r.lane_class) << " operand_pc=" << Hex2(r.operand_pc)
        << " step_config=" << HexLower(r.step_config, 4)
        << " issue_marker=" << FormatBytes(r.issue_marker) << " step_op=" << Hex2(r.step_op)
        << " high_op=" << Hex2(r.high_op);
    if (r.high_bytes_nonzero) out << " (bytes 8..15 nonzero)";
    out << "\n";
  }
  if (d->slow) {
    const SlowProgram& p = *d->slow;
    out << "  control_slow_table[" << e.slow_row << "]: " << FormatBytes(*d->slow_bytes) << "\n";
    out << "    steps:";
    for (uint16_t st : p.steps) out << " " << HexLower(st, 3);
    out << (p.head_substituted ? " (head substituted)" : "") << " loop_count=" << int{p.loop_count}
        << " (byte " << p.loop_count_byte << ") payload=" << FormatBytes(p.payload);
    if (p.high_bytes_nonzero) out << " (bytes 14..15 nonzero)";
    out << "\n";
    out << "    program: " << kSlowStepCount << " steps x " << (int{p.loop_count} + 1)
        << " iterations = " << p.issues() << " issues\n";
  } else if (s.ucode_gen >= 3) {
    out << "  fast-only (slow_row 0)\n";
  }
  PrintDatapath(d->datapath, e.fast_row, out);
  out << "  issued_steps=" << d->issued_steps << "\n";
  return absl::OkStatus();
}

void PrintDiff(const TableSet& a, const TableSet& b, const SetDiff& d, std::ostream& out) {
  out << "\ndiff " << a.name << " -> " << b.name << ":";
  if (d.empty()) {
    out << " no differences\n";
    return;
  }
  out << "\n";
  out << "  opcode_table entries differing: " << d.entries.size() << "\n";
  for (uint8_t op : d.entries)
    out << "    " << OpLabel(op) << ": " << HexLower(a.Entry(op)) << " -> "
        << HexLower(b.Entry(op)) << "\n";
  auto rows = [&](std::string_view key, const std::vector<uint32_t>& idx, const Blob& x,
                  const Blob& y) {
    out << "  " << key << " rows differing: " << idx.size() << "\n";
    for (uint32_t r : idx) {
      std::span<const uint8_t> rx(x.bytes.data() + r * 16, 16), ry(y.bytes.data() + r * 16, 16);
      out << "    row " << r << ": " << FormatBytes(rx) << " -> " << FormatBytes(ry) << "\n";
    }
  };
  rows(ControlKeyName(a.ucode_gen), d.control_rows, a.control, b.control);
  if (a.ucode_gen >= 3) rows("control_slow_table", d.slow_rows, a.control_slow, b.control_slow);
  out << "  datapath_table blocks differing: " << d.datapath_blocks.size() << "\n";
  for (uint32_t blk : d.datapath_blocks) {
    out << "    block " << blk << ":";
    for (int lane = 0; lane < 8; ++lane) {
      size_t at = size_t{blk} * 64 + size_t(lane) * 8;
      uint64_t wa = 0, wb = 0;
      for (int i = 7; i >= 0; --i) {
        wa = (wa << 8) | a.datapath.bytes[at + i];
        wb = (wb << 8) | b.datapath.bytes[at + i];
      }
      if (wa != wb) out << " lane " << lane << " " << HexLower(wa) << " -> " << HexLower(wb) << ";";
    }
    out << "\n";
  }
}

}  // namespace

int UcodeMain(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::optional<std::string> dir, set_name, diff_a, diff_b;
  std::optional<int> op, gen;
  auto usage = [&](std::string_view msg) {
    err << "dvejit ucode: " << msg << "\n" << "run 'dvejit ucode --help' for usage\n";
    return 2;
  };
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] ? argv[i] : "");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::optional<std::string> inline_value;
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
      }
    }
    auto value = [&](std::string* v) -> bool {
      if (inline_value) {
        *v = *inline_value;
        return true;
      }
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    } else if (a == "--set") {
      std::string v;
      if (!value(&v)) return usage("--set needs a table set name");
      set_name = v;
    } else if (a == "--op") {
      std::string v;
      if (!value(&v)) return usage("--op needs an opcode");
      op = ParseOpcodeArg(v);
      if (!op) return usage(Cat("--op ", v, ": expected an opcode 0..255 (decimal or 0x hex)"));
    } else if (a == "--gen") {
      std::string v;
      if (!value(&v)) return usage("--gen needs a generation");
      gen = ParseUcodeGen(v);
      if (!gen)
        return usage(Cat("--gen ", v,
                         ": expected gen2, gen3, gen4, sunda, cayman, mariana or maverick"));
    } else if (a == "--diff") {
      if (inline_value) return usage("--diff takes two set names: --diff SET_A SET_B");
      if (i + 2 >= args.size()) return usage("--diff needs two set names");
      diff_a = args[++i];
      diff_b = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      return usage(Cat("unknown option ", a));
    } else {
      if (dir) return usage(Cat("one table directory expected, got ", *dir, " and ", a));
      dir = a;
    }
  }
  if (!dir) return usage("missing the table directory DIR");

  absl::StatusOr<TableDir> tables = ReadTableDir(*dir, gen);
  if (!tables.ok()) {
    err << "dvejit ucode: " << Sv(tables.status().message()) << "\n";
    return 1;
  }
  const TableDir& d = *tables;
  auto find = [&](const std::string& name) { return d.Find(name); };
  std::vector<const TableSet*> shown;
  if (set_name) {
    const TableSet* s = find(*set_name);
    if (!s)
      return usage(Cat("no table set \"", *set_name, "\" in ", d.path, " (sets: ", SetNames(d), ")"));
    shown.push_back(s);
  } else {
    for (const TableSet& s : d.sets) shown.push_back(&s);
  }
  const TableSet* da = nullptr;
  const TableSet* db = nullptr;
  if (diff_a) {
    da = find(*diff_a);
    db = find(*diff_b);
    for (const auto& [name, s] : {std::pair{*diff_a, da}, std::pair{*diff_b, db}})
      if (!s)
        return usage(Cat("no table set \"", name, "\" in ", d.path, " (sets: ", SetNames(d), ")"));
  }

  PrintHeader(d, out);
  if (op) {
    for (const TableSet* s : shown) {
      absl::Status st = PrintOp(*s, *op, out);
      if (!st.ok()) {
        err << "dvejit ucode: " << Sv(st.message()) << "\n";
        return 1;
      }
    }
  }
  if (da) {
    absl::StatusOr<SetDiff> diff = DiffSets(*da, *db);
    if (!diff.ok()) {
      err << "dvejit ucode: " << Sv(diff.status().message()) << "\n";
      return 1;
    }
    PrintDiff(*da, *db, *diff, out);
  }
  if (!op && !da)
    for (const TableSet* s : shown) PrintSetListing(*s, out);
  return 0;
}

}  // namespace dvejit
