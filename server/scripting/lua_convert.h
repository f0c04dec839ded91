// Conversions between RESP replies and Lua values for scripts, as Redis 7.0 documents them:
// a command's reply (RESP2, or RESP3 after redis.setresp(3)) becomes Lua values for
// redis.call/pcall, and the script's result becomes the client's reply.
// Thread: any (pure functions over one lua_State).
#pragma once

#include <string_view>

#include "io/reply_builder.h"

struct lua_State;

namespace dashkv {

// Pushes {err = msg}.
void PushErrorTable(lua_State* L, std::string_view msg);
// Pushes the error table of an error reply ("-CODE text\r\n", or "-text" without a code: the
// code becomes ERR), as redis.call raises and redis.pcall returns it.
void PushErrorReplyTable(lua_State* L, std::string_view reply);
// Pushes the Lua value of one complete reply in `reply` (a command's, written by our own
// handlers). Returns false when the reply nests deeper than Lua's stack allows.
bool PushReply(lua_State* L, std::string_view reply);

// Sends the Lua value on top of L's stack as the reply: numbers as integers, strings as bulk
// strings, tables by their ok/err/double/big_number/map/set/verbatim_string field or as arrays
// (up to the first nil), booleans as Redis does for `script_resp` (the protocol the script
// chose with redis.setresp), nil as null. Leaves the stack as it was.
void SendLuaValue(lua_State* L, io::ReplyBuilder& out, io::RespVersion script_resp);

// Sends the error a script raised (the handler's table on top of L's stack) as Redis does:
// "-<err> script: <sha>, on <source>:<line>." (without the suffix when the error carries no
// line). Leaves the stack as it was.
void SendScriptError(lua_State* L, io::ReplyBuilder& out, std::string_view sha);

}  // namespace dashkv
