"""CRC-64/Jones as Redis uses it for DUMP payloads and RDB files (reflected, polynomial
0xad93d23594c935a9, init 0, xorout 0): for tests and tools that re-sign payloads."""

_POLY = 0x95AC9329AC4BC9B5  # the polynomial's reflected low part
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc64(data):
    crc = 0
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xff] ^ (crc >> 8)
    return crc
