import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The owner of a background refresh of a stale cached response
/// (``CacheStage/refreshInBackground(_:credential:key:parts:)``): nobody waits for its result,
/// which the exchange has already handed to the cache; it only hears that the refresh ended.
final class CacheRefreshOwner: TransportOwner {
    private let ended: @Sendable (Result<TransportResponse, any Error>) -> Void

    /// - Parameter ended: Called once, with the refresh's result, when it ends.
    init(ended: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.ended = ended
    }

    func transportStarted(_ attempt: any TransportAttempt) -> Bool { true }

    var transportIsWanted: Bool { true }

    /// A refresh is never a download: nothing to resume.

    func transportDroppedResumePoint() {}

    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer { .readOn }

    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
        ended(result)
    }
}
