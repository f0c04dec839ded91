// Sha256: SHA-256 (FIPS 180-4) of a whole message, and a constant-time digest compare. ACL
// users keep only the SHA-256 of their passwords, as Redis does (ACL GETUSER shows them in hex).
// Thread: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dashkv {

using Sha256Digest = std::array<uint8_t, 32>;

// Returns the SHA-256 digest of `data`.
Sha256Digest Sha256(std::string_view data);

// Returns the digest as 64 lowercase hex characters.
std::string Sha256Hex(const Sha256Digest& digest);

// Parses 64 lowercase hex characters into `digest`; returns false for any other length or
// character (Redis's '#' and '!' rules refuse them).
bool ParseSha256Hex(std::string_view hex, Sha256Digest* digest);

// Returns whether a == b, in a time that does not depend on where they differ.
bool DigestsEqual(const Sha256Digest& a, const Sha256Digest& b);

}  // namespace dashkv
