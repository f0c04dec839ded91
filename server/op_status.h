// OpStatus / OpResult<T>: outcomes of shard operations, and the one table that maps them to the
// RESP error text Redis sends. Hot-path outcomes (missing key, wrong type, out of range) are
// values here, not absl::Status (STYLE.md "Errors").
// Thread: pure values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/logging.h"

namespace dashkv {

enum class OpStatus : uint8_t {
  kOk,
  kKeyNotFound,
  kSkipped,          // a condition (NX/XX/GT/...) was not met: not an error
  kWrongType,
  kNotAnInteger,     // "value is not an integer or out of range"
  kNotAFloat,        // "value is not a valid float"
  kOutOfRange,       // "index out of range"
  kIncrOverflow,     // "increment or decrement would overflow"
  kNanOrInf,         // "increment would produce NaN or Infinity"
  kSyntaxError,
  kOutOfMemory,      // maxmemory reached: "OOM command not allowed when used memory > ..."
  kAllocationFailed, // "ERR out of memory": an allocation the command needed failed
  kStringTooLong,    // "string exceeds maximum allowed size (proto-max-bulk-len)"
  kBitOffset,        // "bit offset is not an integer or out of range"
  kBitValue,         // "bit is not an integer or out of range"
  kInvalidDbIndex,   // "DB index is out of range"
  kNoSuchKey,        // "no such key" (RENAME, OBJECT ...)
  kDecrOverflow,     // "decrement would overflow" (DECRBY of INT64_MIN)
  kInvalidExpire,    // "invalid expire time in '<cmd>' command": send InvalidExpireText(cmd)
  kBitfieldReadOnly, // "BITFIELD_RO only supports the GET subcommand"
  // Sets and sorted sets.
  kNumkeysNotPositive,  // "numkeys should be greater than 0"
  kNumkeysTooMany,      // "Number of keys can't be greater than number of args"
  kLimitNegative,       // "LIMIT can't be negative"
  kNotPositive,         // "value is out of range, must be positive"
  kCountNotPositive,    // "count should be greater than 0"
  kZaddXxNx,            // "XX and NX options at the same time are not compatible"
  kZaddGtLtNx,          // "GT, LT, and/or NX options at the same time are not compatible"
  kZaddIncrPair,        // "INCR option supports a single increment-element pair"
  kScoreNan,            // "resulting score is not a number (NaN)"
  kMinMaxNotFloat,      // "min or max is not a float"
  kLexRangeInvalid,     // "min or max not valid string range item"
  kLimitNeedsBy,        // "syntax error, LIMIT is only supported in combination with ..."
  kWithScoresByLex,     // "syntax error, WITHSCORES not supported in combination with BYLEX"
  kWeightNotFloat,      // "weight value is not a float"
  kInvalidCursor,       // "invalid cursor"
  kRandCountRange,      // "value is out of range, value must between -9223372036854775807 ..."
  kNoInputKey,          // "at least 1 input key is needed for '<cmd>' command": NoInputKeyText
  kValueOutOfRange,     // "value is out of range" (HRANDFIELD/ZRANDMEMBER count * 2 overflows)
  kRandReplyTooLarge,   // "value is out of range, the reply would exceed proto-max-bulk-len"
  kPopulateTooLarge,    // "DEBUG POPULATE would need more memory than ..." (dashkv's bound)
  // Keyspace moves and BITOP.
  kSameObject,          // "source and destination objects are the same" (COPY, MOVE)
  kIntRange,            // "value is out of range, value must between -2147483648 and ..."
  kBitopNotSingle,      // "BITOP NOT must be called with a single source key."
  // GEO commands (the formatted ones are sent with GeoErrorText, server/commands/geo_ops.h).
  kGeoInvalidPair,      // "invalid longitude,latitude pair <lon>,<lat>"
  kGeoUnit,             // "unsupported unit provided. please use M, KM, FT, MI"
  kGeoNeedRadius,       // "need numeric radius"
  kGeoNeedWidth,        // "need numeric width"
  kGeoNeedHeight,       // "need numeric height"
  kGeoRadiusNegative,   // "radius cannot be negative"
  kGeoBoxNegative,      // "height or width cannot be negative"
  kGeoCountNotPositive, // "COUNT must be > 0"
  kGeoAnyNeedsCount,    // "the ANY argument requires COUNT argument"
  kGeoNoMember,         // "could not decode requested zset member"
  kGeoNeedsFrom,        // "exactly one of FROMMEMBER or FROMLONLAT can be specified for <cmd>"
  kGeoNeedsBy,          // "exactly one of BYRADIUS and BYBOX can be specified for <cmd>"
  kGeoStoreWith,        // "<GEOSEARCHSTORE|STORE option in GEORADIUS> is not compatible with ..."
  // SORT.
  kSortNotDouble,       // "One or more scores can't be converted into double"
  // MULTI / EXEC / WATCH.
  kExecAbort,           // "EXECABORT Transaction discarded because of previous errors."
  kExecWithoutMulti,    // "EXEC without MULTI"
  kDiscardWithoutMulti, // "DISCARD without MULTI"
  kMultiNested,         // "MULTI calls can not be nested"
  kWatchInMulti,        // "WATCH inside MULTI is not allowed"
  kNotAllowedInMulti,   // "Command not allowed inside a transaction"
  // Blocking commands.
  kTimeoutNotFloat,     // "timeout is not a float or out of range"
  kTimeoutNegative,     // "timeout is negative"
  kTimeoutOutOfRange,   // "timeout is out of range"
  kUnblocked,           // "UNBLOCKED client unblocked via CLIENT UNBLOCK"
  kUnblockReason,       // "CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
  // Connections (AUTH, HELLO, CLIENT).
  kNoAuth,              // "NOAUTH Authentication required."
  kWrongPass,           // "WRONGPASS invalid username-password pair or user is disabled."
  kBadClientName,       // "Client names cannot contain spaces, newlines or special characters."
  kDebugNotAllowed,     // "DEBUG command not allowed. If the enable-debug-command option ..."
  // CLIENT TRACKING / CACHING (the prefix overlap errors name the prefixes: built in place).
  kTrackingRedirectTwice,    // "A client can only redirect to a single other client"
  kTrackingNoSuchRedirect,   // "The client ID you want redirect to does not exist"
  kTrackingPrefixNeedsBcast, // "PREFIX option requires BCAST mode to be enabled"
  kTrackingBcastSwitch,      // "You can't switch BCAST mode on/off before disabling ..."
  kTrackingOptBcast,         // "OPTIN and OPTOUT are not compatible with BCAST"
  kTrackingOptBoth,          // "You can't specify both OPTIN mode and OPTOUT mode"
  kTrackingOptSwitch,        // "You can't switch OPTIN/OPTOUT mode before disabling ..."
  kCachingNotTracking,       // "CLIENT CACHING can be called only when the client is in ..."
  kCachingYesNotOptin,       // "CLIENT CACHING YES is only valid when tracking is enabled ..."
  kCachingNoNotOptout,       // "CLIENT CACHING NO is only valid when tracking is enabled ..."
  // Persistence.
  kLoading,             // "LOADING Redis is loading the dataset in memory"
  kMisconf,             // "MISCONF Redis is configured to save RDB snapshots, ..."
  kSaveInProgress,      // "Background save already in progress"
  kSaveFailed,          // "ERR" (Redis's bare reply to a failed SAVE)
  kNoShutdownInProgress,  // "No shutdown in progress."
  kShutdownSaveFailed,  // "Errors trying to SHUTDOWN. Check logs."
  kReloadOption,        // "DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
  kReloadInExec,        // "DEBUG RELOAD is not allowed inside EXEC"
  kReloadFailed,        // "Error trying to load the RDB dump, check server logs."
  // Bit argument checks of core/bitops.h (StringOpError).
  kBitposBit,           // "The bit argument must be 1 or 0."
  kBitfieldType,        // "Invalid bitfield type. Use something like i16 u8. ..."
  kBitfieldOverflow,    // "Invalid OVERFLOW type specified"
  kOffsetOutOfRange,    // "offset is out of range"
  // DUMP / RESTORE.
  kBusyKey,             // "BUSYKEY Target key name already exists."
  kDumpPayloadInvalid,  // "DUMP payload version or checksum are wrong"
  kBadDataFormat,       // "Bad data format"
  kInvalidTtl,          // "Invalid TTL value, must be >= 0"
  kInvalidIdletime,     // "Invalid IDLETIME value, must be >= 0"
  kInvalidFreq,         // "Invalid FREQ value, must be >= 0 and <= 255"
  // MIGRATE.
  kMigrateKeysNeedEmptyKey,  // "When using MIGRATE KEYS option, the key argument must be ..."
  kMigrateConnect,           // "IOERR error or timeout connecting to the client"
  kMigrateWrite,             // "IOERR error or timeout writing to target instance"
  kMigrateRead,              // "IOERR error or timeout reading to target instance"
  kMigrateTargetError,       // "Target instance replied with error:" (the target's error follows)
  // HyperLogLog.
  kHllInvalid,          // "WRONGTYPE Key is not a valid HyperLogLog string value."
  kHllCorrupt,          // "INVALIDOBJ Corrupted HLL object detected"
  kHllNoKey,            // "The specified key does not exist" (PFDEBUG)
  kHllNotSparse,        // "HLL encoding is not sparse" (PFDEBUG DECODE)
  // Streams.
  kStreamInvalidId,     // "Invalid stream ID specified as stream command argument"
  kStreamIdTooSmall,    // "The ID specified in XADD is equal or smaller than the target..."
  kStreamIdZero,        // "The ID specified in XADD must be greater than 0-0"
  kStreamExhausted,     // "The stream has exhausted the last possible ID, unable to add..."
  kStreamTooLarge,      // "Elements are too large to be stored"
  kStreamMaxlenNegative, // "The MAXLEN argument must be >= 0."
  kStreamLimitNegative, // "The LIMIT argument must be >= 0."
  kStreamLimitNoApprox, // "syntax error, LIMIT cannot be used without the special ~ opt..."
  kStreamLimitNoStrategy, // "syntax error, LIMIT cannot be used without specifying a trim..."
  kStreamMaxlenMinid,   // "syntax error, MAXLEN and MINID options at the same time are ..."
  kStreamXtrimNoStrategy, // "syntax error, XTRIM must be called with a trimming strategy"
  kStreamInvalidStart,  // "invalid start ID for the interval"
  kStreamInvalidEnd,    // "invalid end ID for the interval"
  kStreamUnbalancedXread, // "Unbalanced XREAD list of streams: for each stream key an ID ..."
  kStreamUnbalancedXreadgroup, // "Unbalanced XREADGROUP list of streams: for each stream key a..."
  kStreamEntriesAddedNegative, // "entries_added must be positive"
  kXsetidBelowGivenMaxDeleted, // "The ID specified in XSETID is smaller than the provided max_..."
 // "The ID specified in XSETID is smaller than current max_delet..."
  kXsetidBelowTop,      // "The ID specified in XSETID is smaller than the target stream..."
  kTimeoutNotInteger,   // "timeout is not an integer or out of range"
  kStreamXreadGt,       // "The > ID can be specified only when calling XREADGROUP using ..."
  kStreamBlockedKeyGone,    // "UNBLOCKED the stream key no longer exists" (blocked XREADGROUP)
  kStreamBlockedGroupGone,  // "NOGROUP the consumer group this client was blocked on no longer..."
  kXsetidEntriesAddedBelowLength, // "The entries_added specified in XSETID is smaller than the ta..."
};

enum class StringOpError : uint8_t;  // core/bitops.h

// Returns Redis's error text for `status` (with its code, without the leading '-'), or "" for
// statuses that are not errors (kOk, kKeyNotFound, kSkipped).
std::string_view StatusText(OpStatus status);

// Returns the status of a core/bitops.h argument check (kOk for StringOpError::kOk).
OpStatus ToOpStatus(StringOpError error);

// Returns Redis's error text for a core/bitops.h argument check ("" for StringOpError::kOk).
std::string_view StringOpErrorText(StringOpError error);

// Returns Redis's "unknown subcommand '<sub>'. Try <CONTAINER> HELP." text: `container` as the
// client spelled it, upper-cased; `sub` cut at 128 bytes.
std::string UnknownSubcommandText(std::string_view container, std::string_view sub);

// Returns Redis's "unknown subcommand or wrong number of arguments for '<sub>'. Try <CONTAINER>
// HELP." text, which some subcommands answer for argument counts their arity allows.
std::string SubcommandSyntaxText(std::string_view container, std::string_view sub);

// Returns Redis's "invalid expire time in '<cmd>' command" text.
std::string InvalidExpireText(std::string_view command);

// Returns Redis's "wrong number of arguments for '<cmd>' command" text.
std::string WrongArgsText(std::string_view command);

// Returns Redis's "at least 1 input key is needed for '<cmd>' command" text.
std::string NoInputKeyText(std::string_view command);

// Returns Redis's "invalid longitude,latitude pair <lon>,<lat>" text (printf "%f" each).
std::string GeoInvalidPairText(double lon, double lat);

// Returns Redis's "exactly one of ... can be specified for <cmd>" text of kGeoNeedsFrom or
// kGeoNeedsBy, `command` as the client typed it.
std::string GeoExactlyOneText(OpStatus status, std::string_view command);

// Returns Redis's "... is not compatible with WITHDIST, WITHHASH and WITHCOORD options" text:
// naming GEOSEARCHSTORE, or GEORADIUS's STORE option.
std::string GeoStoreWithText(bool searchstore);

// A value or a non-kOk status. Small, no allocation (cf. Dragonfly's OpResult).
template <typename T>
class [[nodiscard]] OpResult {
 public:
  OpResult(T value) : value_(std::move(value)), status_(OpStatus::kOk) {}  // NOLINT
  OpResult(OpStatus status) : status_(status) {}                          // NOLINT

  bool ok() const { return status_ == OpStatus::kOk; }
  explicit operator bool() const { return ok(); }
  OpStatus status() const { return status_; }
  T& value() {
    DCHECK(ok());
    return value_;
  }
  const T& value() const {
    DCHECK(ok());
    return value_;
  }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  T value_{};
  OpStatus status_;
};

}  // namespace dashkv
