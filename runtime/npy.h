// Reading and writing NumPy .npy files (format versions 1.0-3.0) for the CLI's --load/--dump:
// arrays as raw little-endian bytes in C order plus shape and item size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace dvejit {

struct NpyArray {
  std::string descr;           // e.g. "<f4", "|u1"
  int itemsize = 0;
  std::vector<int64_t> shape;  // C order
  std::vector<uint8_t> data;   // little-endian, C order
  int64_t Elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// Parses a .npy image; Fortran-ordered arrays are reordered to C order and big-endian items
// swapped to little-endian. Object arrays and malformed headers are errors.
absl::StatusOr<NpyArray> ParseNpy(const std::vector<uint8_t>& bytes);
absl::StatusOr<NpyArray> ReadNpyFile(const std::string& path);
std::vector<uint8_t> SerializeNpy(const NpyArray& a);
absl::Status WriteNpyFile(const std::string& path, const NpyArray& a);

absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, size_t max_bytes);

}  // namespace dvejit
