"""Idle BGSAVE cost: prefill 5M x 1 KB ('x'), 8 s of the SET load (random values), stop the load,
then BGSAVE with no load: wall time and CPU seconds of each dashkv thread during it (shard
threads first, the I/O thread's after). CPU seconds are robust on a machine shared with other
work, where wall times and ops/s are not.
Usage: python3 bench/e2e/snapshot_cpu_idle.py <dashkv binary> <threads> [perf.data path]"""
import os, sys, time, subprocess, glob
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_bench as sb
binary, threads = sys.argv[1], int(sys.argv[2])
a = sb.parse_args(["bgsave-memory", "--dashkv", binary, "--threads", str(threads)])
sb.check_environment(a)
a.keys, a.value_size = 5000000, 1024
work = f"/var/tmp/p15idle-{os.getpid()}"
s = sb.Server("dashkv", a, work, threads).start()
def thread_cpu(pid):
    out = {}
    for t in glob.glob(f"/proc/{pid}/task/*"):
        f = open(t + "/stat").read()
        rest = f[f.rindex(")") + 2:].split()
        out[t.split("/")[-1]] = (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    return out
try:
    sb.prefill_pipe(s, a)
    ld = sb.Load(s, a).start(); time.sleep(8); ld.stop(); time.sleep(1)
    c0 = thread_cpu(s.proc.pid); t0 = time.monotonic()
    perfp = None
    if len(sys.argv) > 3:
        perfp = subprocess.Popen(["perf", "record", "-F", "1999", "-p", str(s.proc.pid), "-o", sys.argv[3]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    s.call("BGSAVE")
    while sb.info_field(s.call("INFO", "persistence"), "rdb_bgsave_in_progress") != "0":
        time.sleep(0.02)
    t1 = time.monotonic(); c1 = thread_cpu(s.proc.pid)
    if perfp:
        perfp.send_signal(2); perfp.wait()
    d = sorted(((c1[k] - c0.get(k, 0)), k) for k in c1)[::-1]
    size = os.path.getsize(os.path.join(work, "dump.rdb"))
    print(f"{os.path.basename(binary)} t{threads}: BGSAVE {t1-t0:.2f} s, file {size/1e6:.0f} MB, "
          f"thread CPU s: {' '.join(f'{v:.2f}' for v, k in d if v > 0)}; load avg {os.getloadavg()[0]:.2f}")
finally:
    s.stop(); subprocess.call(["rm", "-rf", work])
