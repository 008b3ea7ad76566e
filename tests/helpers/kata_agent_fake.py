#!/usr/bin/env python3
"""A test stand-in for a micro-VM's Kata agent behind its VMM's hybrid-vsock
socket, speaking the real wire protocol with its own protobuf coding (not
sandlens's protobuf-c code, so the two check each other):

  1. hybrid vsock: the client writes "CONNECT <port>\\n", the VMM answers
     "OK <host port>\\n" (kata-containers client.go HybridVSockDialer,
     Firecracker docs/vsock.md);
  2. ttrpc frames (containerd/ttrpc channel.go): 10-byte header, length u32
     BE, stream id u32 BE, type u8 (1 request, 2 response), flags u8;
     bodies ttrpc.Request{service=1, method=2, payload=3, timeout_nano=4,
     metadata=5} / ttrpc.Response{status=1 (google.rpc.Status code=1,
     message=2), payload=2};
  3. service "grpc.AgentService", method "StatsContainer":
     StatsContainerRequest{container_id=1} -> StatsContainerResponse
     {cgroup_stats=1}, field numbers of kata-containers
     src/libs/protocols/protos/agent.proto.

Usage: kata_agent_fake.py --socket PATH --stats FILE.json [--mode MODE]
       [--port 1024] [--state-dir DIR --sandbox ID] [--delay S]

FILE.json: {"<container id>": {"cpu_ns": .., "user_ns": .., "sys_ns": ..,
  "usage": .., "max_usage": .., "stats": {"inactive_file": ..}, "cache": ..,
  "pids": .., "nil": true (answer without cgroup_stats), "no_cpu": true,
  "no_memory": true}}; a container not in the file gets ttrpc status
  NOT_FOUND (code 5), as the agent answers for an unknown container.

Modes: normal | slow (answer after --delay s) | never (handshake, then read
requests and never answer) | nohandshake (answer "ERR\\n") | missing (the
first container asked gets NOT_FOUND) | replace (before the first answer,
replace the sandbox's state dir: new persist.json inode and hypervisor
UUID) | oversize (a header announcing 5 MiB) | wrongtype (type 1 answer) |
truncated (header, then half the body, then close) | badstream.
Writes "ready\\n" to stdout once listening; one thread per connection;
logs each request to stderr.
"""
import argparse
import json
import os
import shutil
import socket
import struct
import sys
import threading
import time


def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v) if v else b""


def field_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def msg(num, body):
    """A sub-message field, present even when empty."""
    return field_bytes(num, body)


def read_varint(b, i):
    shift = n = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def parse(b):
    """{field number: [values]} (bytes for length-delimited, int for varint)."""
    out, i = {}, 0
    while i < len(b):
        key, i = read_varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 2:
            ln, i = read_varint(b, i)
            v = bytes(b[i:i + ln])
            i += ln
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def cgroup_stats(c):
    """agent.proto CgroupStats{cpu_stats=1, memory_stats=2, pids_stats=3}."""
    body = b""
    if not c.get("no_cpu"):
        usage = (field_varint(1, c.get("cpu_ns", 0)) + field_varint(3, c.get("sys_ns", 0)) +
                 field_varint(4, c.get("user_ns", 0)))
        thr = (field_varint(1, c.get("periods", 0)) + field_varint(2, c.get("throttled_periods", 0)) +
               field_varint(3, c.get("throttled_ns", 0)))
        body += msg(1, msg(1, usage) + msg(2, thr))
    if not c.get("no_memory"):
        mem = field_varint(1, c.get("cache", 0))
        mem += msg(2, field_varint(1, c.get("usage", 0)) + field_varint(2, c.get("max_usage", 0)) +
                   field_varint(4, c.get("limit", 0)))
        if "swap" in c:
            mem += msg(3, field_varint(1, c["swap"]))
        for k, v in sorted(c.get("stats", {}).items()):
            # map<string, uint64> entry: key = 1, value = 2
            mem += field_bytes(6, field_bytes(1, k) + field_varint(2, v))
        body += msg(2, mem)
    if "pids" in c:
        body += msg(3, field_varint(1, c["pids"]))
    return body


def frame(sid, typ, body, flags=0):
    return struct.pack(">IIBB", len(body), sid, typ, flags) + body


def response(sid, payload=b"", code=0, message=""):
    body = b""
    if code:
        body += msg(1, field_varint(1, code) + field_bytes(2, message))
    if payload:
        body += field_bytes(2, payload)
    return frame(sid, 2, body)


def recv_exact(conn, n):
    b = bytearray()
    while len(b) < n:
        c = conn.recv(n - len(b))
        if not c:
            return None
        b += c
    return bytes(b)


class Server:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.first_done = False

    def replace_sandbox(self):
        d = os.path.join(self.a.state_dir, "sbs", self.a.sandbox)
        tmp = d + ".new"
        shutil.copytree(d, tmp)
        p = os.path.join(tmp, "persist.json")
        with open(p) as f:
            j = json.load(f)
        j["HypervisorState"]["UUID"] = "replaced-" + j["HypervisorState"].get("UUID", "")
        os.unlink(p)
        with open(p, "w") as f:
            json.dump(j, f)
        shutil.rmtree(d)
        os.rename(tmp, d)

    def handle(self, conn):
        a = self.a
        line = b""
        while not line.endswith(b"\n"):
            c = conn.recv(1)
            if not c:
                return
            line += c
        if not line.startswith(b"CONNECT %d" % a.port):
            conn.sendall(b"ERR\n")
            return
        if a.mode == "nohandshake":
            conn.sendall(b"ERR\n")
            return
        conn.sendall(b"OK 1073741824\n")
        with open(a.stats) as f:
            figures = json.load(f)
        while True:
            hdr = recv_exact(conn, 10)
            if hdr is None:
                return
            ln, sid, typ, _flags = struct.unpack(">IIBB", hdr)
            body = recv_exact(conn, ln)
            if body is None or typ != 1:
                return
            rq = parse(body)
            service = rq.get(1, [b""])[0].decode()
            method = rq.get(2, [b""])[0].decode()
            payload = rq.get(3, [b""])[0]
            timeout = rq.get(4, [0])[0]
            cid = parse(payload).get(1, [b""])[0].decode()
            sys.stderr.write("request %s/%s stream %d container %s timeout_nano %d\n" %
                             (service, method, sid, cid, timeout))
            sys.stderr.flush()
            if a.mode == "never":
                continue
            if a.mode == "slow":
                time.sleep(a.delay)
            with self.lock:
                first = not self.first_done
                self.first_done = True
            if a.mode == "replace" and first:
                self.replace_sandbox()
            if service != "grpc.AgentService" or method != "StatsContainer":
                conn.sendall(response(sid, code=12, message="unimplemented"))
                continue
            if a.mode == "oversize":
                conn.sendall(struct.pack(">IIBB", 5 << 20, sid, 2, 0))
                return
            if a.mode == "wrongtype":
                conn.sendall(frame(sid, 1, b""))
                continue
            if a.mode == "badstream":
                conn.sendall(response(sid + 2, b""))
                continue
            if a.mode == "truncated":
                r = response(sid, cgroup_stats(figures.get(cid, {})))
                conn.sendall(r[:10 + (len(r) - 10) // 2])
                return
            if (a.mode == "missing" and first) or cid not in figures:
                conn.sendall(response(sid, code=5, message="container %s not found" % cid))
                continue
            c = figures[cid]
            if c.get("nil"):
                conn.sendall(response(sid, b""))  # StatsContainerResponse without cgroup_stats
                continue
            conn.sendall(response(sid, msg(1, cgroup_stats(c))))

    def serve(self):
        a = self.a
        try:
            os.unlink(a.socket)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(a.socket)
        s.listen(16)
        print("ready", flush=True)
        while True:
            conn, _ = s.accept()
            t = threading.Thread(target=self.run_conn, args=(conn,), daemon=True)
            t.start()

    def run_conn(self, conn):
        try:
            self.handle(conn)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--stats", required=True)
    p.add_argument("--mode", default="normal")
    p.add_argument("--port", type=int, default=1024)
    p.add_argument("--delay", type=float, default=3.0)
    p.add_argument("--state-dir")
    p.add_argument("--sandbox")
    Server(p.parse_args()).serve()


if __name__ == "__main__":
    main()
