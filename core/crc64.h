// Crc64: the CRC-64 that Redis uses for RDB files and DUMP payloads ("CRC-64/Jones", reveng's
// CRC-64/REDIS): polynomial 0xad93d23594c935a9, reflected input and output, init 0, xorout 0.
// Check value: Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
// Thread: pure functions (the tables are constants; the CPU check runs once, thread-safely).
#pragma once

#include <cstdint>
#include <string_view>

namespace dashkv {

// Returns the CRC of `data` continuing from `crc` (0 to start a new checksum), so a stream
// can be checksummed piece by piece: Crc64(Crc64(0, a), b) == Crc64(0, a + b).
// Performance: on x86-64 CPUs with PCLMULQDQ (checked at run time) buffers of 32 bytes or more
// are folded with carry-less multiplication (28 GB/s vs 1.85 GB/s for slice-by-8 on 1 MiB here,
// see bench/core/CRC64_RESULTS.md); otherwise slice-by-8, about 1 byte per cycle.
uint64_t Crc64(uint64_t crc, std::string_view data);

// Returns the CRC of a + b from crc_a = Crc64(0, a), crc_b = Crc64(0, b) and len_b = b.size(),
// so independent pieces can be checksummed on different threads and combined in order.
// Costs one 64-bit multiplication modulo the polynomial (up to 64 shift-xor steps) per set bit
// of len_b, independent of the data: 0.1 us for 128 KiB, 1.3 us for 131071 bytes.
uint64_t Crc64Combine(uint64_t crc_a, uint64_t crc_b, uint64_t len_b);

namespace detail {

// The implementations behind Crc64, for tests and benchmarks.
// Slice-by-8 tables: any CPU.
uint64_t Crc64SliceBy8(uint64_t crc, std::string_view data);
// Whether this CPU can run Crc64Clmul (x86-64 with PCLMULQDQ and SSE4.1).
bool Crc64HasClmul();
// Carry-less multiplication folding (any length; below 16 bytes it is slice-by-8).
// REQUIRES: Crc64HasClmul().
uint64_t Crc64Clmul(uint64_t crc, std::string_view data);

}  // namespace detail

}  // namespace dashkv
