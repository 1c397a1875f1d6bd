import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The owner of one attempt that ``InterceptedExchange`` sends: the attempt's events go to the
/// request's flight, which keeps its state (so a cancel stops the attempt), and its result goes
/// back to the exchange, which asks the interceptors whether it is the request's result.
///
/// A streamed response is decided on at its head, before the caller gets it: the attempt holds
/// the response (``StreamHeadGate``) and wakes the exchange with the head. When no interceptor
/// retries, the exchange hands the head over (``handOver(_:request:gate:)``) and the rest of the
/// attempt (its body, its end) goes straight to the flight; otherwise the exchange abandons the
/// attempt (``abandon(gate:)``), whose connection closes with the body unread.
///
/// The exchange is woken once, by a closure: the interceptors' task resumes a continuation in
/// it, and a first attempt whose interceptors decide at once (``ImmediateRequestInterceptor``)
/// decides in it, on the thread where the outcome arrived.
final class InterceptedAttempt: TransportOwner {
    /// What wakes the exchange.
    enum Outcome: Sendable {
        /// The attempt ended with `result`.
        case finished(Result<TransportResponse, any Error>)
        /// A streamed response's head arrived (in answer to `request`); the attempt waits on
        /// `gate`.
        case streamHead(TransportResponse, request: URLRequest, gate: StreamHeadGate)
    }

    /// Where the attempt stands with the exchange.
    private enum State {
        /// The exchange waits for the outcome.
        case waiting
        /// The exchange woke up with the outcome (its end, or a streamed head it decides on).
        case woken
        /// The attempt ended while the exchange decided on its head.
        case endedWhileDeciding(Result<TransportResponse, any Error>, request: URLRequest)
        /// The head was handed to the caller: the attempt's end is the flight's.
        case handedOver
        /// The exchange went on without the attempt (a retry, a failure): its end is ignored.
        case abandoned
    }

    private let flight: RequestFlight
    /// The outcome, left for the exchange before ``wake`` is called, and the attempt's state.
    private let state: Protected<(outcome: Outcome?, state: State)>
    private let wake: @Sendable (InterceptedAttempt) -> Void

    /// - Parameter wake: Called once, after the outcome was left under the lock: the exchange
    ///   reads it there (``outcome``). It carries no value because a continuation resumed
    ///   before its task reached `await` hands its value over without an ordering
    ///   ThreadSanitizer can see; the lock gives one.
    init(flight: RequestFlight, wake: @escaping @Sendable (InterceptedAttempt) -> Void) {
        self.flight = flight
        self.state = Protected((nil, .waiting))
        self.wake = wake
    }

    /// The outcome that woke the exchange.
    var outcome: Outcome? {
        state.withLock { $0.outcome }
    }

    func transportStarted(_ attempt: any TransportAttempt) -> Bool {
        flight.transportStarted(attempt)
    }

    var transportIsWanted: Bool {
        flight.transportIsWanted
    }

    func transportDroppedResumePoint() {
        flight.transportDroppedResumePoint()
    }

    func transportObserved(_ event: ResilienceEvent) {
        flight.observe(event)
    }

    /// Holds the streamed head for the exchange, and wakes it; answers at once when the exchange
    /// is not waiting.
    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> StreamHeadAnswer {
        let gate = StreamHeadGate()
        let wakes: Bool = state.withLock { state in
            guard case .waiting = state.state else { return false }
            state = (.streamHead(head, request: request, gate: gate), .woken)
            return true
        }
        guard wakes else { return flight.transportStreamStarted(head, request: request) }
        // An exchange that decides at once may answer the gate before it is returned; the
        // gate keeps the answer for the transport.
        wake(self)
        return .later(gate)
    }

    /// The head goes to the caller, and the attempt reads its body on. When the attempt ended
    /// meanwhile (the connection closed while the interceptors decided), the caller gets the
    /// head all the same, and the stream ends with the attempt's end, as it would have had the
    /// head been handed over at once.
    func handOver(_ head: TransportResponse, request: URLRequest, gate: StreamHeadGate) {
        let ended: (Result<TransportResponse, any Error>, URLRequest)? = state.withLock { state in
            if case .endedWhileDeciding(let result, let request) = state.state {
                return (result, request)
            }
            state.state = .handedOver
            return nil
        }
        let readsOn = flight.handOverStream(head, request: request)
        guard let (result, endRequest) = ended else {
            gate.answer(readsOn)
            return
        }
        gate.answer(false)
        flight.transportFinished(result, request: endRequest)
    }

    /// The exchange goes on without the attempt: it stops, its body unread.
    func abandon(gate: StreamHeadGate) {
        state.withLock { $0.state = .abandoned }
        gate.answer(false)
    }

    /// Wakes the exchange with the result, or, once the head was handed over, ends the
    /// request with it; the exchange calls this exactly once.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
        // A download interrupted part-way: a retry goes on from where it stopped.
        if case .failure(let error as InterruptedDownload) = result {
            flight.interrupted(at: ResumePoint(state: error.resume, file: error.file))
        }
        enum Next { case wake, forward, none }
        let next: Next = state.withLock { state in
            switch state.state {
            case .waiting:
                state = (.finished(result), .woken)
                return .wake
            case .woken:
                state.state = .endedWhileDeciding(result, request: request)
                return .none
            case .handedOver:
                return .forward
            case .endedWhileDeciding, .abandoned:
                return .none
            }
        }
        switch next {
        case .wake: wake(self)
        case .forward: flight.transportFinished(result, request: request)
        case .none: break
        }
    }
}
