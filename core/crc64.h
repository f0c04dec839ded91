// Crc64: the CRC-64 that Redis uses for RDB files and DUMP payloads ("CRC-64/Jones", reveng's
// CRC-64/REDIS): polynomial 0xad93d23594c935a9, reflected input and output, init 0, xorout 0.
// Check value: Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
// Thread: pure function (the tables are built once, at static initialization).
#pragma once

#include <cstdint>
#include <string_view>

namespace dashkv {

// Returns the CRC of `data` continuing from `crc` (0 to start a new checksum), so a stream
// can be checksummed piece by piece: Crc64(Crc64(0, a), b) == Crc64(0, a + b).
// Slice-by-8: about 1 byte per cycle.
uint64_t Crc64(uint64_t crc, std::string_view data);

}  // namespace dashkv
