#include "frontend/fields.h"

#include <array>
#include <cstddef>

#include "frontend/structs.h"

namespace dvejit {

// Compile-time check of every field of the table against the packed structs of structs.h: the
// offset, the size, and sizeof == 64 for every layout.
#define DVE_FIELD(strct, fname, off, sz, kind, srcat)                                   \
  static_assert(offsetof(strct, fname) == (off), #strct "." #fname " offset");          \
  static_assert(sizeof(strct::fname) == (sz), #strct "." #fname " size");
#include "frontend/fields.def"

static_assert(sizeof(S4D2_BN) == 64 && sizeof(S3S3D1_BN) == 64 && sizeof(S3S3D1_BN2) == 64 &&
              sizeof(S2_BN) == 64 && sizeof(S2_BNPL2) == 64 && sizeof(S3S3D3_TT) == 64 &&
              sizeof(S3D3_TS) == 64 && sizeof(S4D4_TSM) == 64 && sizeof(S4D4_MR) == 64 &&
              sizeof(S4D4_TR) == 64 && sizeof(D4_MR) == 64 && sizeof(D1_RD) == 64 &&
              sizeof(CTRL_IM) == 64);
static_assert(offsetof(Header, inst_word_len) == 1 && sizeof(Header) == 4 && sizeof(Events) == 8);
static_assert(offsetof(S4D2_BN, events) == 4 && offsetof(Events, semaphore_value) == 4);
static_assert(sizeof(Tensor1D) == 8 && sizeof(Tensor2D) == 12 && sizeof(Tensor3D) == 16 &&
              sizeof(Tensor4D) == 20 && offsetof(Tensor3D, num) == 10);

namespace {

struct TableRow {
  StructKind strct;
  FieldInfo info;
};
constexpr TableRow kTable[] = {
#define DVE_FIELD(strct, fname, off, sz, kind, srcat) \
  {StructKind::strct, FieldInfo{#fname, off, sz, FieldKind::kind, ImmSrcAt::srcat}},
#include "frontend/fields.def"
};
constexpr int kNumStructs = static_cast<int>(StructKind::CTRL_IM) + 1;

// The table is grouped by struct; these are the per-struct ranges.
struct Ranges {
  std::array<FieldInfo, std::size(kTable)> fields{};
  std::array<int, kNumStructs> begin{}, end{};
  constexpr Ranges() {
    int n = 0;
    for (int s = 0; s < kNumStructs; ++s) {
      begin[s] = n;
      for (const TableRow& row : kTable)
        if (static_cast<int>(row.strct) == s) fields[n++] = row.info;
      end[s] = n;
    }
  }
};
constexpr Ranges kRanges;

}  // namespace

std::span<const FieldInfo> FieldsOf(StructKind s) {
  const int i = static_cast<int>(s);
  return {kRanges.fields.data() + kRanges.begin[i],
          static_cast<size_t>(kRanges.end[i] - kRanges.begin[i])};
}

const FieldInfo* FindField(StructKind s, std::string_view name) {
  for (const FieldInfo& f : FieldsOf(s))
    if (f.name == name) return &f;
  return nullptr;
}

uint8_t ImmSourceOf(const FieldInfo& f, const uint8_t* record) {
  switch (f.src) {
    case ImmSrcAt::SrcNone:
    case ImmSrcAt::SrcAlwaysPointer: return static_cast<uint8_t>(ImmSrc::Pointer);
    case ImmSrcAt::SrcByte35: return record[35];
    case ImmSrcAt::SrcByte39: return record[39];
    case ImmSrcAt::SrcByte48: return record[48];
    case ImmSrcAt::SrcByte49: return record[49];
    case ImmSrcAt::SrcByte62Low: return record[62] & 0xF;
    case ImmSrcAt::SrcByte62High: return record[62] >> 4;
  }
  return 0xFF;
}

int TensorDims(FieldKind k) {
  switch (k) {
    case FieldKind::Tensor1D: return 1;
    case FieldKind::Tensor2D: return 2;
    case FieldKind::Tensor3D: return 3;
    case FieldKind::Tensor4D: return 4;
    default: return 0;
  }
}

}  // namespace dvejit
