import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request a ``TransportExchange`` runs for: it keeps the request's state (whether the
/// result is still wanted) and hears of what the exchange's caller must know.
///
/// The exchange keeps no state of its own about cancellation: it hands each attempt to its
/// owner, so that one cancel, made on the owner, stops whatever runs, and asks it before every
/// follow-up whether the result is still wanted. Within an attempt, the response's head and
/// body parts stay with the exchange, on its event loop: the owner hears of a streamed head
/// and of the end.
protocol TransportOwner: AnyObject, Sendable {
    /// An attempt starts (the first, a redirect's, a challenge's answer, or one sent again after
    /// waiting for a connection): the owner records it, so that a cancel stops it. Its events
    /// may come before this returns.
    ///
    /// - Returns: `false` when the request ended meanwhile: the owner has stopped the attempt.
    func transportStarted(_ attempt: any TransportAttempt) -> Bool

    /// The exchange gave up the resume point: the server sent the whole representation again,
    /// refused the range, or the partial file became the response's. Later attempts start over.
    func transportDroppedResumePoint()

    /// Whether the result is still wanted: `false` once the request ended (was cancelled).
    var transportIsWanted: Bool { get }

    /// A streamed response's head arrived and its body is about to stream (see
    /// ``StreamSink``). Called on the attempt's event loop.
    /// The exchange ends later, with ``transportFinished(_:request:)``, when the body has.
    ///
    /// - Parameters:
    ///   - head:    The response, without a body.
    ///   - request: The request the exchange was given.
    /// - Returns: Whether to read on, now or later: ``StreamHeadAnswer/later(_:)`` when
    ///   interceptors decide on the head first (the exchange then reads nothing more until the
    ///   gate's answer).
    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer

    /// The exchange ended with `result`, the response to `request` (the request the exchange
    /// was given, not a redirect's). Called exactly once.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest)

    /// A resilience policy acted on the exchange (a breaker its outcome opened or closed, a wait
    /// for a place, a hedge sent): the request's plugins hear of it. Does nothing by default.
    func transportObserved(_ event: ResilienceEvent)
}

extension TransportOwner {
    func transportObserved(_ event: ResilienceEvent) {}
}

/// What a ``TransportOwner`` answers to a streamed response's head.
enum StreamHeadAnswer {
    /// The head is the stream's: read its body on.
    case readOn
    /// The result is no longer wanted: stop the attempt.
    case stop
    /// The owner answers through `gate`, later; read nothing more until then.
    case later(StreamHeadGate)
}
