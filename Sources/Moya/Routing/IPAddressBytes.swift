/// An IPv4 or IPv6 address as its bytes (4 or 16, network order), parsed from text without the
/// system's resolver, for comparing hosts with the addresses and ranges of `no_proxy`.
struct IPAddressBytes: Sendable, Equatable {
    /// The address's bytes: 4 for IPv4, 16 for IPv6.
    let bytes: [UInt8]

    /// Whether the address is an IPv4 one.
    var isIPv4: Bool { bytes.count == 4 }

    /// Parses a dotted IPv4 address (`192.0.2.1`: four decimal numbers up to 255, no leading
    /// zeros) or an IPv6 address (`2001:db8::1`, `::ffff:192.0.2.1`), without brackets; `nil` for
    /// anything else.
    init?(_ text: Substring) {
        if let v4 = Self.parseIPv4(text) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// Whether the first `prefixLength` bits of this address and `other` are the same; addresses
    /// of different families never match.
    func matches(_ other: IPAddressBytes, prefixLength: Int) -> Bool {
        guard bytes.count == other.bytes.count, prefixLength >= 0, prefixLength <= bytes.count * 8 else { return false }
        let wholeBytes = prefixLength / 8
        for index in 0..<wholeBytes where bytes[index] != other.bytes[index] {
            return false
        }
        let remainingBits = prefixLength % 8
        guard remainingBits > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - remainingBits)
        return bytes[wholeBytes] & mask == other.bytes[wholeBytes] & mask
    }

    /// The four bytes of a dotted IPv4 address, or `nil`.
    private static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            guard part.count == 1 || part.first != "0", let value = UInt8(part) else { return nil }
            result.append(value)
        }
        return result
    }

    /// The sixteen bytes of an IPv6 address, or `nil`.
    private static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        let compressed = halves.count == 2
        guard let head = parseGroups(Substring(halves[0]), mayEndWithIPv4: !compressed) else { return nil }
        var tail: [UInt8] = []
        if compressed {
            guard let parsed = parseGroups(Substring(halves[1]), mayEndWithIPv4: true) else { return nil }
            tail = parsed
        }
        if compressed {
            // "::" stands for at least one group of zeros.
            guard head.count + tail.count <= 14 else { return nil }
            return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
        }
        return head.count == 16 ? head : nil
    }

    /// The bytes of colon-separated hexadecimal groups (none for an empty string), the last of
    /// which may be a dotted IPv4 address when `mayEndWithIPv4`; `nil` when malformed.
    private static func parseGroups(_ text: Substring, mayEndWithIPv4: Bool) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        let groups = text.split(separator: ":", omittingEmptySubsequences: false)
        var result: [UInt8] = []
        for (index, group) in groups.enumerated() {
            if index == groups.count - 1, mayEndWithIPv4, group.contains(".") {
                guard let v4 = parseIPv4(group) else { return nil }
                result += v4
                continue
            }
            guard !group.isEmpty, group.count <= 4, group.allSatisfy(\.isHexDigit), let value = UInt16(group, radix: 16) else { return nil }
            result += [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        return result
    }
}
