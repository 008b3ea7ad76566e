#!/usr/bin/env python3
"""A service manager's notification socket for tests: binds a unix datagram
socket at argv[1] (mode 0777, so a non-root agent may send), appends each
datagram received to argv[2] as one line (newlines inside shown as '|'),
until killed."""
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
with open(out, "a", buffering=1) as f:
    f.write("LISTENING\n")
    while True:
        data = s.recv(4096)
        f.write(data.decode("utf-8", "replace").replace("\n", "|") + "\n")
