import Foundation

/// Why a streamed response could not be consumed. It reaches you as
/// `MoyaError.underlying(StreamingError, nil)`.
public enum StreamingError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The stream's body was already being read: a stream has one consumer, through one of
    /// ``StreamedResponse/body``, ``StreamedResponse/lines`` or ``StreamedResponse/events``,
    /// iterated once.
    case alreadyConsumed
    /// A reconnecting event stream (``MoyaProvider/events(_:reconnection:options:)``) got a
    /// response whose content type is not `text/event-stream`; the Server-Sent Events standard
    /// then stops without reconnecting. The content type received.
    case notAnEventStream(contentType: String?)

    /// A sentence that says what went wrong.
    public var description: String {
        switch self {
        case .alreadyConsumed:
            return "The stream's body is already being read; a stream has one consumer: read it once, through one of body, lines or events."
        case .notAnEventStream(let contentType?):
            return "The response is not an event stream: its content type is \(contentType), not text/event-stream."
        case .notAnEventStream(nil):
            return "The response is not an event stream: it has no content type, not text/event-stream."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
