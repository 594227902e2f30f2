// SHA-256 (FIPS 180-4), fed in pieces: a model's weights are hashed as they stream in, where
// WebCrypto's digest() would need the whole file in memory at once.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace glassbox {

class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> bytes);
  // The digest of everything given so far, as 64 lower-case hexadecimal digits (the state is not
  // changed: more may be given after).
  std::string hex() const;

 private:
  void compress(const std::uint8_t* block);   // one 64-byte block into state_
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> pending_{};   // the bytes of an incomplete block
  std::size_t pending_size_ = 0;
  std::uint64_t length_ = 0;   // bytes given
};

}   // namespace glassbox
