import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The owner of one attempt that ``InterceptedExchange`` sends: the attempt's events go to the
/// request's flight, which keeps its state (so a cancel stops the attempt), and its result goes
/// back to the interceptors' task, which decides whether it is the request's result.
final class InterceptedAttempt: TransportOwner {
    private let flight: RequestFlight
    private let continuation: CheckedContinuation<Result<TransportResponse, any Error>, Never>

    init(flight: RequestFlight, continuation: CheckedContinuation<Result<TransportResponse, any Error>, Never>) {
        self.flight = flight
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

    /// Resumes the interceptors' task; the exchange calls this exactly once.
    func transportFinished(_ result: Result<TransportResponse, any Error>, request: URLRequest) {
        continuation.resume(returning: result)
    }
}
