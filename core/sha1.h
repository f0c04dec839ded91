// Sha1: SHA-1 (FIPS 180-4) message digest, incremental or one-shot. Redis names scripts by the
// lowercase hex SHA-1 of their body (EVALSHA, SCRIPT LOAD) and exposes it to scripts as
// redis.sha1hex. Not for security: SHA-1 is broken for collision resistance.
// Thread: a Sha1 object is used by one thread at a time; the free functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dashkv {

class Sha1 {
 public:
  using Digest = std::array<uint8_t, 20>;

  Sha1() { Reset(); }

  // Starts a new message, forgetting any data already added.
  void Reset();

  // Appends `data` to the message. Update(a); Update(b) equals Update(a + b).
  void Update(std::string_view data);

  // Returns the digest of everything added since the last Reset. The object is left reset.
  Digest Finish();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 5> h_;
  uint8_t buf_[64];
  size_t buf_len_;      // bytes waiting in buf_, always < 64
  uint64_t total_len_;  // message length in bytes so far
};

// Returns the SHA-1 digest of `data`.
Sha1::Digest Sha1Digest(std::string_view data);

// Returns the digest of `data` as 40 lowercase hex characters: Redis's script SHA.
std::string Sha1Hex(std::string_view data);

}  // namespace dashkv
