import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request on its way through the provider, and every caller waiting for its result: the
/// request's whole state, in one ``RequestStateMachine`` behind one lock.
///
/// Without `trackInflights` a flight has exactly one caller. With it, identical requests join the
/// flight that is already running. The flight ends exactly once: by its result, or when its last
/// caller cancels. A caller who cancels while others still wait is detached alone. Each caller
/// holds a ``RequestTicket`` (its id in the flight), which is what `request` returns.
final class RequestFlight: Sendable {
    /// What runs on the flight's behalf, so that a cancel can stop it.
    enum Work: Sendable {
        /// A scheduled stub, stopped through its token.
        case stub(CancellableToken)
        /// A request on the transport, directly or through the interceptors.
        case transport(TransportHandle)
        /// Work whose request is measured: stopping it (a cancel) ends the measurement as
        /// cancelled, unless its result ended it first.
        indirect case measured(Work, RequestMeasurement)

        /// Stops the work.
        func stop() {
            switch self {
            case .stub(let token): token.cancel()
            case .transport(let handle): handle.cancel()
            case .measured(let work, let measurement):
                measurement.finish(.failure(.requestCancelled))
                work.stop()
            }
        }
    }

    /// The endpoint requested, for `MoyaProvider.inflightRequests`.
    let endpoint: Endpoint
    /// The endpoint's identity, the flight's key in the provider's table (`trackInflights`).
    let identity: EndpointIdentity?
    /// The first caller's callback queue: callers on the same queue get the result inline.
    let callbackQueue: DispatchQueue?
    /// The provider's plugins, told when the flight ends by a cancellation.
    private let plugins: UncheckedSendable<[any PluginType]>
    /// The provider's in-flight table, which the flight leaves when it ends (`trackInflights`).
    private let table: Protected<[EndpointIdentity: RequestFlight]>?
    private let state = Protected(RequestStateMachine<Work>())

    /// A flight of its own, in no table.
    init(endpoint: Endpoint, callbackQueue: DispatchQueue?, plugins: [any PluginType]) {
        self.endpoint = endpoint
        self.identity = nil
        self.table = nil
        self.callbackQueue = callbackQueue
        self.plugins = UncheckedSendable(plugins)
    }

    /// A flight that other callers can join: the caller adds it to `table` under `identity`.
    init(
        endpoint: Endpoint, identity: EndpointIdentity, table: Protected<[EndpointIdentity: RequestFlight]>, callbackQueue: DispatchQueue?,
        plugins: [any PluginType]
    ) {
        self.endpoint = endpoint
        self.identity = identity
        self.table = table
        self.callbackQueue = callbackQueue
        self.plugins = UncheckedSendable(plugins)
    }

    /// Adds a caller; `nil` when the flight has already ended.
    ///
    /// - Parameter pluginTarget: The caller's target as plugins see it; `nil` without plugins.
    func subscribe(_ completion: @escaping Completion, callbackQueue: DispatchQueue?, pluginTarget: UncheckedSendable<any TargetType>?) -> Int? {
        state.withLock { $0.subscribe(completion, callbackQueue: callbackQueue, pluginTarget: pluginTarget) }
    }

    /// The request closure handed the request back: whether to send it (see
    /// ``RequestStateMachine/requestBuilt()``).
    func requestBuilt() -> Bool {
        state.withLock { $0.requestBuilt() }
    }

    /// Records what runs for this flight, or stops it at once when the flight already ended.
    ///
    /// - Parameter measurement: The request's metrics, ended as cancelled if a cancel stops the
    ///   work; `nil` without metrics.
    func attach(_ work: Work, measurement: RequestMeasurement? = nil) {
        let work = measurement.map { Work.measured(work, $0) } ?? work
        if case .stop(let work) = state.withLock({ $0.workStarted(work) }) {
            work.stop()
        }
    }

    /// Whether the flight still waits for its result.
    var isActive: Bool {
        state.withLock { $0.isActive }
    }

    /// Ends the flight with its result: every caller still waiting gets it, inline when it shares
    /// the flight's callback queue (the current context), on its own queue otherwise. Does
    /// nothing when the flight has already ended (cancelled).
    func end(with result: Result<Moya.Response, MoyaError>) {
        guard let subscribers = claim() else { return }
        deliver(result, to: subscribers)
    }

    /// Ends the flight and takes its callers, before the result is handed over: from here on a
    /// cancel does nothing, so what runs before ``deliver(_:to:)`` (the plugins' `didReceive`,
    /// the last progress event) runs for the result alone. `nil` when the flight has already
    /// ended (cancelled).
    func claim() -> RequestSubscriber.List? {
        guard case .deliver(let subscribers) = state.withLock({ $0.finished() }) else { return nil }
        return subscribers
    }

    /// Hands `result` to the callers ``claim()`` returned: inline for those that share the
    /// flight's callback queue (the current context), on their own queue for the others.
    func deliver(_ result: Result<Moya.Response, MoyaError>, to subscribers: RequestSubscriber.List) {
        for subscriber in subscribers {
            if subscriber.callbackQueue === callbackQueue {
                subscriber.completion.value(result)
            } else {
                (subscriber.callbackQueue ?? .main).moyaDeliver(result, to: subscriber.completion.value)
            }
        }
        leaveTable()
    }

    /// Cancels the caller `id`: it gets the cancellation error on its queue. When it was the
    /// last caller, the flight ends, its work stops, and the plugins hear of the cancellation.
    func cancel(subscriber id: Int) {
        switch state.withLock({ $0.cancelled(subscriber: id) }) {
        case .none:
            return
        case .detach(let subscriber):
            (subscriber.callbackQueue ?? .main).moyaDeliver(.failure(.requestCancelled), to: subscriber.completion.value)
        case .stop(let subscriber, let work):
            work?.stop()
            leaveTable()
            let plugins = self.plugins
            (subscriber.callbackQueue ?? .main).moyaDeliver(MoyaError.requestCancelled) { error in
                if let target = subscriber.pluginTarget { plugins.value.didReceive(.failure(error), anyTarget: target.value) }
                subscriber.completion.value(.failure(error))
            }
        }
    }

    /// Whether the caller `id` asked to cancel.
    func isCancelled(subscriber id: Int) -> Bool {
        state.withLock { $0.isCancelled(subscriber: id) }
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
        state.withLock { $0.completions }
    }
}
