import Foundation

/// The origin a budget and a breaker count for: scheme, host and port, read from a URL's string
/// in one pass (`URL`'s `scheme`, `host` and `port` are each a parse of their own on Linux, and
/// this runs for every attempt). A WebSocket URL (`ws`, `wss`) counts for its HTTP origin, the
/// same server. `nil` for another scheme, or without a host.
struct ResilienceOrigin: Hashable, Sendable {
    /// `http` or `https`.
    let scheme: String
    /// The host, lowercased, without the brackets of an IPv6 address.
    let host: String
    /// The port, the scheme's default when the URL gives none.
    let port: Int

    /// `https://api.example.com:443`: what the session's state is kept under.
    let key: String

    init?(_ url: URL?) {
        guard let url else { return nil }
        self.init(string: url.absoluteString)
    }

    init?(string: String) {
        // Bytes, not characters: a URL's string is ASCII, and this runs for every attempt.
        var bytes = Array(string.utf8.prefix(300))
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 32
        }
        let given = bytes[..<colon]
        let defaultPort: Int
        if given.elementsEqual("http".utf8) || given.elementsEqual("ws".utf8) {
            scheme = "http"
            defaultPort = 80
        } else if given.elementsEqual("https".utf8) || given.elementsEqual("wss".utf8) {
            scheme = "https"
            defaultPort = 443
        } else {
            return nil
        }
        let start = colon + 3
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end += 1
        }
        var hostStart = start
        if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) { hostStart = at + 1 }
        var hostEnd = end
        var portStart: Int?
        if hostStart < end, bytes[hostStart] == UInt8(ascii: "[") {
            guard let close = bytes[hostStart..<end].firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostEnd = close
            hostStart += 1
            if close + 1 < end, bytes[close + 1] == UInt8(ascii: ":") { portStart = close + 2 }
        } else if let portColon = bytes[hostStart..<end].lastIndex(of: UInt8(ascii: ":")) {
            hostEnd = portColon
            portStart = portColon + 1
        }
        guard hostStart < hostEnd else { return nil }
        if let portStart, portStart < end {
            var port = 0
            for byte in bytes[portStart..<end] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), port <= 65535 else { return nil }
                port = port * 10 + Int(byte - UInt8(ascii: "0"))
            }
            guard port <= 65535 else { return nil }
            self.port = port
        } else {
            self.port = defaultPort
        }
        host = String(decoding: bytes[hostStart..<hostEnd], as: UTF8.self)
        key = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
