#!/usr/bin/env python3
"""The achieved rate of one TCP connection: a tiny sender and receiver, so
that a shaped link (tc ... tbf) is measured before it is used.

    tcp_rate.py recv PORT [--timeout S]     # accept one connection, read it to the end,
                                            # print "MB ... seconds ... Gb/s"
    tcp_rate.py send HOST PORT MBYTES       # send MBYTES MB of zeros, then close

The receiver times from the first byte to the end of the stream (the
connection's set-up is left out) and prints the rate in Gb/s (10^9 bits/s).
Python 3 standard library only.
"""

import argparse
import socket
import sys
import time

CHUNK = 1 << 20


def recv(port, timeout):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("0.0.0.0", port))
        server.listen(1)
        server.settimeout(timeout)
        conn, _ = server.accept()
        conn.settimeout(timeout)
        with conn:
            buf = bytearray(CHUNK)
            view = memoryview(buf)
            total = conn.recv_into(view)
            start = time.perf_counter()
            while True:
                n = conn.recv_into(view)
                if n == 0:
                    break
                total += n
            seconds = time.perf_counter() - start
    print("received %.1f MB in %.3f seconds: %.2f Gb/s" % (total / 1e6, seconds, total * 8 / seconds / 1e9))


def send(host, port, mbytes):
    data = bytes(CHUNK)
    left = int(mbytes * 1e6)
    for attempt in range(50):  # the receiver may still be starting
        try:
            sock = socket.create_connection((host, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("tcp_rate.py: cannot connect to %s:%d" % (host, port))
    with sock:
        while left > 0:
            n = min(left, CHUNK)
            sock.sendall(data[:n])
            left -= n


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("recv")
    r.add_argument("port", type=int)
    r.add_argument("--timeout", type=float, default=30)
    s = sub.add_parser("send")
    s.add_argument("host")
    s.add_argument("port", type=int)
    s.add_argument("mbytes", type=float)
    args = p.parse_args()
    if args.what == "recv":
        recv(args.port, args.timeout)
    else:
        send(args.host, args.port, args.mbytes)


if __name__ == "__main__":
    main()
