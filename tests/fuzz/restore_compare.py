#!/usr/bin/env python3
"""Sends fuzzer inputs (restore_payload_fuzz's: a DUMP payload whose CRC is recomputed) as
RESTORE to a running dashkv and a running redis-server 7.0 and prints each one's verdict, to
check that both accept and refuse the same payloads. Start Redis with `--sanitize-dump-payload
yes` (dashkv always validates that deeply; without it Redis accepts, or crashes on, payloads
whose listpacks are damaged).

Usage: restore_compare.py [--dashkv PORT] [--redis PORT] FILE...  (defaults 6420 and 6421)
"""
import argparse, os, struct, sys

import redis

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from crc64 import crc64  # noqa: E402  (CRC-64/Jones, as Redis)


def fix_crc(payload):
    body = payload[:-8]
    return body + struct.pack("<Q", crc64(body))


def verdict(client, payload):
    try:
        client.restore("fuzzkey", 0, payload, replace=True)
        client.delete("fuzzkey")
        return "OK"
    except redis.ResponseError as e:
        return "ERR " + str(e)
    except redis.ConnectionError as e:
        return "DOWN " + str(e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashkv", type=int, default=6420)
    ap.add_argument("--redis", type=int, default=6421)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    dk, rd = redis.Redis(port=args.dashkv), redis.Redis(port=args.redis)
    differ = 0
    for name in args.files:
        payload = open(name, "rb").read()
        if len(payload) < 10:
            continue
        payload = fix_crc(payload)
        a, b = verdict(dk, payload), verdict(rd, payload)
        same = a.split()[0] == b.split()[0]
        differ += not same
        print("%-5s %s\n      dashkv: %s\n      redis:  %s" % ("same" if same else "DIFF", name, a, b))
        if a.startswith("DOWN") or b.startswith("DOWN"):
            print("a server is down: stopping")
            return 2
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
