#include "server/value_clone.h"

#include "server/hash_value.h"
#include "server/list_value.h"
#include "server/set_value.h"
#include "server/zset_value.h"

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
    case ObjType::kString:
      break;
  }
  out.SetObject(value.type(), value.object_encoding(), copy);
  return out;
}

}  // namespace dashkv
