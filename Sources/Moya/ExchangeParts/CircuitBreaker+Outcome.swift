import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CircuitBreaker.Outcome {
    /// The outcome of an attempt that failed with `error` (a transport's error, translated
    /// through ``TransportError``): a timeout, or a connection that could not be opened or was
    /// lost; `nil` for a failure that says nothing of the origin (a cancel, a request the session
    /// refused before sending it, a body that could not be read).
    init?(failure error: any Error) {
        guard let urlError = TransportError.translate(error) as? URLError else { return nil }
        switch urlError.code {
        case .timedOut:
            self = .timedOut
        case .cannotConnectToHost, .networkConnectionLost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .badServerResponse,
            .secureConnectionFailed:
            self = .connectionFailed
        default:
            return nil
        }
    }
}
