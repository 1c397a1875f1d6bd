import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A complete response from the transport.
///
/// A class: it travels through AsyncHTTPClient's and NIO's generic code (futures, results), where
/// copying a struct of several references goes through value witnesses; a reference is one
/// retain.
final class TransportResponse: Sendable {
    /// The status code, and the Foundation response on demand.
    let response: DeferredHTTPURLResponse
    /// The body, or for a stored download, empty.
    let data: Data
    /// The temporary file holding a download's body, which the receiver now owns.
    let fileURL: URL?
    /// Whether the response came from the session's HTTP cache.
    let cacheStatus: Response.CacheStatus
    /// For a streamed response, the body bytes its consumer was handed (its `data` is empty);
    /// `nil` for any other.
    let streamedByteCount: Int64?
    /// For the `101` of a ``ConnectionUpgrade``, the connection it opened, which the receiver now
    /// owns (it hands it to the caller, or abandons it); `nil` for any other response.
    let upgraded: (any UpgradedConnection)?

    init(
        response: DeferredHTTPURLResponse, data: Data, fileURL: URL? = nil, cacheStatus: Response.CacheStatus = .network,
        streamedByteCount: Int64? = nil, upgraded: (any UpgradedConnection)? = nil
    ) {
        self.response = response
        self.data = data
        self.fileURL = fileURL
        self.cacheStatus = cacheStatus
        self.streamedByteCount = streamedByteCount
        self.upgraded = upgraded
    }

    /// The HTTP status code.
    var statusCode: Int { response.statusCode }

    /// The Foundation response (built on first use).
    var httpResponse: HTTPURLResponse? { response.value }
}
