"""The shard of a key in a dashkv of n threads: core/hash.h HashBytes (the tables' seed) over the
key's hash tag, remixed with kShardSeed (server/storage/shard_set.h ShardOf), ported so that
tests and benchmarks can pick keys on given shards. Standard library only (bench/e2e imports it too). Tests that rely
on it check the placement against the server's per-thread key counts (helpers.keys_per_shard).
"""

_M64 = (1 << 64) - 1
_K0, _K1, _K2 = 0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f, 0x165667b19e3779f9
_TABLE_SEED = 0x2545f4914f6cdd1d
_SHARD_SEED = 0x6a09e667f3bcc909


def _fold(a, b):
    r = (a & _M64) * (b & _M64)
    return (r & _M64) ^ (r >> 64)


def _hash_bytes(s, seed):
    p, n = 0, len(s)
    h = seed ^ _fold(n ^ _K0, _K1)

    def load64(i):
        return int.from_bytes(s[i:i + 8], "little")

    while n > 16:
        h = _fold(load64(p) ^ _K1, load64(p + 8) ^ h)
        p += 16
        n -= 16
    a = b = 0
    if n > 8:
        a, b = load64(p), load64(p + n - 8)
    elif n >= 4:
        a = int.from_bytes(s[p:p + 4], "little")
        b = int.from_bytes(s[p + n - 4:p + n], "little")
    elif n > 0:
        a = (s[p] << 16) | (s[p + (n >> 1)] << 8) | s[p + n - 1]
    h = _fold(a ^ _K2 ^ h, b ^ _K1)
    return _fold(h ^ _K0, len(s) ^ _K2)


def _hash_tag(key):
    start = key.find(b"{")
    if start < 0:
        return key
    end = key.find(b"}", start + 1)
    return key if end < 0 or end == start + 1 else key[start + 1:end]


def shard_of(key, shards):
    """The shard (= thread) that owns `key` (str or bytes) in a dashkv of `shards` threads."""
    if shards == 1:
        return 0
    k = key.encode() if isinstance(key, str) else key
    mixed = _fold(_hash_bytes(_hash_tag(k), _TABLE_SEED) ^ _SHARD_SEED, _K1)
    return (mixed * shards) >> 64
