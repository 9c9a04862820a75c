#!/usr/bin/env python3
"""A pipelining client for the Redis protocol (RESP), for bench/apps: sends
a file of RESP commands to 127.0.0.1:PORT as fast as the server reads them,
reads every reply, and writes what the replies were -- their count and a
SHA-256 of the reply bytes, plus the first replies verbatim -- so that two
servers can be compared for identical output without storing megabytes.

usage: resp_client.py PORT COMMANDS.resp OUT.txt [--shutdown]
The stream ends with ECHO of a marker; the client reads until that reply.
--shutdown then sends SHUTDOWN NOSAVE. Waits up to 30 s for the server."""
import hashlib
import socket
import sys
import threading
import time

MARKER = b"vprof-apps-end-of-stream"


def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def connect(port):
    deadline = time.time() + 30
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    port, commands, out = int(argv[0]), argv[1], argv[2]
    s = connect(port)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # the server is up once it answers PING
    s.sendall(cmd(b"PING"))
    if not s.recv(64).startswith(b"+PONG"):
        print("resp_client: no PONG", file=sys.stderr)
        return 1
    with open(commands, "rb") as f:
        data = f.read() + cmd(b"ECHO", MARKER)

    def send():
        s.sendall(data)
    t = threading.Thread(target=send)
    t.start()
    end = b"$%d\r\n%s\r\n" % (len(MARKER), MARKER)
    h, head, tail, total = hashlib.sha256(), bytearray(), b"", 0
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            print("resp_client: server closed the connection", file=sys.stderr)
            return 1
        total += len(chunk)
        h.update(chunk)
        if len(head) < 4096:
            head += chunk[:4096 - len(head)]
        tail = (tail + chunk)[-len(end):]
        if tail == end:
            break
    t.join()
    with open(out, "w") as f:
        f.write("reply bytes: %d\nsha256: %s\nfirst replies:\n%s\n"
                % (total, h.hexdigest(), head.decode("latin-1")))
    if "--shutdown" in argv:
        s.sendall(cmd(b"SHUTDOWN", b"NOSAVE"))
        try:
            s.recv(64)
        except OSError:
            pass
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
