#!/usr/bin/env python3
"""Hostile HTTP clients for the API tests (t_api_lockout.sh, t_api_load.sh,
t_api_badinput.sh). Loopback only.

  sl_slowconn.py slow HOST PORT N INTERVAL DURATION
      Keep N connections open for DURATION seconds, each sending a request
      line and then one header line every INTERVAL seconds, never ending the
      headers (a slowloris). A connection the server closes is reopened.
      Prints one JSON line: opened, closed_by_server, refused (connect
      failed), max_open (most open at once), max_life_s (longest a
      connection lived before the server closed it).
  sl_slowconn.py raw HOST PORT COUNT
      Send COUNT malformed requests (each on its own connection), reading
      whatever comes back. Prints the number sent.
"""
import json
import selectors
import socket
import sys
import time


def slow(host, port, n, interval, duration):
    sel = selectors.DefaultSelector()
    conns = {}  # sock -> [opened_at, next_send_at]
    st = {"opened": 0, "closed_by_server": 0, "refused": 0, "max_open": 0, "max_life_s": 0.0}
    end = time.monotonic() + duration

    def open_one():
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((host, port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            st["refused"] += 1
            s.close()
            return
        s.setblocking(False)
        now = time.monotonic()
        conns[s] = [now, now + interval]
        sel.register(s, selectors.EVENT_READ)
        st["opened"] += 1

    while time.monotonic() < end:
        opened = 0
        while len(conns) < n and time.monotonic() < end and opened < 32:
            opened += 1
            before = st["refused"]
            open_one()
            if st["refused"] > before:
                break
        st["max_open"] = max(st["max_open"], len(conns))
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server (or reset)
                life = time.monotonic() - conns[s][0]
                st["closed_by_server"] += 1
                st["max_life_s"] = max(st["max_life_s"], round(life, 2))
                sel.unregister(s)
                s.close()
                del conns[s]
        now = time.monotonic()
        for s, c in list(conns.items()):
            if now >= c[1]:
                c[1] = now + interval
                try:
                    s.send(b"X-Slow: 1\r\n")
                except OSError:
                    pass
        time.sleep(0.1)  # at most ~320 connects/s: a test, not a benchmark
    for s in conns:
        s.close()
    print(json.dumps(st))


BAD = [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",  # no Host
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
    b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
]


def raw(host, port, count):
    for i in range(count):
        try:
            s = socket.create_connection((host, port), timeout=2)
            s.sendall(BAD[i % len(BAD)])
            try:
                while s.recv(4096):
                    pass
            except OSError:
                pass
            s.close()
        except OSError:
            pass
    print(count)


if __name__ == "__main__":
    if sys.argv[1] == "slow":
        slow(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]))
    elif sys.argv[1] == "raw":
        raw(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: see the top of this file")
