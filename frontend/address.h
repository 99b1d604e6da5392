// ADDR4 words (encoding.md §2): their addressing mode, and where an immediate address points
// (space, partition, offset) on a given generation.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "frontend/isa.h"

namespace dvejit {

enum class Space : uint8_t { Sbuf, Psum };
std::string_view SpaceName(Space s);

enum class AddrMode : uint8_t {
  Immediate,          // marker 0x00..0x1F
  Register,           // marker 0x80, well formed (register < 64, bytes 1..2 zero)
  ShapeRegister,      // 0x40
  AddrShapeRegister,  // 0xC0
  Indirect,           // 0x20, 0xA0
  Invalid,            // any other marker, or a malformed register form
};
AddrMode AddrModeOf(uint32_t word);
inline bool ShapeFromRegister(uint32_t word) {
  const AddrMode m = AddrModeOf(word);
  return m == AddrMode::ShapeRegister || m == AddrMode::AddrShapeRegister;
}
inline uint8_t AddrRegister(uint32_t word) { return word & 0xFF; }

struct Place {
  Space space;
  uint32_t partition;
  uint32_t offset;  // within the partition
};
// Where an immediate-form address points; nullopt outside SBUF and PSUM.
std::optional<Place> ResolveImmediate(uint32_t word, Generation g);
uint32_t ActiveBytes(Space s, Generation g);
uint32_t PartitionStride(Space s, Generation g);
// Bytes between consecutive partitions in the emulator's host memory: the active bytes plus one
// cache line. The active sizes are multiples of 4 KiB, so unpadded rows of consecutive
// partitions share one L1 set, and the 16-32 rows a channel block loads together evicted each
// other (channel-major code ran 1.5x slower).
uint32_t HostPitch(Space s, Generation g);
// The immediate ADDR4 word for a place (no range checks).
uint32_t MakeAddress(Space s, uint32_t partition, uint32_t offset, Generation g);
inline uint32_t MakeRegisterAddress(uint8_t reg) { return 0x80000000u | reg; }

}  // namespace dvejit
