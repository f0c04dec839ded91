#!/usr/bin/env python3
"""GET/SET over TLS: dashkv against Debian's redis-server (built with TLS), side by side.

Makes a CA and server/client certificates with the openssl command line, starts each server in
turn with a TLS port (pinned with taskset as compare.py does), prefills it over the plain port,
and drives the TLS port with `redis-benchmark --tls` at the given pipelines. Reports ops/s and the
server's CPU time per operation (from /proc/<pid>/stat). memtier_benchmark is not packaged in
Debian 12, so redis-benchmark is the load generator here. See bench/e2e/README.md.

  python3 bench/e2e/tls.py --dashkv build/dashkv --out bench/e2e/TLS_RESULTS.md
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (Server, prefill, run_tool, machine_info)


def make_certs(d):
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-days", "2", "-subj", "/CN=bench-ca")
    for name in ("server", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out",
                name + ".csr", "-subj", "/CN=localhost")
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".crt", "-days", "2")
    return {n: os.path.join(d, n) for n in os.listdir(d)}


class TlsRedisBenchmark(compare.RedisBenchmark):
    """redis-benchmark --tls against the TLS port (the plain port stays for setup)."""

    def __init__(self, path, certs):
        super().__init__(path)
        self.certs = certs
        self.tls_port = None

    def argv(self, port, test, pipeline, requests, a):
        v = super().argv(self.tls_port, test, pipeline, requests, a)
        return v + ["--tls", "--cacert", self.certs["ca.crt"], "--cert", self.certs["client.crt"],
                    "--key", self.certs["client.key"]]


def tls_settings(kind, tls_port, certs):
    settings = {"tls-port": tls_port, "tls-cert-file": certs["server.crt"],
                "tls-key-file": certs["server.key"], "tls-ca-cert-file": certs["ca.crt"]}
    out = []
    for k, v in settings.items():
        out += ["--" + k, str(v)] if kind == "redis" else ["--%s=%s" % (k.replace("-", "_"), v)]
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dashkv", default="build/dashkv")
    p.add_argument("--redis", default="redis-server")
    p.add_argument("--threads", type=int, default=1, help="dashkv --threads")
    p.add_argument("--pipelines", type=lambda s: [int(x) for x in s.split(",")], default=[1, 30])
    p.add_argument("--tests", type=lambda s: s.lower().split(","), default=["get", "set"])
    p.add_argument("--requests", type=int, default=0, help="per run (0: calibrate to --seconds)")
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--max-requests", type=int, default=20_000_000)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--keys", type=int, default=100_000)
    p.add_argument("--value-size", type=int, default=256)
    p.add_argument("--server-cpus", default="0")
    p.add_argument("--client-cpus", default="1")
    p.add_argument("--start-timeout", type=float, default=20.0)
    p.add_argument("--run-timeout", type=float, default=180.0)
    p.add_argument("--out")
    a = p.parse_args(argv)
    a.dashkv = os.path.abspath(a.dashkv) if os.path.exists(a.dashkv) else a.dashkv
    results, versions = {}, {}
    with tempfile.TemporaryDirectory(prefix="dashkv-tls-bench-") as workdir:
        certs = make_certs(tempfile.mkdtemp(dir=workdir))
        tool = TlsRedisBenchmark("redis-benchmark", certs)
        servers = [
            ("dashkv", lambda port, wd: [a.dashkv, "--port", str(port), "--bind", compare.HOST,
                                         "--dir", wd, "--threads", str(a.threads), "--save", ""] +
             tls_settings("dashkv", tool.tls_port, certs)),
            ("redis", lambda port, wd: [a.redis, "--port", str(port), "--bind", compare.HOST,
                                        "--dir", wd] + compare.REDIS_ARGS +
             tls_settings("redis", tool.tls_port, certs)),
        ]
        for label, argv_fn in servers:
            tool.tls_port = compare.free_port()
            server = compare.Server(label, argv_fn, a.server_cpus, workdir, a.start_timeout)
            server.start()
            try:
                versions[label] = compare.server_version(server)
                compare.prefill(server, tool.key_format, a)
                for test in a.tests:
                    for pipeline in a.pipelines:
                        n = compare.requests_for(server, tool, test, pipeline, a)
                        runs = sorted((compare.run_tool(server, tool, test, pipeline, n, a)
                                       for _ in range(a.repeat)), key=lambda r: r["ops_s"])
                        r = runs[len(runs) // 2]
                        results[(label, test, pipeline)] = r
                        print(f"# {label:>6} TLS {test.upper()} P{pipeline}: {r['ops_s']:,.0f} "
                              f"ops/s, server CPU {r['cpu_s_per_mops']:.2f} s/Mops",
                              file=sys.stderr)
                server.check_alive()
            finally:
                server.stop()
    lines = [f"GET/SET over TLS (redis-benchmark --tls, {a.clients} clients, "
             f"{a.value_size}-byte values, {a.keys:,} keys; server CPUs {a.server_cpus}, "
             f"load generator CPUs {a.client_cpus}; dashkv --threads {a.threads}).", "",
             "| test | dashkv ops/s | redis ops/s | dashkv/redis | dashkv CPU s/Mops | "
             "redis CPU s/Mops |", "|---|---:|---:|---:|---:|---:|"]
    for test in a.tests:
        for pipeline in a.pipelines:
            d, r = results[("dashkv", test, pipeline)], results[("redis", test, pipeline)]
            lines.append(f"| {test.upper()} P{pipeline} | {d['ops_s']:,.0f} | {r['ops_s']:,.0f} | "
                         f"{d['ops_s'] / r['ops_s']:.2f} | {d['cpu_s_per_mops']:.2f} | "
                         f"{r['cpu_s_per_mops']:.2f} |")
    lines += ["", "Servers: " + ", ".join(f"{k} {v}" for k, v in versions.items())]
    report = "\n".join(lines) + "\n"
    print(report)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# TLS benchmark\n\n" + report + "\n" + "\n".join(compare.machine_info()) + "\n")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except compare.BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
