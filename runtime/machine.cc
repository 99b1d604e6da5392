#include "runtime/machine.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

#include "frontend/diag.h"
#include "frontend/strcat.h"

namespace dvejit {

// Large regions are mapped once per Machine and reused: on these VMs the first touch of a 4 KiB
// page costs ~11 µs, so the memory asks for transparent huge pages and is never reallocated.
struct Machine::Region {
  uint8_t* data = nullptr;
  size_t size = 0;
  explicit Region(size_t bytes) : size(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);
    data = static_cast<uint8_t*>(p);
  }
  ~Region() { munmap(data, size); }
  void Zero() { std::memset(data, 0, size); }
};

namespace {
absl::Status UsageError(std::string_view field, std::string_view value, std::string_view expected) {
  return ToStatus(MakeViolation(ErrorKind::Usage, "", field, value, expected), Location{});
}
}  // namespace

Machine::Machine(Generation gen) {
  state_.gen = gen;
  const Geometry& geo = GeometryOf(gen);
  state_.sbuf_pitch = HostPitch(Space::Sbuf, gen);
  state_.psum_pitch = HostPitch(Space::Psum, gen);
  sbuf_ = std::make_unique<Region>(static_cast<size_t>(state_.sbuf_pitch) * kPartitions);
  state_.sbuf = sbuf_->data;
  if (geo.psum_active_bytes != 0) {
    psum_ = std::make_unique<Region>(static_cast<size_t>(state_.psum_pitch) * kPartitions);
    state_.psum = psum_->data;
  }
}

Machine::~Machine() = default;

void Machine::Reset() {
  sbuf_->Zero();
  if (psum_) psum_->Zero();
  std::memset(state_.regs, 0, sizeof state_.regs);
  std::memset(state_.pram, 0, sizeof state_.pram);
  for (LaneState& l : state_.lanes) l = LaneState{};
  std::memset(state_.semaphores, 0, sizeof state_.semaphores);
  std::memset(state_.events, 0, sizeof state_.events);
}

void Machine::PreloadReciprocals() {
  for (int k = 0; k < kParamRamEntries; ++k)
    state_.pram[k] = static_cast<float>(1.0 / static_cast<double>(k + 1));
}

uint32_t Machine::ActiveBytes(Space space) const { return dvejit::ActiveBytes(space, state_.gen); }
uint32_t Machine::Pitch(Space space) const {
  return space == Space::Sbuf ? state_.sbuf_pitch : state_.psum_pitch;
}

absl::Status Machine::CheckRegion(Space space, uint32_t first, uint32_t partitions,
                                  uint64_t offset, uint64_t bytes) const {
  if (space == Space::Psum && state_.psum == nullptr)
    return UsageError("space", "psum", Cat("sbuf (", GenerationName(state_.gen), " has no PSUM)"));
  if (partitions == 0 || static_cast<uint64_t>(first) + partitions > kPartitions)
    return UsageError("partitions", Cat(first, "..", static_cast<uint64_t>(first) + partitions),
                      "a non-empty range inside 0..128");
  const uint32_t active = ActiveBytes(space);
  if (offset + bytes > active)
    return UsageError("bytes", Cat("[", offset, ", ", offset + bytes, ")"),
                      Cat("inside the ", active, " active bytes of a ", SpaceName(space),
                          " partition"));
  return absl::OkStatus();
}

absl::Status Machine::Write(Space space, uint32_t first, uint32_t partitions, uint32_t offset,
                            std::span<const uint8_t> data, uint32_t bytes_per_partition) {
  if (auto s = CheckRegion(space, first, partitions, offset, bytes_per_partition); !s.ok())
    return s;
  if (data.size() != static_cast<size_t>(bytes_per_partition) * partitions)
    return UsageError("data size", Cat(data.size()),
                      Cat(partitions, " x ", bytes_per_partition, " bytes"));
  for (uint32_t r = 0; r < partitions; ++r)
    std::memcpy(state_.PartitionBase(space, first + r) + offset,
                data.data() + static_cast<size_t>(r) * bytes_per_partition, bytes_per_partition);
  return absl::OkStatus();
}

absl::Status Machine::Read(Space space, uint32_t first, uint32_t partitions, uint32_t offset,
                           uint32_t bytes_per_partition, std::span<uint8_t> out) const {
  if (auto s = CheckRegion(space, first, partitions, offset, bytes_per_partition); !s.ok())
    return s;
  if (out.size() != static_cast<size_t>(bytes_per_partition) * partitions)
    return UsageError("output size", Cat(out.size()),
                      Cat(partitions, " x ", bytes_per_partition, " bytes"));
  for (uint32_t r = 0; r < partitions; ++r)
    std::memcpy(out.data() + static_cast<size_t>(r) * bytes_per_partition,
                state_.PartitionBase(space, first + r) + offset, bytes_per_partition);
  return absl::OkStatus();
}

absl::StatusOr<std::span<uint8_t>> Machine::PartitionBytes(Space space, uint32_t partition) {
  if (auto s = CheckRegion(space, partition, 1, 0, 0); !s.ok()) return s;
  return std::span<uint8_t>(state_.PartitionBase(space, partition), ActiveBytes(space));
}

absl::Status Machine::SetRegister(int index, uint32_t value) {
  if (index < 0 || index >= kRegisters)
    return UsageError("register", Cat(index), "0..63");
  state_.regs[index] = value;
  return absl::OkStatus();
}
absl::StatusOr<uint32_t> Machine::GetRegister(int index) const {
  if (index < 0 || index >= kRegisters) return UsageError("register", Cat(index), "0..63");
  return state_.regs[index];
}
absl::Status Machine::SetParamRam(int index, float value) {
  if (index < 0 || index >= kParamRamEntries)
    return UsageError("Parameter RAM entry", Cat(index), "0..255");
  state_.pram[index] = value;
  return absl::OkStatus();
}
absl::StatusOr<float> Machine::GetParamRam(int index) const {
  if (index < 0 || index >= kParamRamEntries)
    return UsageError("Parameter RAM entry", Cat(index), "0..255");
  return state_.pram[index];
}

}  // namespace dvejit
