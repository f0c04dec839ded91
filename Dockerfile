# dashkv container image.
#
#   docker build -t dashkv .
#   docker run -d -p 6379:6379 -v dashkv-data:/data dashkv
#   docker run -d -p 6380:6380 dashkv --bind 0.0.0.0 --port 6380 --dir /data --maxmemory 1000000000
#
# Arguments after the image name replace CMD and go straight to the server (ENTRYPOINT is the
# binary itself, exec form: the server is PID 1 and receives SIGTERM directly). The thread count
# follows the container's CPU quota (the server reads its cgroup); no flag is needed.
# Protected mode is off in the image, as in the official Redis image: the container's port is
# reached from outside its network namespace (published ports arrive from non-loopback
# addresses), so protection would refuse every client. Anyone who can reach a published port can
# then use the server: set --requirepass (or publish on 127.0.0.1 only, or keep the port on a
# private network). `--protected_mode=yes` after the image name turns protection back on.
# With podman/buildah, build with `--format docker`: the OCI format drops HEALTHCHECK.

# ---- build stage -------------------------------------------------------------------------------
FROM debian:bookworm AS build

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      cmake ninja-build g++ libabsl-dev libboost-dev libmimalloc-dev libzstd-dev libssl-dev \
      libluajit-5.1-dev lua-cjson-dev \
 && rm -rf /var/lib/apt/lists/*

# Parallel compile jobs; raise on a bigger build machine: --build-arg JOBS=8
ARG JOBS=2

WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DDASHKV_BUILD_TESTS=OFF -DDASHKV_BUILD_BENCH=OFF \
 && cmake --build /build --target dashkv -j"${JOBS}" \
 && strip /build/dashkv

# ---- runtime stage -----------------------------------------------------------------------------
FROM debian:bookworm-slim

# Only the shared libraries the binary links against (Debian bookworm runtime packages).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libabsl20220623 libmimalloc2.0 libzstd1 libssl3 libluajit-5.1-2 lua-cjson libstdc++6 \
      libgcc-s1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system dashkv \
 && useradd --system --gid dashkv --home-dir /data --no-create-home --shell /usr/sbin/nologin dashkv \
 && mkdir -p /data \
 && chown dashkv:dashkv /data

COPY --from=build /build/dashkv /usr/local/bin/dashkv
# Fail the build here, not at `docker run`, when a runtime library is missing.
RUN if ldd /usr/local/bin/dashkv | grep 'not found'; then exit 1; fi

USER dashkv
WORKDIR /data
VOLUME /data
EXPOSE 6379
STOPSIGNAL SIGTERM

# PING over bash's /dev/tcp (no redis-cli in the image). The port is read from the server's own
# command line (PID 1), so `docker run dashkv --port 7000` stays healthy; default 6379.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "p=6379; set -- $(tr '\\0' ' ' </proc/1/cmdline); while [ $# -gt 0 ]; do case $1 in --port) p=$2;; --port=*) p=${1#--port=};; esac; shift; done; exec 3<>/dev/tcp/127.0.0.1/$p && printf 'PING\\r\\n' >&3 && IFS= read -r -t 2 l <&3 && [ \"${l%$'\\r'}\" = +PONG ]"]

# The protected-mode flag sits in ENTRYPOINT, so it stays when arguments replace CMD.
ENTRYPOINT ["/usr/local/bin/dashkv", "--protected_mode=no"]
CMD ["--bind", "0.0.0.0", "--port", "6379", "--dir", "/data"]
