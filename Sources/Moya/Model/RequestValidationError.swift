import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request was refused before anything was sent.
///
/// Delivered as ``MoyaError/underlying(_:_:)``, without a response: no connection was made for
/// the request.
public enum RequestValidationError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// A `GET` request carries a body, which HTTP clients must not send.
    case bodyDataInGETRequest(Data)

    /// `stubRequest` was called with ``StubBehavior/never`` (Moya traps here).
    case stubbingDisabled

    /// The method is not an HTTP method token (RFC 9110, section 9.1: letters, digits, the
    /// backtick and `!#$%&'*+-.^_|~`, at least one): it contains a space, a line break or another character
    /// that would change the request line, or it is empty.
    case invalidMethod(String)

    /// The URL names a port outside `1...65535`.
    case invalidPort(Int)

    /// A header name is not an HTTP token (RFC 9110, section 5.1): it is empty or contains a
    /// space, a colon, a line break or another character outside the token characters. The
    /// description shows the name only up to its first such character, since a value pasted
    /// into a name (`Authorization: Bearer …`) would otherwise be printed.
    case invalidHeaderName(String)

    /// The value of the header with this name contains a control character (CR, LF, NUL, or
    /// another one except tab), which could end the header early. The value itself is left out,
    /// as it may be a secret.
    case invalidHeaderValue(name: String)

    /// A `TRACE` request carries a body, which HTTP clients must not send.
    case bodyInTRACERequest

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .bodyDataInGETRequest(let data):
            return "A GET request must not have a body (\(data.count) bytes were given)."
        case .stubbingDisabled:
            return "A stubbed request was made with StubBehavior.never."
        case .invalidMethod(let method):
            return
                "The method \(String(reflecting: method)) is not a valid HTTP method (only letters, digits and !#$%&'*+-.^_`|~ are allowed); nothing was sent."
        case .invalidPort(let port):
            return "The URL's port \(port) is outside 1...65535; nothing was sent."
        case .invalidHeaderName(let name):
            return "The header name \(HeaderField.displayName(name)) is not valid (only letters, digits and !#$%&'*+-.^_`|~ are allowed); nothing was sent."
        case .invalidHeaderValue(let name):
            return "The value of the header \(String(reflecting: name)) contains a control character such as CR or LF; nothing was sent."
        case .bodyInTRACERequest:
            return "A TRACE request must not have a body; nothing was sent."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "Request validation error" }
}

extension URLRequest {
    /// The error for a `GET` request that carries a body, which is refused before it is sent;
    /// `nil` for any other request.
    var bodyInGETRequestError: MoyaError? {
        guard httpMethod == Method.get.rawValue, let body = httpBody else { return nil }
        return .underlying(RequestValidationError.bodyDataInGETRequest(body), nil)
    }
}
