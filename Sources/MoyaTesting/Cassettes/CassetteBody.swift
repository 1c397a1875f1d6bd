import Foundation

/// A recorded body: text when the bytes are readable text, base64 otherwise.
///
/// On disk it is an object with two members, `encoding` (`"utf8"` or `"base64"`) and
/// `content`:
///
/// ```json
/// { "content" : "{\"id\":1}", "encoding" : "utf8" }
/// { "content" : "AAECAwQ=", "encoding" : "base64" }
/// ```
///
/// A body is stored as text when it is valid UTF-8 without control characters other than
/// tab, line feed and carriage return; anything else (images, compressed data, the bytes of a
/// protocol buffer) is stored as base64. Either way the bytes replayed are the bytes recorded.
public struct CassetteBody: Codable, Sendable, Equatable {
    /// How ``content`` holds the bytes.
    public enum Encoding: String, Codable, Sendable {
        /// ``CassetteBody/content`` is the body itself, as UTF-8 text.
        case utf8
        /// ``CassetteBody/content`` is the body in base64.
        case base64
    }

    /// How ``content`` holds the bytes.
    public var encoding: Encoding

    /// The body as text (``Encoding/utf8``) or in base64 (``Encoding/base64``).
    public var content: String

    /// Creates a body from its stored form.
    ///
    /// - Parameters:
    ///   - encoding: How `content` holds the bytes.
    ///   - content:  The text, or the base64 of the bytes.
    public init(encoding: Encoding, content: String) {
        self.encoding = encoding
        self.content = content
    }

    /// Stores `data`: as text when it reads as text (see the type's description), as base64
    /// otherwise.
    ///
    /// - Parameter data: The bytes of the body.
    public init(_ data: Data) {
        if let text = Self.text(of: data) {
            self.init(encoding: .utf8, content: text)
        } else {
            self.init(encoding: .base64, content: data.base64EncodedString())
        }
    }

    /// The bytes of the body; empty when base64 ``content`` does not decode (a file edited by
    /// hand: loading a cassette checks every body, see ``Cassette/init(data:name:)``).
    public var data: Data {
        switch self.encoding {
        case .utf8: return Data(self.content.utf8)
        case .base64: return Data(base64Encoded: self.content) ?? Data()
        }
    }

    /// Whether base64 ``content`` decodes (text always does).
    var isValid: Bool {
        self.encoding == .utf8 || Data(base64Encoded: self.content) != nil
    }

    /// `data` as text, when it is UTF-8 without control characters but tab, line feed and
    /// carriage return.
    static func text(of data: Data) -> String? {
        // The round trip rules out what decoding would change, such as a byte order mark.
        guard let text = String(data: data, encoding: .utf8), Data(text.utf8) == data else { return nil }
        let readable = text.unicodeScalars.allSatisfy { scalar in
            scalar == "\t" || scalar == "\n" || scalar == "\r" || !(scalar.value < 0x20 || scalar.value == 0x7F)
        }
        return readable ? text : nil
    }
}
