#include "core/str_util.h"
#include "server/op_status.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/bitops.h"

namespace dashkv {

std::string_view StatusText(OpStatus status) {
  switch (status) {
    case OpStatus::kOk:
    case OpStatus::kKeyNotFound:
    case OpStatus::kSkipped:
      return "";
    case OpStatus::kWrongType:
      return "WRONGTYPE Operation against a key holding the wrong kind of value";
    case OpStatus::kNotAnInteger:
      return "ERR value is not an integer or out of range";
    case OpStatus::kNotAFloat:
      return "ERR value is not a valid float";
    case OpStatus::kOutOfRange:
      return "ERR index out of range";
    case OpStatus::kIncrOverflow:
      return "ERR increment or decrement would overflow";
    case OpStatus::kNanOrInf:
      return "ERR increment would produce NaN or Infinity";
    case OpStatus::kSyntaxError:
      return "ERR syntax error";
    case OpStatus::kOutOfMemory:
      return "OOM command not allowed when used memory > 'maxmemory'.";
    case OpStatus::kAllocationFailed:
      return "ERR out of memory";
    case OpStatus::kStringTooLong:
      return "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    case OpStatus::kBitOffset:
      return "ERR bit offset is not an integer or out of range";
    case OpStatus::kBitValue:
      return "ERR bit is not an integer or out of range";
    case OpStatus::kInvalidDbIndex:
      return "ERR DB index is out of range";
    case OpStatus::kNoSuchKey:
      return "ERR no such key";
    case OpStatus::kDecrOverflow:
      return "ERR decrement would overflow";
    case OpStatus::kInvalidExpire:
      return "ERR invalid expire time";
    case OpStatus::kBitfieldReadOnly:
      return "ERR BITFIELD_RO only supports the GET subcommand";
    case OpStatus::kNumkeysNotPositive:
      return "ERR numkeys should be greater than 0";
    case OpStatus::kNumkeysTooMany:
      return "ERR Number of keys can't be greater than number of args";
    case OpStatus::kLimitNegative:
      return "ERR LIMIT can't be negative";
    case OpStatus::kNotPositive:
      return "ERR value is out of range, must be positive";
    case OpStatus::kCountNotPositive:
      return "ERR count should be greater than 0";
    case OpStatus::kGeoInvalidPair:
      return "ERR invalid longitude,latitude pair";
    case OpStatus::kGeoUnit:
      return "ERR unsupported unit provided. please use M, KM, FT, MI";
    case OpStatus::kGeoNeedRadius:
      return "ERR need numeric radius";
    case OpStatus::kGeoNeedWidth:
      return "ERR need numeric width";
    case OpStatus::kGeoNeedHeight:
      return "ERR need numeric height";
    case OpStatus::kGeoRadiusNegative:
      return "ERR radius cannot be negative";
    case OpStatus::kGeoBoxNegative:
      return "ERR height or width cannot be negative";
    case OpStatus::kGeoCountNotPositive:
      return "ERR COUNT must be > 0";
    case OpStatus::kGeoAnyNeedsCount:
      return "ERR the ANY argument requires COUNT argument";
    case OpStatus::kGeoNoMember:
      return "ERR could not decode requested zset member";
    case OpStatus::kGeoNeedsFrom:
      return "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified";
    case OpStatus::kGeoNeedsBy:
      return "ERR exactly one of BYRADIUS and BYBOX can be specified";
    case OpStatus::kGeoStoreWith:
      return "ERR STORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
    case OpStatus::kZaddXxNx:
      return "ERR XX and NX options at the same time are not compatible";
    case OpStatus::kZaddGtLtNx:
      return "ERR GT, LT, and/or NX options at the same time are not compatible";
    case OpStatus::kZaddIncrPair:
      return "ERR INCR option supports a single increment-element pair";
    case OpStatus::kScoreNan:
      return "ERR resulting score is not a number (NaN)";
    case OpStatus::kMinMaxNotFloat:
      return "ERR min or max is not a float";
    case OpStatus::kLexRangeInvalid:
      return "ERR min or max not valid string range item";
    case OpStatus::kLimitNeedsBy:
      return "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
             "BYLEX";
    case OpStatus::kWithScoresByLex:
      return "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
    case OpStatus::kWeightNotFloat:
      return "ERR weight value is not a float";
    case OpStatus::kInvalidCursor:
      return "ERR invalid cursor";
    case OpStatus::kRandCountRange:
      return "ERR value is out of range, value must between -9223372036854775807 and "
             "9223372036854775807";
    case OpStatus::kNoInputKey:
      return "ERR at least 1 input key is needed";
    case OpStatus::kValueOutOfRange:
      return "ERR value is out of range";
    case OpStatus::kRandReplyTooLarge:
      return "ERR value is out of range, the reply would exceed proto-max-bulk-len";
    case OpStatus::kPopulateTooLarge:
      return "ERR value is out of range, DEBUG POPULATE would need more memory than maxmemory "
             "(or, without maxmemory, the system's memory)";
    case OpStatus::kSameObject:
      return "ERR source and destination objects are the same";
    case OpStatus::kIntRange:
      return "ERR value is out of range, value must between -2147483648 and 2147483647";
    case OpStatus::kBitopNotSingle:
      return "ERR BITOP NOT must be called with a single source key.";
    case OpStatus::kSortNotDouble:
      return "ERR One or more scores can't be converted into double";
    case OpStatus::kExecAbort:
      return "EXECABORT Transaction discarded because of previous errors.";
    case OpStatus::kExecWithoutMulti:
      return "ERR EXEC without MULTI";
    case OpStatus::kDiscardWithoutMulti:
      return "ERR DISCARD without MULTI";
    case OpStatus::kMultiNested:
      return "ERR MULTI calls can not be nested";
    case OpStatus::kWatchInMulti:
      return "ERR WATCH inside MULTI is not allowed";
    case OpStatus::kNotAllowedInMulti:
      return "ERR Command not allowed inside a transaction";
    case OpStatus::kTimeoutNotFloat:
      return "ERR timeout is not a float or out of range";
    case OpStatus::kTimeoutNegative:
      return "ERR timeout is negative";
    case OpStatus::kTimeoutOutOfRange:
      return "ERR timeout is out of range";
    case OpStatus::kUnblocked:
      return "UNBLOCKED client unblocked via CLIENT UNBLOCK";
    case OpStatus::kUnblockReason:
      return "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
    case OpStatus::kNoAuth:
      return "NOAUTH Authentication required.";
    case OpStatus::kWrongPass:
      return "WRONGPASS invalid username-password pair or user is disabled.";
    case OpStatus::kBadClientName:
      return "ERR Client names cannot contain spaces, newlines or special characters.";
    case OpStatus::kDebugNotAllowed:
      return "ERR DEBUG command not allowed. If the enable-debug-command option is set to "
             "\"local\", you can run it from a local connection, otherwise you need to set this "
             "option in the configuration file, and then restart the server.";
    case OpStatus::kTrackingRedirectTwice:
      return "ERR A client can only redirect to a single other client";
    case OpStatus::kTrackingNoSuchRedirect:
      return "ERR The client ID you want redirect to does not exist";
    case OpStatus::kTrackingPrefixNeedsBcast:
      return "ERR PREFIX option requires BCAST mode to be enabled";
    case OpStatus::kTrackingBcastSwitch:
      return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
             "and then re-enabling it with a different mode.";
    case OpStatus::kTrackingOptBcast:
      return "ERR OPTIN and OPTOUT are not compatible with BCAST";
    case OpStatus::kTrackingOptBoth:
      return "ERR You can't specify both OPTIN mode and OPTOUT mode";
    case OpStatus::kTrackingOptSwitch:
      return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
             "and then re-enabling it with a different mode.";
    case OpStatus::kCachingNotTracking:
      return "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
             "OPTIN or OPTOUT mode enabled";
    case OpStatus::kCachingYesNotOptin:
      return "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
    case OpStatus::kCachingNoNotOptout:
      return "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
    case OpStatus::kLoading:
      return "LOADING Redis is loading the dataset in memory";
    case OpStatus::kMisconf:
      return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
             "persist to disk. Commands that may modify the data set are disabled, because this "
             "instance is configured to report errors during writes if RDB snapshotting fails "
             "(stop-writes-on-bgsave-error option). Please check the Redis logs for details "
             "about the RDB error.";
    case OpStatus::kSaveInProgress:
      return "ERR Background save already in progress";
    case OpStatus::kSaveFailed:
      return "ERR";
    case OpStatus::kNoShutdownInProgress:
      return "ERR No shutdown in progress.";
    case OpStatus::kShutdownSaveFailed:
      return "ERR Errors trying to SHUTDOWN. Check logs.";
    case OpStatus::kReloadOption:
      return "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
    case OpStatus::kReloadInExec:
      return "ERR DEBUG RELOAD is not allowed inside EXEC";
    case OpStatus::kReloadFailed:
      return "ERR Error trying to load the RDB dump, check server logs.";
    case OpStatus::kBitposBit:
      return "ERR The bit argument must be 1 or 0.";
    case OpStatus::kBitfieldType:
      return "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
             "supported but i64 is.";
    case OpStatus::kBitfieldOverflow:
      return "ERR Invalid OVERFLOW type specified";
    case OpStatus::kOffsetOutOfRange:
      return "ERR offset is out of range";
    case OpStatus::kBusyKey:
      return "BUSYKEY Target key name already exists.";
    case OpStatus::kDumpPayloadInvalid:
      return "ERR DUMP payload version or checksum are wrong";
    case OpStatus::kBadDataFormat:
      return "ERR Bad data format";
    case OpStatus::kInvalidTtl:
      return "ERR Invalid TTL value, must be >= 0";
    case OpStatus::kInvalidIdletime:
      return "ERR Invalid IDLETIME value, must be >= 0";
    case OpStatus::kInvalidFreq:
      return "ERR Invalid FREQ value, must be >= 0 and <= 255";
    case OpStatus::kMigrateKeysNeedEmptyKey:
      return "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
             "string";
    case OpStatus::kMigrateConnect:
      return "IOERR error or timeout connecting to the client";
    case OpStatus::kMigrateWrite:
      return "IOERR error or timeout writing to target instance";
    case OpStatus::kMigrateRead:
      return "IOERR error or timeout reading to target instance";
    case OpStatus::kMigrateTargetError:
      return "ERR Target instance replied with error:";
    case OpStatus::kHllInvalid:
      return "WRONGTYPE Key is not a valid HyperLogLog string value.";
    case OpStatus::kHllCorrupt:
      return "INVALIDOBJ Corrupted HLL object detected";
    case OpStatus::kHllNoKey:
      return "ERR The specified key does not exist";
    case OpStatus::kHllNotSparse:
      return "ERR HLL encoding is not sparse";
    case OpStatus::kStreamInvalidId:
      return "ERR Invalid stream ID specified as stream command argument";
    case OpStatus::kStreamIdTooSmall:
      return "ERR The ID specified in XADD is equal or smaller than the target stream top item";
    case OpStatus::kStreamIdZero:
      return "ERR The ID specified in XADD must be greater than 0-0";
    case OpStatus::kStreamExhausted:
      return "ERR The stream has exhausted the last possible ID, unable to add more items";
    case OpStatus::kStreamTooLarge:
      return "ERR Elements are too large to be stored";
    case OpStatus::kStreamMaxlenNegative:
      return "ERR The MAXLEN argument must be >= 0.";
    case OpStatus::kStreamLimitNegative:
      return "ERR The LIMIT argument must be >= 0.";
    case OpStatus::kStreamLimitNoApprox:
      return "ERR syntax error, LIMIT cannot be used without the special ~ option";
    case OpStatus::kStreamLimitNoStrategy:
      return "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
    case OpStatus::kStreamMaxlenMinid:
      return "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    case OpStatus::kStreamXtrimNoStrategy:
      return "ERR syntax error, XTRIM must be called with a trimming strategy";
    case OpStatus::kStreamInvalidStart:
      return "ERR invalid start ID for the interval";
    case OpStatus::kStreamInvalidEnd:
      return "ERR invalid end ID for the interval";
    case OpStatus::kStreamUnbalancedXread:
      return "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
    case OpStatus::kStreamUnbalancedXreadgroup:
      return "ERR Unbalanced XREADGROUP list of streams: for each stream key an ID or '$' must be specified.";
    case OpStatus::kStreamEntriesAddedNegative:
      return "ERR entries_added must be positive";
    case OpStatus::kXsetidBelowGivenMaxDeleted:
      return "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
    case OpStatus::kXsetidBelowTop:
      return "ERR The ID specified in XSETID is smaller than the target stream top item";
    case OpStatus::kTimeoutNotInteger:
      return "ERR timeout is not an integer or out of range";
    case OpStatus::kStreamXreadGt:
      return "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
             "<consumer> option.";
    case OpStatus::kStreamBlockedKeyGone:
      return "UNBLOCKED the stream key no longer exists";
    case OpStatus::kStreamBlockedGroupGone:
      return "NOGROUP the consumer group this client was blocked on no longer exists";
    case OpStatus::kXsetidEntriesAddedBelowLength:
      return "ERR The entries_added specified in XSETID is smaller than the target stream length";
  }
  return "ERR unknown error";
}

OpStatus ToOpStatus(StringOpError error) {
  switch (error) {
    case StringOpError::kOk:
      return OpStatus::kOk;
    case StringOpError::kBitOffset:
      return OpStatus::kBitOffset;
    case StringOpError::kBitValue:
      return OpStatus::kBitValue;
    case StringOpError::kBitposBit:
      return OpStatus::kBitposBit;
    case StringOpError::kBitfieldType:
      return OpStatus::kBitfieldType;
    case StringOpError::kBitfieldOverflow:
      return OpStatus::kBitfieldOverflow;
    case StringOpError::kOffsetOutOfRange:
      return OpStatus::kOffsetOutOfRange;
    case StringOpError::kTooLong:
      return OpStatus::kStringTooLong;
  }
  return OpStatus::kSyntaxError;
}

std::string_view StringOpErrorText(StringOpError error) {
  return StatusText(ToOpStatus(error));
}

std::string UnknownSubcommandText(std::string_view container, std::string_view sub) {
  return StrCat("ERR unknown subcommand '", sub.substr(0, 128), "'. Try ",
                AsciiStrToUpper(container), " HELP.");
}

std::string SubcommandSyntaxText(std::string_view container, std::string_view sub) {
  return StrCat("ERR unknown subcommand or wrong number of arguments for '", sub.substr(0, 128),
                "'. Try ", AsciiStrToUpper(container), " HELP.");
}

std::string InvalidExpireText(std::string_view command) {
  return StrCat("ERR invalid expire time in '", command, "' command");
}

std::string WrongArgsText(std::string_view command) {
  return StrCat("ERR wrong number of arguments for '", command, "' command");
}

std::string NoInputKeyText(std::string_view command) {
  return StrCat("ERR at least 1 input key is needed for '", command, "' command");
}

std::string GeoInvalidPairText(double lon, double lat) {
  char buf[700];  // "%f" of the largest double is about 320 characters
  int n = std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", lon, lat);
  return std::string(buf, n > 0 ? std::min<size_t>(n, sizeof(buf) - 1) : 0);
}

std::string GeoExactlyOneText(OpStatus status, std::string_view command) {
  return StrCat(status == OpStatus::kGeoNeedsFrom
                    ? "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for "
                    : "ERR exactly one of BYRADIUS and BYBOX can be specified for ",
                command);
}

std::string GeoStoreWithText(bool searchstore) {
  return StrCat("ERR ", searchstore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS",
                " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
}

}  // namespace dashkv
