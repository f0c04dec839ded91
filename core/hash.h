// Fixed 64-bit hash of byte strings: the same value on every run, machine and thread, so that a
// key's shard and its place in a snapshot do not depend on process state (absl::Hash is salted);
// and its keyed form, with a random key per table, for the collections whose members clients pick.
// Thread: pure functions, but NewHashKey (per-thread state).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace dashkv {

namespace detail {

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Folded 64x64->128 multiply: the mixing step.
inline uint64_t Fold(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

inline constexpr uint64_t kK0 = 0x9e3779b97f4a7c15ULL;
inline constexpr uint64_t kK1 = 0xc2b2ae3d27d4eb4fULL;
inline constexpr uint64_t kK2 = 0x165667b19e3779f9ULL;

}  // namespace detail

// kTableSeed seeds the hash of a key (HashBytes): the Dashtable takes its directory index,
// bucket and fingerprint from it. kShardSeed remixes that same hash into the key's shard
// (ShardSet::ShardOfTagHash), so the shard does not share bits with the table's choices, or a
// shard would only ever use part of its buckets.
inline constexpr uint64_t kTableSeed = 0x2545f4914f6cdd1dULL;
inline constexpr uint64_t kShardSeed = 0x6a09e667f3bcc909ULL;

namespace detail {

// The body of HashBytes and KeyedHashBytes. `key` is XORed into the operand of every multiply that
// the input alone controls; 0 leaves HashBytes as it always was.
inline uint64_t HashBytesImpl(std::string_view s, uint64_t seed, uint64_t key) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = seed ^ Fold(n ^ kK0, kK1);
  while (n > 16) {
    h = Fold(Load64(p) ^ kK1 ^ key, Load64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0, b = 0;
  if (n > 8) {
    a = Load64(p);
    b = Load64(p + n - 8);  // overlapping tail read
  } else if (n >= 4) {
    uint32_t x, y;
    std::memcpy(&x, p, 4);
    std::memcpy(&y, p + n - 4, 4);
    a = x;
    b = y;
  } else if (n > 0) {
    a = (uint64_t(uint8_t(p[0])) << 16) | (uint64_t(uint8_t(p[n >> 1])) << 8) | uint8_t(p[n - 1]);
  }
  h = Fold(a ^ kK2 ^ h, b ^ kK1 ^ key);
  return Fold(h ^ kK0, s.size() ^ kK2);
}

}  // namespace detail

// Returns a 64-bit hash of `s`. Mixes 16 bytes per step with a folded 128-bit multiply.
// Inputs can be crafted to collide under every seed (those that zero one multiply operand, e.g.
// any 9..16 bytes ending in the 8 bytes of kK1): a table of client-chosen members whose probe or
// chain length is unbounded uses KeyedHashBytes instead.
inline uint64_t HashBytes(std::string_view s, uint64_t seed = kTableSeed) {
  return detail::HashBytesImpl(s, seed, 0);
}

// Returns a 64-bit hash of `s` under a secret `key` (from NewHashKey()): the hash of the
// collections behind sets, sorted sets and hashes. Costs one XOR per 16 bytes (and one more) over
// HashBytes. The key enters every multiply, so no input zeroes an operand without knowing it:
// members crafted to collide, or sent in the iteration order of another table, collide or cluster
// only by chance.
inline uint64_t KeyedHashBytes(std::string_view s, uint64_t key) {
  return detail::HashBytesImpl(s, key, key);
}

// Returns a fresh random 64-bit key for one table's KeyedHashBytes. Each call draws the next
// output of a generator seeded per thread from std::random_device, so two tables, of this
// process or another, never share a key but by chance. Thread-safe: per-thread state.
uint64_t NewHashKey();

// Returns the 64-bit hash of an integer (for tests and integer-keyed tables).
inline uint64_t HashU64(uint64_t v, uint64_t seed = kTableSeed) {
  using namespace detail;
  return Fold(v ^ seed ^ kK0, kK1 ^ (v >> 32));
}

}  // namespace dashkv
