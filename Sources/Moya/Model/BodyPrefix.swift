import Foundation

/// The first bytes of a body that was streamed rather than held whole, as an
/// ``ExchangePluginType`` hears of them: a request body sent from a file or a stream (a
/// generated client's body included), or the body of a response read as it arrives
/// (``MoyaProvider/stream(_:options:)``, `MoyaTransport`).
public struct BodyPrefix: Sendable, Equatable {
    /// The body's first bytes: at most the plugin's ``ExchangePluginType/bodyPrefixLimit``.
    public let data: Data

    /// How many bytes of the body had passed when the prefix was taken (at least
    /// `data.count`).
    public let byteCount: Int64

    /// Whether the body had ended when the prefix was taken. `false` when the body went on past
    /// the limit, when the consumer stopped reading, or when the exchange failed first.
    public let isComplete: Bool

    /// The body's `Content-Type`, when it has one.
    public let contentType: String?

    /// Whether ``data`` is the whole body.
    public var isWhole: Bool {
        isComplete && Int64(data.count) == byteCount
    }

    /// Creates a prefix.
    ///
    /// - Parameters:
    ///   - data:        The body's first bytes.
    ///   - byteCount:   How many bytes had passed when the prefix was taken.
    ///   - isComplete:  Whether the body had ended then.
    ///   - contentType: The body's `Content-Type`, if any.
    public init(data: Data, byteCount: Int64, isComplete: Bool, contentType: String?) {
        self.data = data
        self.byteCount = max(byteCount, Int64(data.count))
        self.isComplete = isComplete
        self.contentType = contentType
    }
}
