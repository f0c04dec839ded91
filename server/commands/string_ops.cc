#include "server/commands/string_ops.h"

namespace dashkv {

void StoreString(CompactObj& value, std::string_view s) {
  if (s.size() <= 20) {
    if (std::optional<int64_t> v = ParseInt64(s)) {
      value.SetInt(*v);
      return;
    }
  }
  value.SetString(s);
}

std::string CopyString(const CompactObj& value) {
  std::string out;
  value.AppendTo(&out);
  return out;
}

OpResult<DbSlice::AddResult> FindOrAddString(DbSlice& db, std::string_view key, int64_t now_ms) {
  return db.FindOrAddOfType(key, ObjType::kString, now_ms);
}

void SendOpError(ShardCmdContext& ctx, OpStatus status) {
  if (status == OpStatus::kInvalidExpire) return ctx.rb.SendError(InvalidExpireText(ctx.spec.name));
  ctx.SendStatus(status);
}

void SendOpError(ShardCmdContext& ctx, StringOpError e) {
  ctx.rb.SendError(StringOpErrorText(e));
}

bool ParseExpireOption(ArgParser& parser, ExpireExtra extra, ExpireSpec* spec) {
  ExpireKind kind;
  if (parser.Check("EX")) {
    kind = ExpireKind::kEx;
  } else if (parser.Check("PX")) {
    kind = ExpireKind::kPx;
  } else if (parser.Check("EXAT")) {
    kind = ExpireKind::kExAt;
  } else if (parser.Check("PXAT")) {
    kind = ExpireKind::kPxAt;
  } else if (extra == ExpireExtra::kKeepTtl && parser.Check("KEEPTTL")) {
    kind = ExpireKind::kKeepTtl;
  } else if (extra == ExpireExtra::kPersist && parser.Check("PERSIST")) {
    kind = ExpireKind::kPersist;
  } else {
    return false;
  }
  if (spec->kind != ExpireKind::kNone && spec->kind != kind) {
    parser.SetError(OpStatus::kSyntaxError);
    return true;
  }
  spec->kind = kind;
  if (kind != ExpireKind::kKeepTtl && kind != ExpireKind::kPersist) spec->arg = parser.Next();
  return true;
}

OpResult<int64_t> ExpireDeadline(const ExpireSpec& spec, int64_t now_ms) {
  bool seconds = spec.kind == ExpireKind::kEx || spec.kind == ExpireKind::kExAt;
  bool relative = spec.kind == ExpireKind::kEx || spec.kind == ExpireKind::kPx;
  if (!seconds && !relative && spec.kind != ExpireKind::kPxAt) return int64_t{0};
  std::optional<int64_t> v = ParseInt64(spec.arg);
  if (!v) return OpStatus::kNotAnInteger;
  int64_t ms = *v;
  if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) return OpStatus::kInvalidExpire;
  if (seconds) ms *= 1000;
  if (relative) {
    if (ms > INT64_MAX - now_ms) return OpStatus::kInvalidExpire;
    ms += now_ms;
  }
  return ms;
}

void ApplyExpire(DbSlice& db, PrimeIterator it, ExpireKind kind, int64_t deadline_ms) {
  if (kind == ExpireKind::kKeepTtl) return;
  if (deadline_ms > 0) {
    db.SetExpire(it, deadline_ms);
  } else if (it->first.HasExpire()) {
    db.SetExpire(it, 0);
  }
}

}  // namespace dashkv
