// Versions reported to clients. redis_version names the Redis release whose command set dashkv
// matches (clients gate features on it); dashkv's own version has its own INFO field.
#pragma once

namespace dashkv {

inline constexpr char kRedisVersion[] = "7.0.15";
// kRedisVersion as Redis encodes it for scripts (redis.REDIS_VERSION_NUM): 0x00MMmmpp.
inline constexpr int kRedisVersionNum = 0x07000f;
inline constexpr char kDashkvVersion[] = "0.1.0";

}  // namespace dashkv
