"""Diagnostic: prefill 5M x 1 KB as snapshot_bench does, run the SET load, BGSAVE, and record
per-thread CPU time of dashkv for 10 s without the save and during it, with each thread's
states (/proc stat state:syscall, sampled every 5 ms) and the load's ops/s and p99 in both
windows. Shard CPU seconds / requests served = CPU per request, comparable across runs on a
shared machine. `perf` records the first 10 s of the save to perf-<threads>.data.
Usage: python3 bench/e2e/snapshot_cpu_load.py <dashkv binary> <threads> perf|noperf"""
import os, sys, time, subprocess, glob
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import snapshot_bench as sb

binary, threads, perf = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "perf"
a = sb.parse_args(["bgsave-memory", "--dashkv", binary, "--threads", str(threads)])
sb.check_environment(a)
a.keys = 5000000
a.value_size = 1024
work = f"/var/tmp/p15diag-{os.getpid()}"
s = sb.Server("dashkv", a, work, threads).start()

def thread_cpu(pid):
    out = {}
    for t in glob.glob(f"/proc/{pid}/task/*"):
        try:
            f = open(t + "/stat").read()
            comm = f[f.index("(") + 1:f.rindex(")")]
            rest = f[f.rindex(")") + 2:].split()
            out[(t.split("/")[-1], comm)] = (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return out

def proc_cpu(pid):
    rest = open(f"/proc/{pid}/stat").read().split(")")[-1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")

try:
    sb.prefill_pipe(s, a)
    time.sleep(1)
    ld = sb.Load(s, a).start()
    time.sleep(3)
    c0 = thread_cpu(s.proc.pid); t0 = time.monotonic()
    bp = subprocess.check_output(["pgrep", "-f", f"redis-benchmark -h 127.0.0.1 -p {s.port}"]).split()[0].decode()
    b0 = proc_cpu(bp)
    time.sleep(10)
    c1 = thread_cpu(s.proc.pid); t1 = time.monotonic(); b1 = proc_cpu(bp)
    n_before = len(ld.chunks)
    print(f"WITHOUT bgsave, {t1-t0:.1f}s: bench cpu {b1-b0:.2f}s")
    for k in sorted(c1):
        print("  ", k, f"{c1[k]-c0.get(k,0):.2f}s")
    s.call("BGSAVE")
    tb = time.monotonic()
    perfp = None
    if perf:
        perfp = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(s.proc.pid), "-o", f"perf-{threads}.data", "--", "sleep", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c0 = thread_cpu(s.proc.pid); b0 = proc_cpu(bp)
    import collections
    states = collections.defaultdict(collections.Counter)
    last_info = 0
    while True:
        if time.monotonic() - last_info > 0.1:
            info = s.call("INFO", "persistence")
            last_info = time.monotonic()
            if sb.info_field(info, "rdb_bgsave_in_progress") == "0":
                break
        for t in glob.glob(f"/proc/{s.proc.pid}/task/*"):
            try:
                sc = open(t + "/syscall").read().split()[0]
                st = open(t + "/stat").read().split(")")[-1].split()[0]
            except OSError:
                continue
            states[t.split("/")[-1]][st + ":" + sc] += 1
        time.sleep(0.005)
    te = time.monotonic()
    c1 = thread_cpu(s.proc.pid); b1 = proc_cpu(bp)
    print(f"DURING bgsave {te-tb:.1f}s: bench cpu {b1-b0:.2f}s; status {sb.info_field(s.call('INFO','persistence'), 'rdb_last_bgsave_status')}")
    for k in sorted(c1):
        print("  ", k, f"{c1[k]-c0.get(k,0):.2f}s", dict(states[k[0]].most_common(5)))
    time.sleep(2)
    ld.stop()
    if perfp: perfp.wait()
    w = ld.summary(None, tb); d = ld.summary(tb, te)
    print("without", w and {k: round(v, 2) for k, v in w.items()})
    print("during", d and {k: round(v, 2) for k, v in d.items()})
finally:
    s.stop()
    subprocess.call(["rm", "-rf", work])
