#include "server/commands/memory_figures.h"

#include <absl/strings/str_format.h>
#include <mimalloc.h>  // MI_MALLOC_VERSION
#include <unistd.h>

#include <algorithm>
#include <map>

#include "core/chunk_reserve.h"
#include "core/compact_object.h"
#include "core/memory.h"
#include "core/str_util.h"
#include "server/client_registry.h"
#include "server/conn_state.h"
#include "server/scripting/function_store.h"
#include "server/scripting/script_runner.h"
#include "server/scripting/script_store.h"
#include "server/server_stats.h"
#include "server/services.h"
#include "server/storage/shard.h"

namespace dashkv {

EngineMemory GatherEngineMemory(Shard& shard, const ClientRegistry& clients) {
  EngineMemory m;
  for (unsigned db = 0; db < shard.num_dbs(); ++db) {
    if (DbSlice* slice = shard.db_if_exists(db)) {
      // The table's overhead: its metadata, directory and free slots. A used slot holds the key
      // and value objects themselves (short strings inline), which count as data.
      const int64_t used_slots = static_cast<int64_t>(slice->size() * 2 * sizeof(CompactObj));
      const int64_t keys = static_cast<int64_t>(slice->size());
      const auto table = static_cast<int64_t>(slice->MemoryUsage());
      m.dbs.push_back(DbMemory{db, table - used_slots, keys});
      m.keys += keys;
      m.table_bytes += table;
    }
  }
  if (const ChunkReserve* reserve = shard.chunk_reserve()) {
    // kChunkBytes each: the allocator's rounding of a chunk (up to ~6%) is not counted.
    m.table_reserve = static_cast<int64_t>(reserve->ready() * ChunkReserve::kChunkBytes);
    m.table_bytes += m.table_reserve;
  }
  for (const ConnState* c : clients.on(shard.index())) {
    m.clients_normal +=
        static_cast<int64_t>(c->conn->query_buffer_size() + c->conn->output_buffer_size());
  }
  return m;
}

MemoryFigures ComputeMemoryFigures(const ServerServices& services,
                                   const std::vector<EngineMemory>& engines) {
  MemoryFigures f;
  f.used = UsedMemory();
  f.peak = std::max(f.used, PeakUsedMemory());
  f.startup = services.stats.startup_memory();
  f.rss = static_cast<int64_t>(ProcessRssBytes());
  // mimalloc reports what it committed (address space, much of it never touched under Linux's
  // overcommit), not the pages in use, so the resident size stands for both allocator figures.
  f.allocator_active = f.rss;
  f.allocator_resident = f.rss;
  f.total_system = TotalSystemMemory();
  f.lua = static_cast<int64_t>(ScriptRunner::LuaMemory());
  f.scripts = static_cast<int64_t>(services.scripts.body_bytes());
  for (const auto& lib : services.functions.Libraries()) {
    f.functions += static_cast<int64_t>(lib->code.size());
  }
  std::map<unsigned, DbMemory> dbs;
  for (const EngineMemory& e : engines) {
    for (const DbMemory& d : e.dbs) {
      dbs[d.db].overhead += d.overhead;
      dbs[d.db].keys += d.keys;
    }
    f.keys += e.keys;
    f.clients_normal += e.clients_normal;
    f.tables += e.table_reserve;
    f.table_bytes += e.table_bytes;
  }
  for (const auto& [db, d] : dbs) {
    if (d.keys > 0) f.db_tables.emplace_back(db, d.overhead);
    f.tables += d.overhead;
  }
  return f;
}

double MemoryFigures::dataset_percentage() const {
  const int64_t net = used - startup;
  return net > 0 ? 100.0 * static_cast<double>(dataset()) / static_cast<double>(net) : 0.0;
}

double MemoryFigures::peak_percentage() const {
  return peak > 0 ? 100.0 * static_cast<double>(used) / static_cast<double>(peak) : 100.0;
}

double MemoryFigures::frag_ratio() const {
  return used > 0 ? static_cast<double>(rss) / static_cast<double>(used) : 0.0;
}

std::string HumanBytes(int64_t n) {
  double d = static_cast<double>(n);
  if (n < 1024) return StrCat(n, "B");
  static constexpr char kUnits[] = "KMGTPE";
  int i = -1;
  while (d >= 1024 && i < 5) {
    d /= 1024;
    ++i;
  }
  return absl::StrFormat("%.2f%c", d, kUnits[i]);
}

int64_t TotalSystemMemory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return static_cast<int64_t>(pages) * page;
}

std::string AllocatorName() {
#ifdef DASHKV_SANITIZER
  return "libc";
#else
  return StrCat("mimalloc-", MI_MALLOC_VERSION / 100, ".", (MI_MALLOC_VERSION / 10) % 10, ".",
                MI_MALLOC_VERSION % 10);
#endif
}

}  // namespace dashkv
