#!/usr/bin/env python3
"""A test OTLP/HTTP receiver (t_otlp): records every POST body (gunzipped
when Content-Encoding: gzip) as DIR/NNNNN-<logs|metrics>-<status>.pb and a
line per request in DIR/requests.log; answers by DIR/mode, read per request:
ok (200, empty ExportServiceResponse), 429 (Retry-After: 1), 503 (no
Retry-After). Usage: otlp_receiver.py PORT DIR [CERT KEY [CLIENT_CA]]: with
CERT and KEY it serves https; with CLIENT_CA it also requires a client
certificate signed by that CA (mutual TLS)."""
import gzip, http.server, os, ssl, sys, threading

PORT, DIR = int(sys.argv[1]), sys.argv[2]
lock, seq = threading.Lock(), [0]


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        enc = self.headers.get("Content-Encoding", "")
        if enc == "gzip":
            body = gzip.decompress(body)
        try:
            mode = open(os.path.join(DIR, "mode")).read().strip()
        except OSError:
            mode = "ok"
        status = {"ok": 200, "429": 429, "503": 503}.get(mode, 200)
        sig = "logs" if self.path.endswith("/v1/logs") else "metrics" if self.path.endswith("/v1/metrics") else "other"
        with lock:
            seq[0] += 1
            name = "%05d-%s-%d.pb" % (seq[0], sig, status)
            with open(os.path.join(DIR, name), "wb") as f:
                f.write(body)
            with open(os.path.join(DIR, "requests.log"), "a") as f:
                f.write("%s %s %d ctype=%s enc=%s xtest=%s\n" % (name, self.path, status,
                        self.headers.get("Content-Type"), enc or "-", self.headers.get("X-Test", "-")))
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        if status == 429:
            self.send_header("Retry-After", "1")
        self.send_header("Content-Length", "0")
        self.end_headers()


http.server.ThreadingHTTPServer.allow_reuse_address = True
srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), H)
if len(sys.argv) >= 5:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    if len(sys.argv) >= 6:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(sys.argv[5])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
