#!/usr/bin/env python3
"""The link between the host and the test namespace, in user space: what `tc netem` does, for a
kernel that has no netem.

It opens two TUN devices, one in the host's network namespace and one in the test namespace, and
copies every IP packet from one to the other. On the way it applies the conditions written in a
small JSON file, which `.ci/netem.sh set ...` rewrites and the wire reads again when it changes:

    {"delay_ms": 200, "jitter_ms": 50, "loss": 0.05, "reorder": 0.0, "rate_kbit": 0, "limit": 1000,
     "down": false}

- delay and jitter: each packet waits delay ± jitter (uniform); with jitter, packets can overtake
  each other, as on a real path;
- loss: the share of packets dropped at random;
- reorder: the share of packets sent at once, ahead of those waiting their delay;
- rate: the link's bandwidth in kbit/s (0 for no limit); packets queue behind each other, for
  at most RATE_QUEUE_SECONDS (as `tbf`'s latency): a packet that would wait longer is dropped,
  as a router's full queue drops it. Without that bound a sender would fill the queue without
  end, its round-trip time would grow to tens of seconds, and after an outage its kernel would
  wait minutes (RTO backoff from such a round trip) before sending again;
- limit: the most packets waiting in each direction (1000 by default, as netem's); more are
  dropped;
- down: every packet is dropped (the link is down; TCP connections stay open on both ends).

The kernels on both sides run real TCP over it: losses are retransmitted, a down link stalls
connections until the link returns or a timeout fires.

    netem-wire.py <namespace> <host tun> <namespace tun> <conditions file>
"""

import ctypes
import fcntl
import heapq
import json
import os
import random
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
# The longest a packet may queue for a rate-limited link.
RATE_QUEUE_SECONDS = 0.2
DEFAULT_LIMIT = 1000


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def enter_namespace(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns " + path)
    os.close(fd)


class Conditions:
    def __init__(self, path):
        self.path = path
        self.mtime = None
        self.values = {}
        self.reload()

    def reload(self):
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except FileNotFoundError:
            self.values = {}
            return
        if mtime == self.mtime:
            return
        self.mtime = mtime
        try:
            with open(self.path) as file:
                self.values = json.load(file)
        except (OSError, ValueError):
            pass

    def get(self, key, default=0):
        return self.values.get(key, default) or default


def main():
    namespace, host_name, ns_name, conditions_path = sys.argv[1:5]
    host_fd = open_tun(host_name)
    enter_namespace("/var/run/netns/" + namespace)
    ns_fd = open_tun(ns_name)
    # Signals that both devices exist: the script configures them once it sees this line.
    print("ready", flush=True)

    conditions = Conditions(conditions_path)
    peer = {host_fd: ns_fd, ns_fd: host_fd}
    # Packets waiting their time: (release time, sequence, destination fd, packet).
    waiting = []
    sequence = 0
    # When each direction's link is free again, for the rate limit.
    link_free = {host_fd: 0.0, ns_fd: 0.0}
    # How many packets wait for each destination.
    queued = {host_fd: 0, ns_fd: 0}
    last_reload = 0.0

    while True:
        now = time.monotonic()
        if now - last_reload > 0.05:
            conditions.reload()
            last_reload = now
        timeout = 0.05
        if waiting:
            timeout = max(0.0, min(timeout, waiting[0][0] - now))
        readable, _, _ = select.select([host_fd, ns_fd], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not packet:
                    break
                if conditions.get("down", False):
                    continue
                if random.random() < conditions.get("loss", 0.0):
                    continue
                if queued[peer[fd]] >= conditions.get("limit", DEFAULT_LIMIT):
                    continue
                release = now
                if random.random() >= conditions.get("reorder", 0.0):
                    delay = conditions.get("delay_ms", 0) / 1000.0
                    jitter = conditions.get("jitter_ms", 0) / 1000.0
                    release += max(0.0, delay + random.uniform(-jitter, jitter))
                rate = conditions.get("rate_kbit", 0)
                if rate > 0:
                    # The packet leaves once the link has sent the ones before it.
                    start = max(now, link_free[fd])
                    if start - now > RATE_QUEUE_SECONDS:
                        continue
                    link_free[fd] = start + len(packet) * 8 / (rate * 1000.0)
                    release = max(release, link_free[fd])
                sequence += 1
                queued[peer[fd]] += 1
                heapq.heappush(waiting, (release, sequence, peer[fd], packet))
        now = time.monotonic()
        while waiting and waiting[0][0] <= now:
            _, _, destination, packet = heapq.heappop(waiting)
            queued[destination] -= 1
            if conditions.get("down", False):
                continue
            try:
                os.write(destination, packet)
            except OSError:
                pass


if __name__ == "__main__":
    main()
