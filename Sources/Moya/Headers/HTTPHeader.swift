import Foundation

/// One HTTP header: a name and a value, as Alamofire's `HTTPHeader` (which Moya 15 exposes).
///
/// Names compare as written here; ``HTTPHeaders`` looks them up case-insensitively.
///
/// ```swift
/// let header = HTTPHeader.authorization(bearerToken: token)
/// ```
public struct HTTPHeader: Hashable, Sendable {
    /// The header's name, such as `Content-Type`.
    public let name: String

    /// The header's value.
    public let value: String

    /// Creates a header.
    ///
    /// - Parameters:
    ///   - name:  The header's name.
    ///   - value: The header's value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPHeader: CustomStringConvertible {
    /// `Name: value`.
    public var description: String { "\(name): \(value)" }
}

extension HTTPHeader {
    /// An `Accept` header.
    public static func accept(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept", value: value)
    }

    /// An `Accept-Charset` header.
    public static func acceptCharset(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Charset", value: value)
    }

    /// An `Accept-Language` header.
    public static func acceptLanguage(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Language", value: value)
    }

    /// An `Accept-Encoding` header.
    public static func acceptEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Encoding", value: value)
    }

    /// A Basic `Authorization` header for a user name and password.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        let credential = Data("\(username):\(password)".utf8).base64EncodedString()
        return authorization("Basic \(credential)")
    }

    /// A Bearer `Authorization` header.
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// An `Authorization` header with the given value.
    public static func authorization(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Authorization", value: value)
    }

    /// A `Content-Disposition` header.
    public static func contentDisposition(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Disposition", value: value)
    }

    /// A `Content-Encoding` header.
    public static func contentEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Encoding", value: value)
    }

    /// A `Content-Type` header.
    public static func contentType(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Type", value: value)
    }

    /// A `User-Agent` header.
    public static func userAgent(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "User-Agent", value: value)
    }

    /// The `Accept-Encoding` a session sends by default: the encodings the transport decodes.
    public static let defaultAcceptEncoding = acceptEncoding("gzip;q=1.0, deflate;q=0.9")

    /// The `Accept-Language` a session sends by default: the user's preferred languages.
    public static let defaultAcceptLanguage = acceptLanguage(AcceptLanguage.current)

    /// The `User-Agent` a session sends by default: the program's name (and its bundle's version,
    /// when it has one), the operating system, the Swift version and `Moya/<version>`, such as
    /// `GatewayService (Debian GNU/Linux 12 bookworm; Linux 6.18.44) Swift/6.3 Moya/0.1.0`. An
    /// app whose main bundle has an identifier sends Alamofire's format instead, ending in
    /// `Moya/<version>` too.
    public static let defaultUserAgent = userAgent(UserAgent.current.value)
}
