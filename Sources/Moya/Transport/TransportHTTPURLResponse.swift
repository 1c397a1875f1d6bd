import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `HTTPURLResponse` a session hands out: Foundation's, with ``suggestedFilename`` as Apple
/// platforms work it out.
///
/// Linux Foundation answers `"Unknown"` when a response has no `Content-Disposition` file name
/// (Apple answers with the URL's last path component, which download destinations often use),
/// ignores `filename*`, and passes `..` through. Here the name is always a single, harmless
/// path component: a server cannot make a destination that uses it point anywhere else.
///
/// `@unchecked Sendable` as its superclass is: the object is immutable once created.
final class TransportHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    /// The file name a download of this response would have: the `Content-Disposition`
    /// `filename*` (RFC 8187) or `filename` parameter, else the URL's last path component, else
    /// `"Unknown"`. Path separators and control characters become `_`, and a name of `.` or
    /// `..` is not used.
    override var suggestedFilename: String? {
        if let disposition = value(forHTTPHeaderField: "Content-Disposition"),
            let name = Self.fileName(inContentDisposition: disposition).flatMap(Self.sanitized)
        {
            return name
        }
        if let component = url?.lastPathComponent, component != "/", let name = Self.sanitized(component) {
            return name
        }
        return "Unknown"
    }

    /// The file name a `Content-Disposition` value gives, as sent: `filename*` wins over
    /// `filename`.
    static func fileName(inContentDisposition value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in Self.parameters(of: value) {
            switch parameter.name {
            case "filename*": extended = extended ?? Self.decodeExtendedValue(parameter.value)
            case "filename": plain = plain ?? parameter.value
            default: break
            }
        }
        return extended ?? plain
    }

    /// The `name=value` parameters after the disposition type, names lowercased and quoted
    /// strings unquoted.
    private static func parameters(of value: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var rest = Substring(value)
        // Skip the disposition type.
        guard let firstSemicolon = rest.firstIndex(of: ";") else { return [] }
        rest = rest[rest.index(after: firstSemicolon)...]
        while !rest.isEmpty {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == ";" })
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" })
            var parameterValue = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        parameterValue.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        closed = true
                        break
                    } else {
                        parameterValue.append(character)
                    }
                }
                if !closed { return result }
                rest = rest.drop(while: { $0 != ";" })
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                parameterValue = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            result.append((name, parameterValue))
        }
        return result
    }

    /// Decodes an RFC 8187 value, `charset'language'percent-encoded`; UTF-8 and ISO-8859-1 are
    /// understood.
    private static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        var bytes: [UInt8] = []
        var iterator = parts[2].utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        switch charset {
        case "utf-8": return String(bytes: bytes, encoding: .utf8)
        case "iso-8859-1": return String(bytes: bytes, encoding: .isoLatin1)
        default: return nil
        }
    }

    /// `name` as one harmless path component, or `nil` when nothing usable is left.
    static func sanitized(_ name: String) -> String? {
        let replaced = String(
            name.unicodeScalars.map { scalar -> Character in
                if scalar == "/" || scalar == "\\" || scalar.properties.generalCategory == .control {
                    return "_"
                }
                return Character(scalar)
            }
        ).trimmingCharacters(in: .whitespaces)
        guard !replaced.isEmpty, replaced != ".", replaced != ".." else { return nil }
        return replaced
    }
}
