/// One entry of `no_proxy`: hosts that are reached directly, not through the proxy.
///
/// An entry is `*` (every host), a host name (`example.com` or `.example.com`: that host and
/// every host under it, never `badexample.com`), an IPv4 or IPv6 address (brackets optional) or
/// a CIDR range of them (`10.0.0.0/8`, `fe80::/10`), optionally followed by `:port` to limit it to
/// that port (IPv6 entries need brackets then: `[::1]:8080`).
struct NoProxyRule: Sendable, Equatable {
    /// Which hosts an entry matches.
    enum Pattern: Sendable, Equatable {
        /// Every host (`*`).
        case everything
        /// This domain and every name under it: lower case, without leading or trailing dots.
        case domain(String)
        /// Addresses whose first `prefixLength` bits are those of `address` (all of its bits for
        /// a plain address).
        case network(IPAddressBytes, prefixLength: Int)
    }

    /// The hosts it matches.
    let pattern: Pattern
    /// The only port it matches, or `nil` for every port.
    let port: Int?

    /// Parses every entry of a `no_proxy` value, separated by commas or white space; entries it
    /// cannot read (a bad port or prefix length) are left out, as curl does.
    static func parseList(_ value: String) -> [NoProxyRule] {
        value.split(whereSeparator: { $0 == "," || $0.isWhitespace }).compactMap { NoProxyRule($0) }
    }

    /// Parses one entry; `nil` when it is empty or unreadable.
    init?(_ entry: Substring) {
        var rest = entry
        var port: Int?
        if rest.first == "[" {
            // "[v6]", "[v6]/n" or "[v6/n]", each optionally followed by ":port".
            guard let close = rest.firstIndex(of: "]") else { return nil }
            var network = rest[rest.index(after: rest.startIndex)..<close]
            var after = rest[rest.index(after: close)...]
            if after.first == "/" {
                guard !network.contains("/") else { return nil }
                let end = after.firstIndex(of: ":") ?? after.endIndex
                network += after[..<end]
                after = after[end...]
            }
            if after.first == ":" {
                guard let parsed = Self.parsePort(after.dropFirst()) else { return nil }
                port = parsed
            } else if !after.isEmpty {
                return nil
            }
            guard let pattern = Self.parseNetwork(network) else { return nil }
            self.init(pattern: pattern, port: port)
            return
        }
        let colons = rest.filter { $0 == ":" }.count
        if colons == 1, let colon = rest.firstIndex(of: ":") {
            guard let parsed = Self.parsePort(rest[rest.index(after: colon)...]) else { return nil }
            port = parsed
            rest = rest[..<colon]
        }
        // Two colons or more: a bare IPv6 address or range, which cannot carry a port.
        if rest == "*" {
            self.init(pattern: .everything, port: port)
            return
        }
        if let pattern = Self.parseNetwork(rest) {
            self.init(pattern: pattern, port: port)
            return
        }
        guard colons <= 1, !rest.contains("/") else { return nil }
        var name = rest.lowercased()[...]
        if name.hasPrefix("*.") {
            name = name.dropFirst()
        }
        while name.first == "." {
            name = name.dropFirst()
        }
        while name.last == "." {
            name = name.dropLast()
        }
        guard !name.isEmpty else { return nil }
        self.init(pattern: .domain(String(name)), port: port)
    }

    /// Creates a rule from its parts.
    init(pattern: Pattern, port: Int?) {
        self.pattern = pattern
        self.port = port
    }

    /// Whether a request to `host` (lower case, without brackets or a trailing dot; `address` is
    /// its parsed form when it is an IP address) on `port` (the URL's, or its scheme's default)
    /// goes direct.
    func matches(host: String, address: IPAddressBytes?, port: Int?) -> Bool {
        if let rulePort = self.port, rulePort != port {
            return false
        }
        switch pattern {
        case .everything:
            return true
        case .domain(let domain):
            guard address == nil else { return false }
            return host == domain || (host.hasSuffix(domain) && host.dropLast(domain.count).last == ".")
        case .network(let network, let prefixLength):
            guard let address else { return false }
            return network.matches(address, prefixLength: prefixLength)
        }
    }

    /// A port from 1 to 65535 in decimal, or `nil`.
    private static func parsePort(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(text), (1...65535).contains(port) else {
            return nil
        }
        return port
    }

    /// An address or `address/bits` range, or `nil` when `text` is neither.
    private static func parseNetwork(_ text: Substring) -> Pattern? {
        var addressText = text
        var prefixLength: Int?
        if let slash = text.firstIndex(of: "/") {
            let bits = text[text.index(after: slash)...]
            guard !bits.isEmpty, bits.count <= 3, bits.allSatisfy({ $0.isASCII && $0.isNumber }), let parsed = Int(bits) else { return nil }
            prefixLength = parsed
            addressText = text[..<slash]
        }
        guard let address = IPAddressBytes(addressText) else { return nil }
        let bits = prefixLength ?? address.bytes.count * 8
        guard bits <= address.bytes.count * 8 else { return nil }
        return .network(address, prefixLength: bits)
    }
}
