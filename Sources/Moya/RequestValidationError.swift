import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request was refused before anything was sent.
///
/// Delivered as ``MoyaError/underlying(_:_:)``.
public enum RequestValidationError: Swift.Error, LocalizedError, Sendable, Equatable {
    /// A `GET` request carries a body, which HTTP clients must not send.
    case bodyDataInGETRequest(Data)

    /// `stubRequest` was called with ``StubBehavior/never`` (Moya traps here).
    case stubbingDisabled

    /// A header's name or value holds characters that HTTP does not allow in a header: CR, LF,
    /// NUL or another control character in the value (a tab is allowed), or anything but a
    /// token character in the name. Sending it would either drop the header or let it
    /// inject more headers, so the request is refused before anything is sent.
    ///
    /// `name` is the header's name as it was given; the value is not kept, since it is often
    /// a secret (a token with a stray line break, for example).
    case invalidHeader(name: String)

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .bodyDataInGETRequest(let data):
            return "A GET request must not have a body (\(data.count) bytes were given)."
        case .stubbingDisabled:
            return "A stubbed request was made with StubBehavior.never."
        case .invalidHeader(let name):
            return "The request was not sent: its header \(HeaderField.displayName(name)) has a name or value "
                + "with characters HTTP does not allow in headers (such as CR, LF or NUL)."
        }
    }
}

extension URLRequest {
    /// The error for a `GET` request that carries a body, which is refused before it is sent;
    /// `nil` for any other request.
    var bodyInGETRequestError: MoyaError? {
        guard httpMethod == Method.get.rawValue, let body = httpBody else { return nil }
        return .underlying(RequestValidationError.bodyDataInGETRequest(body), nil)
    }
}
