// MemoryFigures: the process's memory by category, as INFO memory and MEMORY STATS / DOCTOR
// report it (Redis 7.0's fields, from dashkv's own accounting: core/memory.h counts every C++
// allocation; the resident size comes from the kernel).
// Thread: EngineMemory is gathered on its engine (a hop); the rest on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dashkv {

class Shard;
class ClientRegistry;
struct ServerServices;

// What one engine holds: its shard's tables' overhead (the Dashtable's metadata, directory and
// free slots, per database), their whole size, and keys, and the buffers of its connections.
struct DbMemory {
  unsigned db = 0;
  int64_t overhead = 0;
  int64_t keys = 0;
};
struct EngineMemory {
  std::vector<DbMemory> dbs;  // the databases this shard has created
  int64_t keys = 0;
  // Everything its tables hold: segments (with the keys and values inline in their slots),
  // directories, and the chunks its reserve holds ready for new segments (core/chunk_reserve.h).
  int64_t table_bytes = 0;
  int64_t table_reserve = 0;  // the reserve's part
  int64_t clients_normal = 0;  // query and output buffers of its clients
};

// REQUIRES: runs on the shard's engine.
EngineMemory GatherEngineMemory(Shard& shard, const ClientRegistry& clients);

struct MemoryFigures {
  int64_t used = 0;     // counted allocations (used_memory)
  int64_t peak = 0;
  int64_t startup = 0;  // used when the server started, before loading data
  int64_t rss = 0;
  int64_t allocator_active = 0;    // committed by the allocator
  int64_t allocator_resident = 0;  // resident, as the allocator sees it
  int64_t total_system = 0;
  int64_t lua = 0;              // the Lua heaps
  int64_t scripts = 0;          // cached EVAL bodies
  int64_t functions = 0;        // function library code
  int64_t clients_normal = 0;
  // Per database holding keys, every shard summed (MEMORY STATS lists these, as Redis).
  std::vector<std::pair<unsigned, int64_t>> db_tables;
  int64_t tables = 0;       // every table's overhead, and the chunks held for new segments
  int64_t table_bytes = 0;  // all the tables hold (EngineMemory::table_bytes): INFO's field
  int64_t keys = 0;
  // Derived as Redis derives them.
  int64_t overhead() const { return startup + tables + clients_normal + scripts + functions; }
  int64_t dataset() const { return used > overhead() ? used - overhead() : 0; }
  double dataset_percentage() const;
  double peak_percentage() const;
  double frag_ratio() const;  // rss / used
};

MemoryFigures ComputeMemoryFigures(const ServerServices& services,
                                   const std::vector<EngineMemory>& engines);

// "1.50M"-style sizes, as Redis's *_human fields.
std::string HumanBytes(int64_t n);
// Bytes of physical memory of the machine.
int64_t TotalSystemMemory();
// mem_allocator: "mimalloc-2.0.9" (or "libc" in sanitizer builds).
std::string AllocatorName();

}  // namespace dashkv
