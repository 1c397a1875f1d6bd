import Foundation

/// The origin of an HTTP, HTTPS or WebSocket URL (RFC 6454): its scheme, host and port, with
/// the scheme and host in lower case and the scheme's default port filled in, so that
/// `https://API.example.com/a` and `https://api.example.com:443/b` have the same origin. A
/// WebSocket URL (`ws`, `wss`) has the origin of its HTTP counterpart: the same server. `nil` for
/// another scheme, without a host, or with a port that is not a number up to 65535.
///
/// The one origin type of the library: the resilience policies keep their state per origin,
/// credentials and the headers that carry them go only to the origin they were given for, and
/// a redirect to another origin drops them. It is read from the URL's string in one pass over
/// its bytes, with one allocation (its ``key``): `URL`'s `scheme`, `host` and `port` are each a
/// parse of their own on Linux, and the policies read an origin for every attempt. Two URLs
/// have the same origin only when their hosts are the same bytes (ignoring ASCII case): a host
/// written two ways (percent-encoded, say) gives two origins, which keeps a credential from the
/// other spelling rather than sending it there.
struct URLOrigin: Hashable, Sendable {
    /// `https://api.example.com:443`: what the session's state is kept under, lowercased, with
    /// the port always given.
    let key: String
    /// The port, the scheme's default when the URL gives none.
    let port: Int
    /// Whether the scheme is `https` (or `wss`).
    let isSecure: Bool

    /// `http` or `https`.
    var scheme: String { isSecure ? "https" : "http" }

    /// The host, lowercased, without the brackets of an IPv6 address (read from ``key``, for
    /// metrics and logs).
    var host: String {
        let afterScheme = key.utf8.dropFirst(isSecure ? 8 : 7)
        guard let colon = afterScheme.lastIndex(of: UInt8(ascii: ":")) else { return "" }
        var host = Substring(afterScheme[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return String(host)
    }

    /// The origin of `url`; `nil` without one (see the type's description).
    init?(_ url: URL?) {
        guard let url else { return nil }
        self.init(string: url.absoluteString)
    }

    /// The origin of the URL string `string`; `nil` without one.
    init?(string: String) {
        guard let (origin, _) = Self.read(string) else { return nil }
        self = origin
    }

    private init(key: String, port: Int, isSecure: Bool) {
        self.key = key
        self.port = port
        self.isSecure = isSecure
    }

    /// The origin of the URL string `string`, and how many of its first bytes say it: up to
    /// and including the `/` that begins its path (`nil` without one). Another URL that starts
    /// with those bytes has the same origin (``hasPrefix(_:of:length:)``).
    static func read(_ string: String) -> (URLOrigin, prefixLength: Int?)? {
        var string = string
        // A native string's bytes are contiguous: read in place, without a copy.
        guard let (key, port, isSecure, end) = string.withUTF8({ Self.parse($0) }) else { return nil }
        let hasPath = string.utf8.count > end && string.utf8[string.utf8.index(string.utf8.startIndex, offsetBy: end)] == UInt8(ascii: "/")
        return (URLOrigin(key: key, port: port, isSecure: isSecure), hasPath ? end + 1 : nil)
    }

    /// Whether `string` begins with the first `length` bytes of `prefix`.
    static func hasPrefix(_ string: String, of prefix: String, length: Int) -> Bool {
        var string = string
        var prefix = prefix
        return string.withUTF8 { bytes in
            prefix.withUTF8 { start in
                bytes.count >= length && start.count >= length && memcmp(bytes.baseAddress!, start.baseAddress!, length) == 0
            }
        }
    }

    /// Lowercases an ASCII letter.
    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// Whether `bytes` are `word`, ignoring ASCII case.
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        var index = bytes.startIndex
        for byte in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard lower(bytes[index]) == byte else { return false }
            index += 1
        }
        return true
    }

    /// The key, port and security of the URL string `bytes`, and where its authority ends.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, Int, Bool, Int)? {
        let count = bytes.count
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < count,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }
        let given = bytes[..<colon]
        let isSecure: Bool
        if equals(given, "http") || equals(given, "ws") {
            isSecure = false
        } else if equals(given, "https") || equals(given, "wss") {
            isSecure = true
        } else {
            return nil
        }
        let start = colon + 3
        var end = start
        while end < count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end += 1
        }
        var hostStart = start
        if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) { hostStart = at + 1 }
        // The host as written, with an IPv6 address's brackets.
        var hostEnd = end
        var portStart: Int?
        if hostStart < end, bytes[hostStart] == UInt8(ascii: "[") {
            guard let close = bytes[hostStart..<end].firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostEnd = close + 1
            guard hostStart + 1 < close else { return nil }
            if close + 1 < end, bytes[close + 1] == UInt8(ascii: ":") { portStart = close + 2 }
        } else if let portColon = bytes[hostStart..<end].lastIndex(of: UInt8(ascii: ":")) {
            hostEnd = portColon
            portStart = portColon + 1
        }
        guard hostStart < hostEnd else { return nil }
        var port = isSecure ? 443 : 80
        if let portStart, portStart < end {
            port = 0
            for byte in bytes[portStart..<end] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), port <= 65535 else { return nil }
                port = port * 10 + Int(byte - UInt8(ascii: "0"))
            }
            guard port <= 65535 else { return nil }
        }
        // scheme "://" host ":" port, written once.
        let scheme: StaticString = isSecure ? "https://" : "http://"
        var digits = 1
        var power = 10
        while port >= power {
            digits += 1
            power *= 10
        }
        let length = scheme.utf8CodeUnitCount + (hostEnd - hostStart) + 1 + digits
        let key = String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            for byte in UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount) {
                buffer[index] = byte
                index += 1
            }
            for byte in bytes[hostStart..<hostEnd] {
                buffer[index] = lower(byte)
                index += 1
            }
            buffer[index] = UInt8(ascii: ":")
            var remaining = port
            for position in stride(from: index + digits, to: index, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            return length
        }
        return (key, port, isSecure, end)
    }

    /// Whether `a` and `b` are both URLs of the same origin.
    static func same(_ a: URL?, _ b: URL?) -> Bool {
        guard let origin = URLOrigin(a) else { return false }
        return origin == URLOrigin(b)
    }

    static func == (lhs: URLOrigin, rhs: URLOrigin) -> Bool {
        lhs.key == rhs.key
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }
}
