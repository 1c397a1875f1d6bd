import Foundation

/// A limit of a streaming parser was exceeded: the stream is hostile or broken, and the parser
/// stops rather than buffer without bound.
///
/// ``LineSplitter`` and ``ServerSentEventParser`` throw it. After throwing, a parser throws the
/// same error for every later chunk until it is reset for a new stream with `finish()`.
public enum StreamingLimitError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// A line had more than `limit` bytes (its line break not counted) before its end arrived.
    case lineTooLong(limit: Int)
    /// The data of one server-sent event (its `data` field values, one line feed after each)
    /// had more than `limit` bytes before the blank line that ends the event arrived.
    case eventTooLarge(limit: Int)

    /// A sentence that names the limit, and the option that raises it.
    public var description: String {
        switch self {
        case .lineTooLong(let limit):
            return "A line of the stream is longer than the limit of \(limit) bytes (StreamOptions.maximumLineLength)."
        case .eventTooLarge(let limit):
            return "The data of a server-sent event is larger than the limit of \(limit) bytes (StreamOptions.maximumEventSize)."
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
