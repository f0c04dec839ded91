#include "server/values/value_clone.h"

#include "server/values/hash_value.h"
#include "server/values/list_value.h"
#include "server/values/set_value.h"
#include "server/values/stream_value.h"
#include "server/values/zset_value.h"

namespace dashkv {

CompactObj CloneValue(const CompactObj& value) {
  if (value.IsString()) return value.Clone();
  CompactObj out;
  ObjectBase* copy = nullptr;
  switch (value.type()) {
    case ObjType::kList:
      copy = GetList(value)->Clone().release();
      break;
    case ObjType::kHash:
      copy = static_cast<const HashValue*>(value.GetObject())->Clone().release();
      break;
    case ObjType::kSet:
      copy = AsSet(value).Clone().release();
      break;
    case ObjType::kZset:
      copy = AsZset(value).Clone().release();
      break;
    case ObjType::kStream:
      copy = AsStream(value).Clone().release();
      break;
    case ObjType::kString:
      break;
  }
  out.SetObject(value.type(), value.object_encoding(), copy);
  return out;
}

}  // namespace dashkv
