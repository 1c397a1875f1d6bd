import Foundation

/// How a client's connections to the server are spread over this process's event loops, read
/// from `/proc` (Linux only; elsewhere it finds nothing).
///
/// Every NIO event loop has an epoll instance of its own, and `/proc/self/fdinfo/<epoll fd>`
/// lists the file descriptors registered with it. A client's connections are the TCP sockets
/// whose remote port is the server's; the epoll instance a socket is registered with is the loop
/// its channel lives on. The split decided when a pool opens its connections (4+4 or 7+1, say)
/// moves the rate at concurrency 32 by 10 % or more, for raw AsyncHTTPClient as much as for the
/// provider, so the benchmark prints it.
struct LoopSplit {
    /// The client sockets connected to `port`, by socket inode, with the epoll instance (its fd
    /// number) each is registered with.
    let sockets: [String: Int]
    /// Set when some of these connections were gone by the end of the round (the pool replaced
    /// them, possibly on another loop).
    var changed = false

    init(sockets: [String: Int]) {
        self.sockets = sockets
    }

    /// The connections to the server at `port` now.
    static func sample(serverPort port: Int) -> LoopSplit {
        let remoteInodes = clientSocketInodes(remotePort: port)
        guard !remoteInodes.isEmpty,
            let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return LoopSplit(sockets: [:]) }
        var inodeByFD: [Int: String] = [:]
        var epolls: [Int] = []
        for entry in entries {
            guard let fd = Int(entry),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
            else { continue }
            if target == "anon_inode:[eventpoll]" {
                epolls.append(fd)
            } else if target.hasPrefix("socket:[") {
                let inode = String(target.dropFirst("socket:[".count).dropLast())
                if remoteInodes.contains(inode) { inodeByFD[fd] = inode }
            }
        }
        var sockets: [String: Int] = [:]
        for epoll in epolls {
            guard let info = ProcFile.read("/proc/self/fdinfo/\(epoll)") else { continue }
            for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 1, let fd = Int(fields[1]), let inode = inodeByFD[fd] else { continue }
                sockets[inode] = epoll
            }
        }
        return LoopSplit(sockets: sockets)
    }

    /// The sockets that are here and not in `earlier`: the connections one client opened.
    func subtracting(_ earlier: LoopSplit) -> LoopSplit {
        LoopSplit(sockets: sockets.filter { earlier.sockets[$0.key] == nil })
    }

    /// Whether all of these connections are still open, on the same loops, in `later`.
    func isStill(in later: LoopSplit) -> Bool {
        sockets.allSatisfy { later.sockets[$0.key] == $0.value }
    }

    /// Connections per loop, largest first, as "5+3" ("5+3!" if some were replaced during the
    /// round); "-" when none were found.
    var summary: String {
        guard !sockets.isEmpty else { return "-" }
        var counts: [Int: Int] = [:]
        for epoll in sockets.values { counts[epoll, default: 0] += 1 }
        return counts.values.sorted(by: >).map(String.init).joined(separator: "+") + (changed ? "!" : "")
    }

    /// Inodes of the established TCP sockets whose remote port is `port` (`/proc/self/net/tcp`
    /// and `tcp6`).
    private static func clientSocketInodes(remotePort port: Int) -> Set<String> {
        var inodes: Set<String> = []
        let wanted = String(format: "%04X", port)
        for file in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let table = ProcFile.read(file) else { continue }
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
                guard fields.count > 9, fields[3] == "01", fields[2].hasSuffix(":" + wanted) else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }
}
