// How a [MEM] log's records settle a pool's kind (docs/formats/textlog.md,
// "Pools"): one rule for the decoder and the reference parser its tests
// compare it with.
#pragma once

#include <cstddef>

#include "edgemem/pool_table.h"

namespace edgemem {

// `id`: the pool a record goes to, looked up with `kind` (offset=: arena,
// addr=: heap, or the log's last style for a record with no address);
// `known_before`: the table's size before that lookup (a larger id is new).
// A pool first named by a record with no address (RESET, GUARD, ALLOC_FAIL)
// has a guessed kind, which its first addressed record settles: an arena
// named so beside a heap read its offset 0 as a NULL malloc.
inline void settle_textlog_pool_kind(PoolTable& pools, PoolId id, size_t known_before, bool has_addr, PoolKind kind) {
  PoolInfo& info = pools.at(id);
  if (!has_addr && id >= known_before) pools.mark_kind_guessed(id);
  if (has_addr && info.kind_guessed && !info.declared) {
    info.kind = kind;
    info.kind_guessed = false;
  }
}

}  // namespace edgemem
