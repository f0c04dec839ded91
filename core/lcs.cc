#include "core/lcs.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <new>

namespace dashkv {

uint64_t LcsTableBytes(size_t a_len, size_t b_len) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const uint64_t rows = uint64_t(a_len) + 1, cols = uint64_t(b_len) + 1;
  if (rows > kMax / cols) return kMax;
  const uint64_t cells = rows * cols;
  return cells > kMax / sizeof(uint32_t) ? kMax : cells * sizeof(uint32_t);
}

std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b,
                                    uint64_t min_match_len) {
  const size_t rows = a.size() + 1, cols = b.size() + 1;
  const uint64_t bytes = LcsTableBytes(a.size(), b.size());
  if (bytes >= std::numeric_limits<size_t>::max()) return std::nullopt;  // saturated
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[rows * cols]);
  if (!table) return std::nullopt;
  auto cell = [&](size_t i, size_t j) -> uint32_t& { return table[i * cols + j]; };
  for (size_t j = 0; j < cols; ++j) cell(0, j) = 0;
  for (size_t i = 1; i < rows; ++i) {
    const char ai = a[i - 1];
    const uint32_t* up = &table[(i - 1) * cols];
    uint32_t* row = &table[i * cols];
    row[0] = 0;
    for (size_t j = 1; j < cols; ++j) {
      row[j] = ai == b[j - 1] ? up[j - 1] + 1 : std::max(up[j], row[j - 1]);
    }
  }

  LcsResult out;
  out.sequence.resize(cell(a.size(), b.size()));
  size_t next = out.sequence.size();  // fills the sequence from its end
  std::optional<LcsMatch> run;
  auto close_run = [&] {
    if (run && run->length() >= min_match_len) out.matches.push_back(*run);
  };
  size_t i = a.size(), j = b.size();
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      out.sequence[--next] = a[i - 1];
      const auto ai = static_cast<uint32_t>(i - 1), bj = static_cast<uint32_t>(j - 1);
      if (run && run->a_start == ai + 1 && run->b_start == bj + 1) {
        run->a_start = ai;
        run->b_start = bj;
      } else {
        close_run();
        run = LcsMatch{ai, ai, bj, bj};
      }
      --i;
      --j;
    } else if (cell(i - 1, j) > cell(i, j - 1)) {
      --i;
    } else {
      --j;
    }
  }
  close_run();
  return out;
}

}  // namespace dashkv
