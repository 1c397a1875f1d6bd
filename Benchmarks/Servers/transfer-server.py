#!/usr/bin/env python3
"""A transfer server for `MoyaBench --only transfer --url`, in a process of its own.

GET /bytes/N sends N bytes from a file in the files directory (made on first use, then sent
with sendfile(2), so that serving costs the server almost no CPU). POST /upload reads the body
into one reused buffer, counting it, and answers {"length": N}. HTTP/1.1 with keep-alive, one
thread per connection, 127.0.0.1 only.

    cd Benchmarks
    python3 Servers/transfer-server.py --port 8090 --files /dev/shm/moya-transfer
    .build/release/MoyaBench --only transfer --url http://127.0.0.1:8090
"""
import argparse
import os
import socket
import socketserver


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = bytearray(1 << 20)
        view = memoryview(buffer)
        pending = b""
        while True:
            while b"\r\n\r\n" not in pending:
                data = sock.recv(65536)
                if not data:
                    return
                pending += data
            head, _, pending = pending.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            # The body: what came with the head first, then straight into the buffer.
            received = min(len(pending), length)
            pending = pending[received:]
            while received < length:
                count = sock.recv_into(view, min(len(buffer), length - received))
                if count == 0:
                    return
                received += count
            if method == "GET" and path.startswith("/bytes/"):
                self.send_file(sock, int(path[len("/bytes/"):]))
            elif method == "POST" and path == "/upload":
                body = ('{"length":%d}' % received).encode()
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            else:
                sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    def send_file(self, sock, size):
        path = os.path.join(self.server.files, str(size))
        if not os.path.exists(path):
            with open(path + ".part", "wb") as file:
                block = bytes(range(256)) * 4096
                written = 0
                while written < size:
                    written += file.write(block[: size - written])
            os.rename(path + ".part", path)
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % size)
        with open(path, "rb") as file:
            offset = 0
            while offset < size:
                offset += os.sendfile(sock.fileno(), file.fileno(), offset, size - offset)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--files", default="/dev/shm/moya-transfer")
    arguments = parser.parse_args()
    os.makedirs(arguments.files, exist_ok=True)
    with Server(("127.0.0.1", arguments.port), Handler) as server:
        server.files = arguments.files
        server.serve_forever()


if __name__ == "__main__":
    main()
