import Foundation

/// An HTTP request method, such as `GET` or `POST`.
///
/// `Method` is an open set: the common verbs are static members, and any other verb can be
/// created with ``init(rawValue:)``. The raw value is the upper-case verb sent on the wire.
public struct Method: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `CONNECT`
    public static let connect = Method(rawValue: "CONNECT")
    /// `DELETE`
    public static let delete = Method(rawValue: "DELETE")
    /// `GET`
    public static let get = Method(rawValue: "GET")
    /// `HEAD`
    public static let head = Method(rawValue: "HEAD")
    /// `OPTIONS`
    public static let options = Method(rawValue: "OPTIONS")
    /// `PATCH`
    public static let patch = Method(rawValue: "PATCH")
    /// `POST`
    public static let post = Method(rawValue: "POST")
    /// `PUT`
    public static let put = Method(rawValue: "PUT")
    /// `QUERY`
    public static let query = Method(rawValue: "QUERY")
    /// `TRACE`
    public static let trace = Method(rawValue: "TRACE")

    /// The verb as it is sent on the wire, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its verb, for example `Method(rawValue: "PROPFIND")`.
    ///
    /// Any string is accepted here, but a request whose method is not an HTTP token (RFC 9110:
    /// letters, digits, the backtick and `!#$%&'*+-.^_|~`; no spaces or line breaks) fails with
    /// ``RequestValidationError/invalidMethod(_:)`` before anything is sent.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The verb, for example `"GET"`.
    public var description: String { rawValue }
}

extension Method {
    /// Whether a multipart body may be sent with this method (`POST`, `PUT`, `PATCH`, `CONNECT`).
    public var supportsMultipart: Bool {
        switch self {
        case .post, .put, .patch, .connect: return true
        default: return false
        }
    }
}
