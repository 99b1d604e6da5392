// SHA-256 (FIPS 180-4), small and dependency-free: used to recognise shipped microcode blobs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace dvejit {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void Update(std::span<const uint8_t> data);
  Sha256Digest Finish();  // the object is spent afterwards

 private:
  void Block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_;
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

Sha256Digest Sha256Of(std::span<const uint8_t> data);
std::string Sha256Hex(const Sha256Digest& d);  // 64 lowercase hex digits

}  // namespace dvejit
