#include "server/persistence/rdb_sink.h"

#include "core/base/logging.h"
#include "core/rdb_encoding.h"

namespace dashkv {

void RdbSink::AppendString(std::string_view s, bool compress) {
  // Only strings AppendRdbString would try to compress are deferred; those are too long for an
  // integer encoding, so the writer's AppendRdbString makes the same choice this one would.
  if (defer_lzf_ && compress && s.size() > kRdbMinCompressLen) {
    spans_.push_back(LzfSpan{buf_.size(), s.size()});
    buf_.append(s);
    return;
  }
  AppendRdbString(&buf_, s, compress ? lzf_ : RdbLzf::kOff);
}

void EncodeLzfSpans(std::string_view bytes, const std::vector<LzfSpan>& spans, RdbLzf lzf,
                    std::string* out) {
  size_t pos = 0;
  for (const LzfSpan& span : spans) {
    DCHECK(span.offset >= pos && span.offset + span.size <= bytes.size());
    out->append(bytes.substr(pos, span.offset - pos));
    AppendRdbString(out, bytes.substr(span.offset, span.size), lzf);
    pos = span.offset + span.size;
  }
  out->append(bytes.substr(pos));
}

}  // namespace dashkv
