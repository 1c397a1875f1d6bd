import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stubbed request returns.
public enum EndpointSampleResponse: Sendable {
    /// The network returned a response with this status code and body.
    case networkResponse(Int, Data)

    /// The network returned this `HTTPURLResponse` and body.
    case response(HTTPURLResponse, Data)

    /// The request failed with this error (a timeout, for example).
    case networkError(NSError)
}
