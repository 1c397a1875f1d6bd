import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The owner of one attempt that ``InterceptedExchange`` sends: the attempt's events go to the
/// request's flight, which keeps its state (so a cancel stops the attempt), and its result goes
/// back to the interceptors' task, which decides whether it is the request's result.
///
/// A streamed response whose head was handed to the caller is the request's, whatever its end:
/// the task is told so, and does not ask the interceptors whether to retry.
final class InterceptedAttempt: TransportOwner {
    /// What the attempt ends with: its result, and whether it streamed its body to the caller.
    typealias Outcome = (result: Result<TransportResponse, any Error>, streamed: Bool)

    private let flight: RequestFlight
    /// Where the outcome is left for the interceptors' task, before ``continuation`` wakes it.
    private let outcome: Protected<Outcome?>
    private let continuation: CheckedContinuation<Void, Never>

    /// - Parameters:
    ///   - outcome: Receives the attempt's outcome, under its lock, before `continuation` is
    ///     resumed: the task reads it there. The continuation carries no value because a
    ///     continuation resumed before its task reached `await` hands its value over without an
    ///     ordering ThreadSanitizer can see; the lock gives one.
    init(flight: RequestFlight, outcome: Protected<Outcome?>, continuation: CheckedContinuation<Void, Never>) {
        self.flight = flight
        self.outcome = outcome
        self.continuation = continuation
    }

    func transportWillStart() -> Bool {
        flight.transportWillStart()
    }

    func transportStarted(_ attempt: any TransportAttempt) -> Bool {
        flight.transportStarted(attempt)
    }

    var transportIsWanted: Bool {
        flight.transportIsWanted
    }

    func transportReceivedHead() -> Bool {
        flight.transportReceivedHead()
    }

    func transportReceivedBody(byteCount: Int) -> Bool {
        flight.transportReceivedBody(byteCount: byteCount)
    }

    func transportStreamStarted(_ head: TransportResponse, request: URLRequest) -> Bool {
        flight.transportStreamStarted(head, request: request)
    }

    /// Resumes the interceptors' task; the exchange calls this exactly once. Whether the
    /// response streamed to the caller is the flight's to know (its state machine).
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
        // A download interrupted part-way: a retry goes on from where it stopped.
        if case .failure(let error as InterruptedDownload) = result {
            flight.interrupted(at: ResumePoint(state: error.resume, file: error.file))
        }
        let streamed = flight.withMachine { $0.hasStreamed }
        outcome.withLock { $0 = (result, streamed) }
        continuation.resume()
    }
}
