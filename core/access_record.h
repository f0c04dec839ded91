// Access record: the 24 bits per key that Redis keeps in robj.lru for its eviction policies and
// for OBJECT IDLETIME / FREQ, kept in the spare bytes of a Dashtable entry's two CompactObjs.
// Thread: functions only; the objects belong to the shard thread that owns their table.
//
// Design
//   The record has Redis's two meanings:
//     LRU (every policy but the LFU ones)  a seconds clock mod 2^24 (LRU_CLOCK_RESOLUTION
//                                          1000 ms): the time of the last access
//     LFU (allkeys-lfu, volatile-lfu)      bits 8..23 the minutes clock mod 2^16 at the last
//                                          decrement, bits 0..7 a logarithmic access counter
//                                          (new keys start at kLfuInitVal)
//   Where it lives, so that no entry grows (CompactObj keeps 16 bytes):
//     1. the key's aux bytes (CompactObj::HasAuxRoom) when the key's form has them: keys of at
//        most 12 bytes, int keys, heap keys (>= 18 bytes, or 16..17 non-ASCII) and every key
//        with an expiry. Most keys.
//     2. else (a key of 13..17 bytes kept inline or packed) the value's aux bytes, and also the
//        lossy form below; a value aux of 0 means "no record here" (a value that has just gained
//        room, e.g. a 15-byte string replaced by a 100-byte one) and the lossy form is read.
//     3. else (value also of 13..17 bytes inline/packed) a lossy 4-bit form in the user flags of
//        key (high 2 bits) and value (low 2 bits):
//          LRU  clock bits 9..12: 512 s steps in a window of ~2.3 h; an access older than the
//               window looks more recent than it was (its age is taken modulo the window)
//          LFU  the counter capped at 15 (distinguishes up to ~500 accesses); no decrement
//               time: the counter reads as last decremented now, so it never decays
//   A key's expiry change moves the key between forms 1 and 2/3: callers read the record before
//   (GetRecord) and store it after (SetRecord). A value change keeps the value's aux when the
//   new form has room (CompactObj's setters).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/compact_object.h"

namespace dashkv {

enum class AccessMode : uint8_t { kLru, kLfu };

inline constexpr uint32_t kLruClockMax = (1u << 24) - 1;
inline constexpr uint8_t kLfuInitVal = 5;

// Returns Redis's LRU clock for `now_ms` (seconds mod 2^24).
inline uint32_t LruClock(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 1000) & kLruClockMax;
}
// Returns Redis's LFU minutes clock for `now_ms` (minutes mod 2^16).
inline uint32_t LfuMinutes(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 60000) & 0xffff;
}
// Returns the idle time in ms of an LRU record, as Redis's estimateObjectIdleTime.
inline uint64_t LruIdleMs(uint32_t record, int64_t now_ms) {
  const uint64_t clock = LruClock(now_ms);
  if (clock >= record) return (clock - record) * 1000;
  return (clock + (kLruClockMax - record)) * 1000;
}
// Returns the LFU counter of `record` after the decay due at `now_ms` (Redis's LFUDecrAndReturn:
// one step per `decay_time` minutes since the last decrement; 0: never decays).
uint8_t LfuDecayed(uint32_t record, int64_t now_ms, int64_t decay_time);
// Returns `counter` incremented with probability 1 / ((counter - 5) * log_factor + 1), as
// Redis's LFULogIncr; `r` is a uniform random number in [0, 1).
uint8_t LfuLogIncr(uint8_t counter, int64_t log_factor, double r);
// Returns the record of a key restored with an idle time or a frequency (RESTORE's IDLETIME /
// FREQ, an RDB file's IDLE / FREQ opcodes), as Redis's objectSetLRUOrLFU: `freq` (0..255) under
// LFU, `idle_s` seconds before now under LRU (older than the clock's range: halfway round the
// clock, as Redis), else (-1: not given for the mode) a new key's record.
uint32_t RestoredRecord(AccessMode mode, int64_t now_ms, int64_t idle_s, int freq);
// Returns the record a new key starts with.
inline uint32_t NewRecord(AccessMode mode, int64_t now_ms) {
  return mode == AccessMode::kLfu ? (LfuMinutes(now_ms) << 8) | kLfuInitVal : LruClock(now_ms);
}

// Returns the record of the entry (key, value); `mode` and `now_ms` decode the lossy form.
inline uint32_t GetRecord(const CompactObj& key, const CompactObj& value, AccessMode mode,
                          int64_t now_ms);
// Returns the record of an entry whose key has no room for it (Design, 2 and 3).
uint32_t GetRecordSlow(const CompactObj& key, const CompactObj& value, AccessMode mode,
                       int64_t now_ms);
// Stores `record` in the entry (key, value) (see Design for where).
inline void SetRecord(CompactObj& key, CompactObj& value, uint32_t record, AccessMode mode);
// Stores `record` where the key has no room (Design, 2 and 3).
void SetRecordSlow(CompactObj& key, CompactObj& value, uint32_t record, AccessMode mode);
// Returns the lossy 4-bit form of `record` (Design, 3).
inline uint8_t LossyRecord(uint32_t record, AccessMode mode) {
  if (mode == AccessMode::kLfu) return static_cast<uint8_t>(std::min(record & 0xffu, 15u));
  return static_cast<uint8_t>((record >> 9) & 15u);  // 512 s steps
}

inline uint32_t GetRecord(const CompactObj& key, const CompactObj& value, AccessMode mode,
                          int64_t now_ms) {
  if (key.HasAuxRoom()) [[likely]] return key.aux();
  return GetRecordSlow(key, value, mode, now_ms);
}

inline void SetRecord(CompactObj& key, CompactObj& value, uint32_t record, AccessMode mode) {
  if (key.HasAuxRoom()) [[likely]] {
    key.set_aux(record);
  } else if (value.HasAuxRoom() && record != 0 &&
             ((key.user_flags() << 2) | (value.user_flags() & 0x3)) ==
                 LossyRecord(record, mode)) {
    // Form 2 whose lossy copy already reads the same (under LRU it changes every 512 s): only
    // the value's aux bytes change.
    value.set_aux(record);
  } else {
    SetRecordSlow(key, value, record, mode);
  }
}

}  // namespace dashkv
