#include "server/tx/multi_key.h"

namespace dashkv {

KeysByShard::KeysByShard(const ShardSet& shard_set, CmdArgs args, size_t first, size_t last,
                         size_t step)
    : indexes(shard_set.size()) {
  for (size_t i = first; i <= last && i < args.size(); i += step) {
    unsigned sid = shard_set.ShardOf(args[i]);
    if (indexes[sid].empty()) shards.push_back(sid);
    indexes[sid].push_back(static_cast<uint32_t>(i));
  }
}

void SumCombine(CmdArgs, PartReader& parts, io::ReplyBuilder& out) {
  int64_t total = 0;
  for (int64_t w : parts.words()) total += w;
  out.SendLong(total);
}

}  // namespace dashkv
