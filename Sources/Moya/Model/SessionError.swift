import Foundation

/// Why a ``Session`` failed a request on its own account: the response broke a limit the
/// session sets or was not a usable answer, or the session no longer sends requests.
///
/// Delivered as ``MoyaError/underlying(_:_:)``, without a response.
public enum SessionError: Swift.Error, LocalizedError, CustomStringConvertible, Sendable, Equatable {
    /// The response body is larger than ``Session/Configuration/maximumResponseBodySize``,
    /// `limit` bytes.
    ///
    /// `announcedLength` is the body length the response announced in its `Content-Length`, when
    /// that alone was over the limit: the body was then not read at all. It is `nil` when the
    /// body was read as it arrived (no `Content-Length`, or one that understated it) and the
    /// transfer was stopped as soon as more than `limit` bytes had arrived. Either way the
    /// connection is closed and nothing of the body is kept.
    case responseBodyTooLarge(limit: Int64, announcedLength: Int64?)

    /// The server's final answer had an informational status (`1xx`), such as an unsolicited
    /// `101 Switching Protocols`. Such a status never ends an HTTP exchange: the connection
    /// switched to another protocol, or the server is broken. The connection is not reused.
    case informationalResponse(statusCode: Int)

    /// The session was shut down (``Session/shutdown()``) and sends no more requests.
    case shutDown

    /// The session is shutting down: the `ServiceGroup` that runs it (``Session/run()``) began a
    /// graceful shutdown, so the session takes no new requests. Requests that were already
    /// running go on for ``Session/Configuration/shutdownGracePeriod``. Nothing was sent.
    case shuttingDown

    /// The request was still running when the session shut down, and was stopped: the grace
    /// period of a graceful shutdown (``Session/Configuration/shutdownGracePeriod``) had ended,
    /// the task running the session (``Session/run()``) was cancelled, or ``Session/shutdown()``
    /// was called.
    case stoppedByShutdown

    /// The request's cache policy is `.returnCacheDataDontLoad` (or its `Cache-Control` says
    /// `only-if-cached`), and the session's ``Session/Configuration/cache`` holds no response
    /// for `url`: nothing was sent.
    case notCached(url: URL?)

    /// A description of the problem.
    public var errorDescription: String? {
        switch self {
        case .responseBodyTooLarge(let limit, let announcedLength?):
            return "The response body of \(announcedLength) bytes is larger than the session's limit of \(limit) bytes "
                + "(Session.Configuration.maximumResponseBodySize); it was not read."
        case .responseBodyTooLarge(let limit, nil):
            return "The response body is larger than the session's limit of \(limit) bytes "
                + "(Session.Configuration.maximumResponseBodySize); the transfer was stopped."
        case .informationalResponse(let statusCode):
            let phrase = statusCode == 101 ? "Switching Protocols" : "informational"
            return "The server answered \(statusCode) (\(phrase)) as its final response, which ends no HTTP request."
        case .shutDown:
            return "The session was shut down, so it sends no more requests."
        case .shuttingDown:
            return "The session is shutting down, so it takes no new requests; the request was not sent."
        case .stoppedByShutdown:
            return "The session shut down while the request was still running, so the request was stopped "
                + "(after the grace period of a graceful shutdown, Session.Configuration.shutdownGracePeriod, "
                + "or because the session's service was cancelled or its shutdown() was called)."
        case .notCached(let url):
            let name = url.map { LoggedURL.describe($0) } ?? "the request"
            return "The HTTP cache holds no response for \(name), and the request's cache policy does not allow the network."
        }
    }

    /// Same as ``errorDescription``.
    public var description: String { errorDescription ?? "Session error" }
}
