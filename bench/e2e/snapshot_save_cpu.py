"""SAVE CPU: for each binary, a dashkv --threads 1 (dir on /dev/shm) filled by redis-cli --pipe
with N keys key:%012d holding redis-benchmark's 1024-byte value (its genBenchmarkRandomData: 64
printable symbols, incompressible for LZF) or 'x' * 1024; then SAVE (foreground: the shard walks
at full speed and compresses itself) REPEAT times. Prints each SAVE's wall time, the process's
CPU seconds (utime + stime) during it, the file size and the 1-minute load average.
Usage: python3 bench/e2e/snapshot_save_cpu.py random|x <keys> <repeat> <dashkv binary>..."""
import os
import socket
import subprocess
import sys
import tempfile
import time

kind, n, repeat, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]

def bench_value(size):
    state, out = 1234, bytearray(size)
    for i in range(size):
        state = (state * 1103515245 + 12345) & 0xffffffff
        out[i] = ord('0') + ((state >> 16) & 63)
    return bytes(out)

value = bench_value(1024) if kind == "random" else b"x" * 1024
def proto(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
payload = b"".join(proto(b"SET", b"key:%012d" % i, value) for i in range(n))

def cpu(pid):
    rest = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")

for b in bins:
    d = tempfile.mkdtemp(dir="/dev/shm")
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    p = subprocess.Popen([b, "--port", str(port), "--bind", "127.0.0.1", "--threads", "1", "--dir", d,
                          "--save", ""], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True).stdout.strip() == b"PONG":
            break
        time.sleep(0.1)
    subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=payload, capture_output=True, check=True)
    for r in range(repeat):
        c0, t0 = cpu(p.pid), time.monotonic()
        subprocess.run(["redis-cli", "-p", str(port), "SAVE"], capture_output=True, check=True)
        t1, c1 = time.monotonic(), cpu(p.pid)
        size = os.path.getsize(os.path.join(d, "dump.rdb"))
        print(f"{os.path.basename(b)} {kind} run {r}: SAVE {t1 - t0:.2f} s, CPU {c1 - c0:.2f} s, file {size / 1e6:.0f} MB, loadavg {open('/proc/loadavg').read().split()[0]}", flush=True)
    p.terminate(); p.wait()
    subprocess.run(["rm", "-rf", d])
