import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the transport sends it: the final `URLRequest` (its body included).
struct TransportRequest: Sendable {
    var urlRequest: URLRequest
    /// The credential to answer a Basic challenge with, if a plugin attached one.
    var credential: URLCredential?
}

/// A complete response from the transport.
struct TransportResponse: Sendable {
    let httpResponse: HTTPURLResponse
    let data: Data
}

/// Reports transfer progress: bytes done so far and the expected total (-1 when unknown).
typealias TransportProgressHandler = @Sendable (_ completed: Int64, _ total: Int64) -> Void

/// Reports the end of a transfer; called exactly once.
typealias TransportCompletionHandler = @Sendable (Result<TransportResponse, any Error>) -> Void

/// Cancels one request in flight.
struct TransportHandle: Sendable {
    let cancel: @Sendable () -> Void
}
