extension String {
    /// Whether the two strings are equal ignoring ASCII case (header names are ASCII).
    func caseInsensitiveEquals(_ other: String) -> Bool {
        var left = utf8.makeIterator()
        var right = other.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case let (a?, b?):
                if a != b, Self.asciiLowercased(a) != Self.asciiLowercased(b) { return false }
            default:
                return false
            }
        }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
