/// The percent-escaping that the request path does by hand (a `URLComponents` round trip costs
/// more than the rest of building a request): which bytes stay as they are in a query or a path,
/// and the `%XX` writer.
enum PercentEscaping {
    /// Which bytes stay unescaped.
    enum Allowed {
        /// ASCII letters, digits and `-._~/?`: `urlQueryAllowed` without `:#[]@!$&'()*+,;=`,
        /// what `URLEncoding` keeps in keys and values.
        case queryComponent
        /// ASCII letters, digits, `-._~`, the sub-delimiters `!$&'()*+,;=`, and `:@/`:
        /// `urlPathAllowed`, what `appendingPathComponent` keeps.
        case path

        func contains(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                return true
            case UInt8(ascii: "?"):
                return self == .queryComponent
            case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
                UInt8(ascii: "@"):
                return self == .path
            default:
                return false
            }
        }
    }

    /// Appends `bytes` to `buffer`, each byte outside `allowed` as `%XX` (upper-case hex).
    static func append<Bytes: Sequence>(_ bytes: Bytes, to buffer: inout [UInt8], allowed: Allowed) where Bytes.Element == UInt8 {
        for byte in bytes {
            if allowed.contains(byte) {
                buffer.append(byte)
            } else {
                buffer.append(UInt8(ascii: "%"))
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// Upper-case hexadecimal digits as ASCII bytes.
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
