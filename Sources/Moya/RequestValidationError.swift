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

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .bodyDataInGETRequest(let data):
            return "A GET request must not have a body (\(data.count) bytes were given)."
        case .stubbingDisabled:
            return "A stubbed request was made with StubBehavior.never."
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
