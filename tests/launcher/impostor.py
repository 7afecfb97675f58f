#!/usr/bin/env python3
"""impostor.py — a stranger against mpiexec's proxy listener (tools/mpiexec/link_auth.h).

  impostor.py relay DIR HOST PROXY --proxy ADDRS PORT INDEX NAME
      A --launcher wrapper ("impostor.py relay DIR {host}"): runs the proxy through a TCP relay
      that records both directions of its link to mpiexec in DIR/rec.INDEX.{up,down}, and
      writes mpiexec's address to DIR/addr. The relay is the attacker's vantage point: it sees
      a genuine handshake, which the attack then replays.
  impostor.py flood DIR PID N SECONDS
      Holds N idle connections to mpiexec (process PID) for SECONDS; exit 1 if mpiexec used more
      than a fifth of that time on the CPU meanwhile (it spun on a listener it cannot serve).
  impostor.py attack DIR
      Garbage, a replay of the recorded handshake, a proof without the secret, an idle
      connection and a flood of connections, against the live job. Exit 0 when mpiexec never
      sent anything but a fresh CHALLENGE (nothing derived from the secret) and closed every
      impostor's connection; else prints what went wrong and exits 1.
"""
import os
import select
import socket
import struct
import sys
import time

HELLO, CHALLENGE, PROOF, ACCEPT = 1, 14, 15, 16  # enum mx_msg in tools/mpiexec/link.h


# Frame header: type, arg, payload length, sequence number, acknowledgement (link.h); the
# handshake's frames are unnumbered (0, 0).
def frame(t, arg, payload):
    return struct.pack("<IIIII", t, arg & 0xFFFFFFFF, len(payload), 0, 0) + payload


def frames(data):
    out = []
    while len(data) >= 20:
        t, a, n, _, _ = struct.unpack("<IIIII", data[:20])
        if len(data) < 20 + n:
            break
        out.append((t, a, data[20:20 + n]))
        data = data[20 + n:]
    return out


def relay(d, argv):
    proxy, addrs, port, index, name = argv[0], argv[2], int(argv[3]), argv[4], argv[5]
    up = None
    for ip in addrs.split(","):
        try:
            up = socket.create_connection((ip, port), timeout=5)
            break
        except OSError:
            continue
    if up is None:
        sys.exit("relay: cannot reach mpiexec at %s port %d" % (addrs, port))
    with open(os.path.join(d, "addr.tmp%s" % index), "w") as f:
        f.write("%s %d\n" % (up.getpeername()[0], port))
    os.rename(os.path.join(d, "addr.tmp%s" % index), os.path.join(d, "addr"))
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    if os.fork() == 0:
        down, _ = ls.accept()
        ls.close()
        rec = {up: open(os.path.join(d, "rec.%s.down" % index), "wb"),
               down: open(os.path.join(d, "rec.%s.up" % index), "wb")}
        other = {up: down, down: up}
        while True:
            ready, _, _ = select.select([up, down], [], [])
            for s in ready:
                b = s.recv(65536)
                if not b:
                    os._exit(0)
                rec[s].write(b)
                rec[s].flush()
                other[s].sendall(b)
    os.execv(proxy, [proxy, "--proxy", "127.0.0.1", str(ls.getsockname()[1]), index, name])


def talk(addr, send, steps=None, wait=3.0):
    """Connects, sends `send` (bytes, or a function of what came so far), returns all received
    bytes and whether the connection was closed by mpiexec within `wait` seconds."""
    s = socket.create_connection(addr, timeout=5)
    got = b""
    if send:
        s.sendall(send)
    end = time.time() + wait
    closed = False
    while time.time() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.time()))
        if not r:
            break
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            b = b""
        if not b:
            closed = True
            break
        got += b
        if steps:
            more = steps(got)
            if more:
                s.sendall(more)
    s.close()
    return got, closed


def attack(d):
    ip, port = open(os.path.join(d, "addr")).read().split()
    addr = (ip, int(port))
    bad = []

    def only_challenge(what, got, closed, not_equal=None):
        fs = frames(got)
        if not closed:
            bad.append("%s: mpiexec did not close the connection" % what)
        if any(t != CHALLENGE or len(p) != 32 for t, _, p in fs) or len(fs) > 1 or \
                len(got) != 52 * len(fs):
            bad.append("%s: mpiexec sent more than a challenge: %r" % (what, got[:100]))
        if not_equal is not None and fs and fs[0][2] == not_equal:
            bad.append("%s: mpiexec repeated a challenge" % what)
        print("%s: got %d bytes (%s), closed=%s" % (what, len(got),
              ",".join(str(t) for t, _, _ in fs) or "nothing", closed))

    # 1. garbage
    got, closed = talk(addr, b"\xff" * 12 + os.urandom(4084))
    if got or not closed:
        bad.append("garbage: got %d bytes, closed=%s" % (len(got), closed))
    print("garbage: got %d bytes, closed=%s" % (len(got), closed))
    # 2. replay of the recorded genuine handshake (HELLO and PROOF of host 0)
    up = frames(open(os.path.join(d, "rec.0.up"), "rb").read())
    down = frames(open(os.path.join(d, "rec.0.down"), "rb").read())
    if [t for t, _, _ in up[:2]] != [HELLO, PROOF] or [t for t, _, _ in down[:2]] != [CHALLENGE, ACCEPT]:
        bad.append("the recorded handshake is not HELLO/CHALLENGE/PROOF/ACCEPT")
    else:
        replay = frame(*up[0]) + frame(*up[1])
        got, closed = talk(addr, replay)
        only_challenge("replay", got, closed, not_equal=down[0][2])
        # the same, waiting for the new challenge before sending the old proof
        got, closed = talk(addr, frame(*up[0]), lambda g: frame(*up[1]) if len(g) == 52 else None)
        only_challenge("replay in step", got, closed, not_equal=down[0][2])
    # 3. a well-formed exchange without the secret (a proof of random bytes), for every index
    for index in (0, 1):
        got, closed = talk(addr, frame(HELLO, index, os.urandom(32)),
                           lambda g: frame(PROOF, 0, os.urandom(32)) if len(g) == 52 else None)
        only_challenge("no secret, host %d" % index, got, closed)
    # 4. an idle connection is closed after the authentication deadline (5 s)
    start = time.time()
    got, closed = talk(addr, b"", wait=12)
    took = time.time() - start
    print("idle: closed=%s after %.1f s" % (closed, took))
    if got or not closed or took < 3:
        bad.append("idle: got %d bytes, closed=%s after %.1f s" % (len(got), closed, took))
    # 5. a flood of idle connections: the job must not notice (checked by the caller)
    flood = [socket.create_connection(addr, timeout=5) for _ in range(100)]
    time.sleep(0.5)
    for s in flood:
        s.close()
    for b in bad:
        print("IMPOSTOR FAIL: " + b)
    return 1 if bad else 0


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood(d, pid, n, secs):
    ip, port = open(os.path.join(d, "addr")).read().split()
    before, start = cpu_seconds(pid), time.time()
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection((ip, int(port)), timeout=2))
        except OSError:
            break  # the backlog is full: mpiexec stopped accepting, as it should
    time.sleep(max(0.0, secs - (time.time() - start)))
    used, took = cpu_seconds(pid) - before, time.time() - start
    for s in socks:
        s.close()
    print("flood: %d connections for %.1f s, mpiexec used %.2f s of CPU" % (len(socks), took, used))
    return 1 if used > took / 5 else 0


if __name__ == "__main__":
    if sys.argv[1] == "relay":
        relay(sys.argv[2], sys.argv[4:])
    elif sys.argv[1] == "flood":
        sys.exit(flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])))
    else:
        sys.exit(attack(sys.argv[2]))
