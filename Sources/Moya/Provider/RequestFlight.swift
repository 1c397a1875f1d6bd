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

    /// The callers, in the order they came. Most flights have one, which is kept without an
    /// array (one allocation less per request).
    struct Subscribers: Sequence {
        private var first: Subscriber?
        private var others: [Subscriber] = []

        var isEmpty: Bool { first == nil && others.isEmpty }

        mutating func append(_ subscriber: Subscriber) {
            if isEmpty { first = subscriber } else { others.append(subscriber) }
        }

        /// Removes and returns the caller `id`, if it is here.
        mutating func remove(id: Int) -> Subscriber? {
            if let first, first.id == id {
                self.first = others.isEmpty ? nil : others.removeFirst()
                return first
            }
            guard let index = others.firstIndex(where: { $0.id == id }) else { return nil }
            return others.remove(at: index)
        }

        struct Iterator: IteratorProtocol {
            fileprivate var first: Subscriber?
            fileprivate var others: IndexingIterator<[Subscriber]>

            mutating func next() -> Subscriber? {
                if let first {
                    self.first = nil
                    return first
                }
                return others.next()
            }
        }

        func makeIterator() -> Iterator {
            Iterator(first: first, others: others.makeIterator())
        }
    }

    private struct State {
        var subscribers = Subscribers()
        var nextID = 0
        var work: Work = .none
        var isFinished = false
    }

    let endpoint: Endpoint
    /// The endpoint's identity, the flight's key in the provider's table (`trackInflights`).
    let identity: EndpointIdentity?
    let callbackQueue: DispatchQueue?
    /// The provider's in-flight table, which the flight leaves when it ends (`trackInflights`).
    private let table: Protected<[EndpointIdentity: RequestFlight]>?
    private let state = Protected(State())

    /// A flight of its own, in no table.
    init(endpoint: Endpoint, callbackQueue: DispatchQueue?) {
        self.endpoint = endpoint
        self.identity = nil
        self.table = nil
        self.callbackQueue = callbackQueue
    }

    /// A flight that other callers can join: the caller adds it to `table` under `identity`.
    init(endpoint: Endpoint, identity: EndpointIdentity, table: Protected<[EndpointIdentity: RequestFlight]>, callbackQueue: DispatchQueue?) {
        self.endpoint = endpoint
        self.identity = identity
        self.table = table
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

    /// Ends the flight with its result: every caller still waiting gets it, inline when it shares
    /// the flight's callback queue (the current context), on its own queue otherwise. Does
    /// nothing when the flight has already ended (cancelled).
    func end(with result: Result<Moya.Response, MoyaError>) {
        let subscribers: Subscribers? = state.withLock { state in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            state.work = .none
            defer { state.subscribers = Subscribers() }
            return state.subscribers
        }
        guard let subscribers else { return }
        for subscriber in subscribers {
            if subscriber.callbackQueue === callbackQueue {
                subscriber.completion.value(result)
            } else {
                let box = UncheckedSendable(result)
                (subscriber.callbackQueue ?? .main).moyaDeliver { subscriber.completion.value(box.value) }
            }
        }
        leaveTable()
    }

    /// Cancels the caller `id`: it gets the cancellation error on its queue. When it was the
    /// last caller, the flight ends, its work stops, and the plugins hear of the cancellation
    /// (`target` is the target as plugins see it; `nil` when there are none).
    func cancel(subscriber id: Int, plugins: [any PluginType], target: UncheckedSendable<any TargetType>?) {
        let error = MoyaError.underlying(TransportError.cancelled, nil)
        let detachment: Detachment = state.withLock { state in
            guard !state.isFinished, let subscriber = state.subscribers.remove(id: id) else {
                return .none
            }
            guard state.subscribers.isEmpty else { return .alone(subscriber) }
            state.isFinished = true
            defer { state.work = .none }
            return .last(subscriber, state.work)
        }
        switch detachment {
        case .none:
            return
        case .alone(let subscriber):
            let box = UncheckedSendable(error)
            (subscriber.callbackQueue ?? .main).moyaDeliver { subscriber.completion.value(.failure(box.value)) }
        case .last(let subscriber, let work):
            switch work {
            case .none: break
            case .stub(let token): token.cancel()
            case .transport(let handle): handle.cancel()
            }
            leaveTable()
            let box = UncheckedSendable((plugins, error))
            (subscriber.callbackQueue ?? .main).moyaDeliver {
                let (plugins, error) = box.value
                if let target { plugins.didReceive(.failure(error), anyTarget: target.value) }
                subscriber.completion.value(.failure(error))
            }
        }
    }

    /// Takes the flight out of the provider's table, unless another flight has its place.
    private func leaveTable() {
        guard let table, let identity else { return }
        table.withLock { flights in
            if flights[identity] === self {
                flights.removeValue(forKey: identity)
            }
        }
    }

    /// The completions still waiting, for `MoyaProvider.inflightRequests`.
    var completions: [Completion] {
        state.withLock { $0.subscribers.map(\.completion.value) }
    }
}
