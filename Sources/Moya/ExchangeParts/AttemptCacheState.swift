import Foundation

/// What the session's HTTP cache knows of one attempt. A class, so that an attempt without a
/// cache carries one empty reference rather than a large struct it copies at every step.
final class AttemptCacheState: Sendable {
    /// When the attempt was sent, for the cache's age calculations.
    let sentAt: Date
    /// The attempt's headers as the cache compares them (``ClientRequestFactory/headersAsSent(for:authorization:)``),
    /// worked out once for the decision before it and the storing after it.
    let requestHeaders: [(name: String, value: String)]
    /// The stored response the attempt asks the server to confirm (a conditional request),
    /// with the validators it sends.
    let validation: (entry: CachedResponse, headers: [(name: String, value: String)])?

    init(
        sentAt: Date, requestHeaders: [(name: String, value: String)],
        validation: (entry: CachedResponse, headers: [(name: String, value: String)])?
    ) {
        self.sentAt = sentAt
        self.requestHeaders = requestHeaders
        self.validation = validation
    }
}
