// LZF: the byte-oriented LZ77 compression of liblzf 3.x, which Redis uses for RDB strings
// (the C3 string encoding). Written from the format description in shared/PERSISTENCE.md.
// Thread: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dashkv {

// Design
//   A stream of chunks, each starting with a control byte c:
//     c < 32        literal run: the next c+1 (1..32) bytes are copied to the output.
//     c >= 32       back-reference: len = c >> 5 (1..6; 7 means "add the next byte"), then
//                   off = ((c & 0x1f) << 8) | next byte; copies len+2 bytes (3..264) from
//                   `off + 1` bytes (1..8192) before the output position, byte by byte (the
//                   source may overlap the bytes being written: "aaaa" has distance 1).

// Decompresses `in` into out[0, out_len). Returns the number of bytes produced, or 0 when the
// stream is malformed (a chunk cut short, a reference before the output's start) or would
// produce more than out_len bytes. Never reads outside `in` or writes outside `out`.
size_t LzfDecompress(std::string_view in, char* out, size_t out_len);

// Returns the number of bytes `in` decompresses to, or 0 when it is malformed (as
// LzfDecompress would find it), without writing anything: a loader checks a claimed size
// against it before reserving memory for the output. O(in.size()).
size_t LzfDecompressedSize(std::string_view in);

// Compresses `in` into out[0, out_len). Returns the compressed size, or 0 when it does not fit
// in out_len bytes (the caller then stores the data uncompressed) or `in` is empty.
// Greedy matching through a hash table of 3-byte prefixes (the part of a per-thread table of
// 16K entries that suits the input: reused across calls, never cleared per call), stepping
// faster through stretches without matches: about 3x faster than one step per byte on
// incompressible input (bench/core/LZF_RESULTS.md).
// `probe` > 0: once the first `probe` bytes (or more: a match may end past them) have been
// consumed, gives up and returns 0 unless their encoding so far is shorter than they are, so
// that incompressible input (random bytes, already compressed data) costs a short attempt
// instead of a whole one; compressible input runs on unchanged, and the output is the same as
// without a probe. Input of at most `probe` bytes is compressed as without one.
// REQUIRES: in.size() < 4 GiB.
size_t LzfCompress(std::string_view in, char* out, size_t out_len, size_t probe = 0);

}  // namespace dashkv
