// Typed views of the 64-byte DVE records (encoding.md §7). Each struct is a trivially copyable,
// packed mirror of one layout; field offsets and sizes are checked at compile time in
// structs_check.cc against the field table (fields.def).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dvejit {

#pragma pack(push, 1)
struct Header {
  uint8_t opcode;
  uint8_t inst_word_len;
  uint8_t debug_cmd;
  uint8_t debug_hint;
};
struct Events {
  uint8_t wait_mode;
  uint8_t wait_idx;
  uint8_t update_mode;
  uint8_t update_idx;
  uint32_t semaphore_value;
};
// A tensor access pattern with D dimensions; dimension 0 innermost (encoding.md §3).
template <int D>
struct TensorPattern {
  uint32_t addr;  // ADDR4
  int16_t step[D];
  uint16_t num[D];
  static constexpr int kDims = D;
};
using Tensor1D = TensorPattern<1>;
using Tensor2D = TensorPattern<2>;
using Tensor3D = TensorPattern<3>;
using Tensor4D = TensorPattern<4>;

struct S4D2_BN {
  Header header; Events events;
  Tensor4D src;
  uint8_t in_dtype, out_dtype, num_active_channels;
  uint8_t reserved0[5];
  float even_count, odd_count;
  Tensor2D dst;
  uint8_t reserved1[4];
};
struct S3S3D1_BN {
  Header header; Events events;
  uint32_t imm0;
  Tensor3D src0, src1;
  Tensor1D dst;
  uint32_t imm1;
  uint8_t in_dtypes, immediate_dtype, out_dtype, num_active_channels;
};
struct S3S3D1_BN2 {
  Header header; Events events;
  uint32_t imm0;
  Tensor3D src0, src1;
  Tensor1D dst;
  uint32_t imm1;
  uint8_t in_dtypes, imm_out_dtypes, imm_srcs, num_active_channels;
};
struct S2_BN {
  Header header; Events events;
  uint8_t reserved0[4];
  Tensor2D src;
  uint32_t imm1;
  uint8_t dtype;
  uint8_t reserved1;
  uint8_t num_active_channels;
  uint8_t reserved2[9];
  uint32_t imm0_ptr;
  uint8_t imm0_src;
  uint8_t reserved3[15];
};
struct S2_BNPL2 {
  Header header; Events events;
  Tensor2D src;
  uint8_t reserved0[4];
  float element_count;
  uint8_t src_dtype, immediate_dtype, num_active_channels;
  uint8_t reserved1[5];
  uint32_t imm0_ptr, imm1_ptr;
  uint8_t imm0_src, imm1_src;
  uint8_t reserved2[14];
};
struct S3S3D3_TT {
  Header header; Events events;
  uint8_t in_dtypes, out_dtype, op, num_active_channels;
  Tensor3D src0, src1, dst;
};
struct S3D3_TS {
  Header header; Events events;
  uint8_t accumulator_cmd;
  uint8_t reserved0[3];
  Tensor3D src;
  uint8_t in_dtype, out_dtype, num_active_channels, imm0_src, op0, op1, reverse_operands, imm1_src;
  uint32_t imm0, imm1;
  Tensor3D dst;
};
struct S4D4_TSM {
  Header header; Events events;
  Tensor4D src;
  uint8_t in_dtype, out_dtype, num_active_channels;
  uint8_t reserved0;
  uint8_t op, op_dim, reverse_operands;
  uint8_t reserved1[5];
  Tensor4D dst;
};
struct S4D4_MR {
  Header header; Events events;
  Tensor4D src;
  uint8_t in_dtype, out_dtype, num_active_channels;
  uint8_t reserved0[5];
  float replacement;
  Tensor4D dst;
};
struct S4D4_TR {
  Header header; Events events;
  Tensor4D src;
  uint8_t in_dtype, out_dtype, num_active_channels, negated, op, op_dim, mask_enable;
  uint8_t reserved0[5];
  Tensor4D dst;
};
struct D4_MR {
  Header header; Events events;
  uint8_t reserved0[16];
  uint32_t dst_element_count;
  uint8_t dtype;
  uint8_t reserved1;
  uint8_t num_active_channels;
  uint8_t reserved2;
  uint8_t serialization_mode;
  uint8_t reserved3[3];
  uint32_t set_value;
  Tensor4D dst;
};
struct D1_RD {
  Header header; Events events;
  uint8_t reserved0[16];
  uint32_t dst_element_count;
  uint8_t dtype, negated, num_active_channels;
  uint8_t reserved1[9];
  Tensor1D dst;
  uint8_t reserved2[12];
};
struct CTRL_IM {
  Header header; Events events;
  uint16_t param_ram_offset;
  uint8_t imm_ptr_select;
  uint8_t reserved0[17];
  float immediate[8];
};
#pragma pack(pop)

// Reads a struct view out of a 64-byte record (no aliasing of the raw bytes).
template <typename S>
S ViewAs(const uint8_t* record) {
  static_assert(std::is_trivially_copyable_v<S> && sizeof(S) <= 64);
  S s;
  std::memcpy(&s, record, sizeof(S));
  return s;
}
template <typename S>
void StoreTo(const S& s, uint8_t* record) {
  static_assert(sizeof(S) == 64);
  std::memcpy(record, &s, sizeof(S));
}

}  // namespace dvejit
