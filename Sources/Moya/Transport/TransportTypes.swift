import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as the transport sends it: the final `URLRequest`, and for uploads and downloads
/// where the body comes from and where the response goes.
struct TransportRequest: Sendable {
    var urlRequest: URLRequest
    /// The credential to answer a Basic challenge with, if a plugin attached one, with the
    /// origin it may be sent to.
    var credential: ScopedCredential?
    /// A body to stream instead of `urlRequest.httpBody`. Progress then reports bytes sent.
    var body: StreamedBody?
    /// Where to store the response body; `nil` keeps it in memory.
    var download: DownloadSink?

    init(urlRequest: URLRequest, credential: ScopedCredential? = nil, body: StreamedBody? = nil, download: DownloadSink? = nil) {
        self.urlRequest = urlRequest
        self.credential = credential
        self.body = body
        self.download = download
    }
}

/// Where a download's body goes: a new temporary file in `directory` when the status is
/// accepted; otherwise memory (the first ``errorBodyLimit`` bytes), so the error response can be
/// read.
struct DownloadSink: Sendable {
    /// The directory for temporary files.
    let directory: URL
    /// Whether a status code is a success that is worth storing.
    let accepts: @Sendable (Int) -> Bool

    /// How much of a rejected response's body is kept.
    static let errorBodyLimit = 1 << 20
}

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

    init(response: DeferredHTTPURLResponse, data: Data, fileURL: URL? = nil) {
        self.response = response
        self.data = data
        self.fileURL = fileURL
    }

    /// The HTTP status code.
    var statusCode: Int { response.statusCode }

    /// The Foundation response (built on first use).
    var httpResponse: HTTPURLResponse? { response.value }
}

/// Reports transfer progress: bytes done so far and the expected total (-1 when unknown).
typealias TransportProgressHandler = @Sendable (_ completed: Int64, _ total: Int64) -> Void

/// Reports the end of a transfer; called exactly once.
typealias TransportCompletionHandler = @Sendable (Result<TransportResponse, any Error>) -> Void

/// Cancels one request in flight.
struct TransportHandle: Sendable {
    let cancel: @Sendable () -> Void
}
