// The libraries Redis 7.0 gives scripts beyond Lua's standard ones: cjson, bit, cmsgpack, struct,
// and Redis's deterministic math.random. Each Open/Install function sets its global in one
// lua_State; all are written against the Lua 5.1 C API (LuaJIT 2.1).
// Thread: a lua_State and everything these functions store in it belong to one thread at a time.
// No state is shared between lua_States.
#pragma once

struct lua_State;

namespace dashkv {

// Sets global `cjson` to Debian's lua-cjson 2.1 (the module Redis bundles, same API: encode,
// decode, null, encode_keep_buffer, encode_max_depth, decode_max_depth, encode_sparse_array,
// encode_number_precision, encode_invalid_numbers, decode_invalid_numbers, new, _NAME, _VERSION).
// encode refuses values whose output could pass 1 GiB (Debian's build lacks Redis's fix for
// CVE-2022-24834). Differences from Redis 7.0.15's bundled copy are listed in lua_cjson.cc.
// REQUIRES: the base library is open. Leaves the stack as it was.
void OpenCjsonLib(lua_State* L);

// Sets global `bit` to LuaJIT's built-in BitOp library (tobit, tohex, bnot, band, bor, bxor,
// lshift, rshift, arshift, rol, ror, bswap), the library Redis bundles; results match Redis
// 7.0.15's, including tobit of out-of-range and fractional numbers (rounded to nearest even,
// then wrapped to 32 bits).
// Leaves the stack as it was.
void OpenBitLib(lua_State* L);

// Sets global `cmsgpack` to a MessagePack codec with Redis's API and byte output:
//   pack(v1, ...)                    -> the encodings of all arguments, concatenated
//   unpack(s)                        -> every value in s, as multiple results
//   unpack_one(s [, offset])         -> next_offset, value   (next_offset -1 when s is used up)
//   unpack_limit(s, limit [, offset])-> next_offset, v1..vlimit (limit 0: all values and no
//                                       offset, as unpack)
// Encoding follows Redis: integral numbers in the smallest integer format, other numbers as
// float32 when exact else float64, tables as arrays when their keys are exactly 1..n else maps,
// nesting beyond 16 levels encoded as nil. Decoding errors on truncated or malformed input and
// never allocates by a declared length before the bytes are present; offsets are 0-based bytes.
// pack refuses output over 512 MiB. Map key order follows LuaJIT's table iteration order.
// Leaves the stack as it was.
void OpenCmsgpackLib(lua_State* L);

// Sets global `struct` to the binary packing library Redis bundles (struct 0.2's format language):
//   struct.pack(fmt, v1, ...)     -> string
//   struct.unpack(fmt, s [, pos]) -> values..., next position (positions are 1-based)
//   struct.size(fmt)              -> bytes; errors for formats without a fixed size (s, c0)
// Options: < > endianness (no '='), ![n] alignment, x b B h H l L T i[n] I[n] f d c[n] s and
// ' '; there are no counts (digits after other letters are errors) and no 'z'. Integer sizes
// are at most 32 bytes; errors, padding and number conversion are Redis's (lua_struct.cc).
// pack refuses results over 512 MiB. Leaves the stack as it was.
void OpenStructLib(lua_State* L);

// Replaces math.random and math.randomseed with Redis's deterministic generator: a 48-bit
// linear congruential rand48 (state starts at 0x1234ABCD330E, the state of an unseeded
// drand48) turned into Lua 5.1's ranges: math.random() in [0,1), math.random(m) in [1,m],
// math.random(m,n) in [m,n], math.randomseed(k) seeds with the low 32 bits of k.
// The state lives in this lua_State (a userdata shared by the two functions), so several states
// on one thread have independent sequences.
// REQUIRES: the math library is open.
void InstallScriptRandom(lua_State* L);

// Restores the generator's initial state, as if InstallScriptRandom had just run.
// Redis 7.0.15 does NOT reset its generator between scripts (the sequence continues across
// EVALs, connections and SCRIPT FLUSH, and math.randomseed in one script affects the next), so
// a Redis 7-compatible executor does not call this per script; Redis before 7.0 reset before
// every EVAL. REQUIRES: InstallScriptRandom ran on L.
void ResetScriptRandom(lua_State* L);

}  // namespace dashkv
