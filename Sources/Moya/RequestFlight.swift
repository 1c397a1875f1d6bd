import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request on its way through the provider, and every caller waiting for its result.
///
/// Without `trackInflights` a flight has exactly one caller. With it, identical requests join the
/// flight that is already running. The flight ends exactly once: by its result, or when its last
/// caller cancels. A caller who cancels while others still wait is detached alone.
final class RequestFlight: Sendable {
    /// A caller waiting for the result.
    struct Subscriber: Sendable {
        let id: Int
        let completion: UncheckedSendable<Completion>
        let callbackQueue: DispatchQueue?
    }

    /// What is running on the flight's behalf, so that a cancel can stop it.
    enum Work: Sendable {
        case none
        case stub(CancellableToken)
        case transport(TransportHandle)
    }

    /// What a caller's cancel did.
    enum Detachment: Sendable {
        /// Nothing: the flight had ended or the caller was already gone.
        case none
        /// Others still wait; only this caller is done.
        case alone(Subscriber)
        /// This was the last caller: the flight is over and `work` must be stopped.
        case last(Subscriber, Work)
    }

    private struct State {
        var subscribers: [Subscriber] = []
        var nextID = 0
        var work: Work = .none
        var isFinished = false
    }

    let endpoint: Endpoint
    /// The endpoint's identity, the flight's key in the provider's table (`trackInflights`).
    let identity: EndpointIdentity?
    let callbackQueue: DispatchQueue?
    private let state = Protected(State())

    init(endpoint: Endpoint, identity: EndpointIdentity? = nil, callbackQueue: DispatchQueue?) {
        self.endpoint = endpoint
        self.identity = identity
        self.callbackQueue = callbackQueue
    }

    /// Adds a caller; `nil` when the flight has already ended.
    func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?) -> Int? {
        state.withLock { state in
            guard !state.isFinished else { return nil }
            state.nextID += 1
            state.subscribers.append(Subscriber(id: state.nextID, completion: UncheckedSendable(completion), callbackQueue: callbackQueue))
            return state.nextID
        }
    }

    /// Records what runs for this flight. Returns `false` when the flight already ended, in
    /// which case the caller must stop `work` itself.
    func setWork(_ work: Work) -> Bool {
        state.withLock { state in
            guard !state.isFinished else { return false }
            state.work = work
            return true
        }
    }

    /// Whether the flight still waits for its result.
    var isActive: Bool {
        state.withLock { !$0.isFinished }
    }

    /// Ends the flight with its result and returns the callers to deliver it to, or `nil` when
    /// it had already ended (cancelled).
    func finish() -> [Subscriber]? {
        state.withLock { state in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            state.work = .none
            defer { state.subscribers = [] }
            return state.subscribers
        }
    }

    /// Detaches the caller `id`.
    func detach(_ id: Int) -> Detachment {
        state.withLock { state in
            guard !state.isFinished, let index = state.subscribers.firstIndex(where: { $0.id == id }) else {
                return .none
            }
            let subscriber = state.subscribers.remove(at: index)
            guard state.subscribers.isEmpty else { return .alone(subscriber) }
            state.isFinished = true
            defer { state.work = .none }
            return .last(subscriber, state.work)
        }
    }

    /// The completions still waiting, for `MoyaProvider.inflightRequests`.
    var completions: [Completion] {
        state.withLock { $0.subscribers.map(\.completion.value) }
    }
}
