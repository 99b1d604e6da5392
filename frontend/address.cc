#include "frontend/address.h"

namespace dvejit {

std::string_view SpaceName(Space s) { return s == Space::Sbuf ? "sbuf" : "psum"; }

AddrMode AddrModeOf(uint32_t word) {
  const uint8_t marker = word >> 24;
  if (marker <= 0x1F) return AddrMode::Immediate;
  switch (marker) {
    case 0x80:
      return ((word & 0x00FFFF00u) == 0 && (word & 0xFF) < kRegisters) ? AddrMode::Register
                                                                      : AddrMode::Invalid;
    case 0x40: return AddrMode::ShapeRegister;
    case 0xC0: return AddrMode::AddrShapeRegister;
    case 0x20:
    case 0xA0: return AddrMode::Indirect;
    default: return AddrMode::Invalid;
  }
}

std::optional<Place> ResolveImmediate(uint32_t word, Generation g) {
  if (AddrModeOf(word) != AddrMode::Immediate) return std::nullopt;
  const uint32_t a = word & 0x1FFFFFFFu;
  const Geometry& geo = GeometryOf(g);
  if (a < geo.sbuf_size)
    return Place{Space::Sbuf, a / geo.sbuf_partition_stride, a % geo.sbuf_partition_stride};
  if (geo.psum_size != 0 && a >= kPsumBase && a - kPsumBase < geo.psum_size)
    return Place{Space::Psum, (a - kPsumBase) / geo.psum_partition_stride,
                 (a - kPsumBase) % geo.psum_partition_stride};
  return std::nullopt;
}

uint32_t ActiveBytes(Space s, Generation g) {
  const Geometry& geo = GeometryOf(g);
  return s == Space::Sbuf ? geo.sbuf_active_bytes : geo.psum_active_bytes;
}

uint32_t HostPitch(Space s, Generation g) {
  const uint32_t active = ActiveBytes(s, g);
  return active == 0 ? 0 : active + 64;
}

uint32_t PartitionStride(Space s, Generation g) {
  const Geometry& geo = GeometryOf(g);
  return s == Space::Sbuf ? geo.sbuf_partition_stride : geo.psum_partition_stride;
}

uint32_t MakeAddress(Space s, uint32_t partition, uint32_t offset, Generation g) {
  const uint32_t base = s == Space::Sbuf ? 0 : kPsumBase;
  return base + partition * PartitionStride(s, g) + offset;
}

}  // namespace dvejit
