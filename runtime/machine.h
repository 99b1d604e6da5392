// Machine: one emulated DVE of a given generation — SBUF, PSUM, registers, Parameter RAM,
// per-lane state and events — with the host API to read and write it. Owns all mutable state.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "frontend/address.h"
#include "frontend/isa.h"
#include "kernels/state.h"

namespace dvejit {

class Machine {
 public:
  explicit Machine(Generation gen = Generation::Cayman);
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  Generation gen() const { return state_.gen; }
  // Everything back to zero (lane idx to 0xFFFFFFFF); memory is reused, not reallocated.
  void Reset();
  // Parameter RAM entry k = fp32(1/(k+1)), round to nearest even (semantics.md §1).
  void PreloadReciprocals();

  // Host access to a region: `partitions` rows from `first_partition`, `bytes` bytes each from
  // `offset`. Fails (changing nothing) when any byte lies outside the partitions' active bytes.
  absl::Status Write(Space space, uint32_t first_partition, uint32_t partitions, uint32_t offset,
                     std::span<const uint8_t> data, uint32_t bytes_per_partition);
  absl::Status Read(Space space, uint32_t first_partition, uint32_t partitions, uint32_t offset,
                    uint32_t bytes_per_partition, std::span<uint8_t> out) const;
  // Zero-copy view of one partition's active bytes (nullptr-free span; empty when absent).
  absl::StatusOr<std::span<uint8_t>> PartitionBytes(Space space, uint32_t partition);
  uint32_t ActiveBytes(Space space) const;
  uint32_t Pitch(Space space) const;  // host bytes between consecutive partitions

  absl::Status SetRegister(int index, uint32_t value);
  absl::StatusOr<uint32_t> GetRegister(int index) const;
  absl::Status SetParamRam(int index, float value);
  absl::StatusOr<float> GetParamRam(int index) const;

  MachineState& state() { return state_; }
  const MachineState& state() const { return state_; }

 private:
  absl::Status CheckRegion(Space space, uint32_t first_partition, uint32_t partitions,
                           uint64_t offset, uint64_t bytes) const;

  MachineState state_;
  struct Region;  // an mmap'd block with MADV_HUGEPAGE
  std::unique_ptr<Region> sbuf_, psum_;
};

}  // namespace dvejit
