// Argument parsing and reply bounds shared by the random-draw commands: SRANDMEMBER, HRANDFIELD
// and ZRANDMEMBER.
// Thread: used by the command's shard thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "io/reply_builder.h"
#include "server/cmd_args.h"
#include "server/config.h"
#include "server/op_status.h"

namespace dashkv {

// `count [flag]` of a random-draw command: count > 0 asks for distinct elements, count < 0 for
// |count| independent draws (repetitions allowed).
struct RandCount {
  int64_t count = 0;
  bool with_values = false;  // WITHVALUES / WITHSCORES
};

// Parses args[2] and, when `flag` is not empty, the optional args[3] == flag, with Redis 7.0's
// checks in its order: kNotAnInteger, INT64_MIN (kRandCountRange), more arguments or another
// word (kSyntaxError), then with the flag a |count| whose double overflows (kValueOutOfRange).
// REQUIRES: args.size() >= 3.
OpResult<RandCount> ParseRandCount(CmdArgs args, std::string_view flag);

// Bounds the reply of draws with repetition. Redis 7.0 builds it whatever its size and runs out
// of memory on huge counts; dashkv refuses a reply longer than proto-max-bulk-len with
// kRandReplyTooLarge, so every reply Redis could send within that size is sent as Redis does.
// A count that cannot fit (each element takes at least 6 bytes) is refused before any work;
// otherwise the caller checks Exceeded() while writing and calls Abort() when it is true.
class DrawReply {
 public:
  // `per_draw`: bulk strings per draw (2 with values or scores).
  DrawReply(io::ReplyBuilder& rb, const Config& config, uint64_t draws, unsigned per_draw);

  // Returns false when `draws` draws cannot fit whatever the elements.
  bool MayFit() const { return may_fit_; }
  // Returns true when the reply written since construction is over the limit.
  bool Exceeded() const { return rb_.size() - start_ > limit_; }
  // Drops what was written since construction and sends kRandReplyTooLarge.
  void Abort();

 private:
  io::ReplyBuilder& rb_;
  size_t start_;
  uint64_t limit_;
  bool may_fit_;
};

}  // namespace dashkv
