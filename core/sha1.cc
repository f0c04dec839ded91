#include "core/sha1.h"

#include <algorithm>
#include <cstring>

namespace dashkv {
namespace {

inline uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

inline uint32_t LoadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

void Sha1::Reset() {
  h_ = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  buf_len_ = 0;
  total_len_ = 0;
}

// One 64-byte block (FIPS 180-4 §6.1.2), with the 80-word schedule kept as a 16-word ring.
void Sha1::Compress(const uint8_t* block) {
  uint32_t w[16];
  for (int i = 0; i < 16; ++i) w[i] = LoadBigEndian32(block + 4 * i);
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
  for (int t = 0; t < 80; ++t) {
    if (t >= 16) {
      w[t & 15] = Rotl(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^ w[(t - 14) & 15] ^ w[t & 15], 1);
    }
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    uint32_t tmp = Rotl(a, 5) + f + e + k + w[t & 15];
    e = d;
    d = c;
    c = Rotl(b, 30);
    b = a;
    a = tmp;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
}

void Sha1::Update(std::string_view data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  total_len_ += n;
  if (buf_len_ > 0) {
    size_t take = std::min(n, sizeof(buf_) - buf_len_);
    std::memcpy(buf_ + buf_len_, p, take);
    buf_len_ += take;
    p += take;
    n -= take;
    if (buf_len_ < sizeof(buf_)) return;
    Compress(buf_);
    buf_len_ = 0;
  }
  for (; n >= 64; p += 64, n -= 64) Compress(p);
  std::memcpy(buf_, p, n);
  buf_len_ = n;
}

Sha1::Digest Sha1::Finish() {
  // Padding: 0x80, zeros up to 56 mod 64, then the bit length as a 64-bit big-endian number.
  uint64_t bit_len = total_len_ * 8;
  uint8_t pad[72] = {0x80};
  size_t pad_len = (buf_len_ < 56 ? 56 : 120) - buf_len_;
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = static_cast<uint8_t>(bit_len >> (56 - 8 * i));
  Update(std::string_view(reinterpret_cast<const char*>(pad), pad_len + 8));
  Digest out;
  for (int i = 0; i < 5; ++i) {
    out[4 * i] = static_cast<uint8_t>(h_[i] >> 24);
    out[4 * i + 1] = static_cast<uint8_t>(h_[i] >> 16);
    out[4 * i + 2] = static_cast<uint8_t>(h_[i] >> 8);
    out[4 * i + 3] = static_cast<uint8_t>(h_[i]);
  }
  Reset();
  return out;
}

Sha1::Digest Sha1Digest(std::string_view data) {
  Sha1 sha;
  sha.Update(data);
  return sha.Finish();
}

std::string Sha1Hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  Sha1::Digest d = Sha1Digest(data);
  std::string out(40, '\0');
  for (size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return out;
}

}  // namespace dashkv
