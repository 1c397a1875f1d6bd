import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Called once with the result of a request.
public typealias Completion = (_ result: Result<Moya.Response, MoyaError>) -> Void

/// Called with each progress event of a request.
public typealias ProgressBlock = (_ progress: ProgressResponse) -> Void

/// A type that sends requests for targets; ``MoyaProvider`` is the one Moya ships.
public protocol MoyaProviderType: AnyObject {
    /// The target type this provider accepts.
    associatedtype Target: TargetType

    /// Sends a request for `target` and calls `completion` with its result.
    func request(_ target: Target, callbackQueue: DispatchQueue?, progress: Moya.ProgressBlock?, completion: @escaping Moya.Completion) -> Cancellable
}

/// Sends requests for the targets of one `TargetType`.
///
/// Each request goes through a fixed pipeline: the `endpointClosure` maps the target to an
/// ``Endpoint``, the `requestClosure` turns that into a `URLRequest`, plugins may change it
/// (`prepare`) and are told it is leaving (`willSend`), then it is either stubbed (see
/// `stubClosure`) or sent through the ``Session``. The response is validated with the target's
/// ``ValidationType``, plugins see it (`didReceive`, `process`), and the completion is called
/// once, on `callbackQueue`, or on the main queue when none is given.
///
/// ```swift
/// let provider = MoyaProvider<GitHub>()
/// provider.request(.zen) { result in
///     switch result {
///     case let .success(response): print((try? response.mapString()) ?? "")
///     case let .failure(error): print(error)
///     }
/// }
/// ```
///
/// - Note: A command-line program that uses callbacks without a `callbackQueue` must keep the
///   main queue running (`dispatchMain()` or `RunLoop.main.run()`); pass a `callbackQueue`
///   otherwise.
open class MoyaProvider<Target: TargetType>: MoyaProviderType {
    /// Maps a target to an endpoint.
    public typealias EndpointClosure = (Target) -> Endpoint

    /// Receives the request built from an endpoint, or why it could not be built.
    public typealias RequestResultClosure = (Result<URLRequest, MoyaError>) -> Void

    /// Turns an endpoint into a request, possibly asynchronously (to sign it, for example), and
    /// hands the result to its second argument exactly once.
    public typealias RequestClosure = (Endpoint, @escaping RequestResultClosure) -> Void

    /// Decides whether, and how, a target is stubbed.
    public typealias StubClosure = (Target) -> Moya.StubBehavior

    /// Maps targets to endpoints.
    public let endpointClosure: EndpointClosure

    /// Turns endpoints into requests.
    public let requestClosure: RequestClosure

    /// Decides which targets are stubbed.
    public let stubClosure: StubClosure

    /// The transport requests are sent through.
    public let session: Session

    /// The plugins told about every request, in order.
    public let plugins: [PluginType]

    /// The plugins among ``plugins`` that hear of the exchange's inside.
    let exchangePlugins: [any ExchangePluginType]

    /// Whether identical requests in flight at the same time are sent only once, every caller
    /// getting the same result.
    public let trackInflights: Bool

    /// The interceptors every real request goes through after `prepare` and `willSend`, in
    /// order (see ``RequestInterceptor``): the session's ``Session/interceptor`` first, if it
    /// has one, then those given to the initialiser. Targets can add their own with
    /// ``RequestInterceptable``.
    public let interceptors: [RequestInterceptor]

    /// ``interceptors``, with which of them decide without waiting worked out once.
    let interceptorChain: InterceptorChain

    /// The queue completions run on when a request names none; `nil` means the main queue.
    let callbackQueue: DispatchQueue?

    /// The flights of `trackInflights`, by endpoint.
    ///
    /// Keyed by the endpoint's identity, computed once per request: hashing and comparing
    /// `Endpoint`s directly builds their `URLRequest`s again at every lookup.
    let inflightFlights = Protected<[EndpointIdentity: RequestFlight]>([:])

    /// Whether a target can carry its own interceptor, time limit or resilience settings.
    /// `false` only when the target type is a value type that adopts none of those protocols
    /// (and is not ``MultiTarget``): then no target of this provider ever can, and the
    /// per-request casts are skipped.
    let targetsMayCustomize: Bool = MoyaProvider.targetTypeMayCustomize

    /// Whether a target can be a ``NamedTarget``, whose route is its operation (see
    /// ``TargetRoute/mayBeNamed(_:)``).
    let targetsMayBeNamed: Bool = TargetRoute.mayBeNamed(Target.self)

    /// See ``targetsMayCustomize``.
    private static var targetTypeMayCustomize: Bool {
        Target.self is AnyClass
            || Target.self == MultiTarget.self
            || Target.self is RequestInterceptable.Type
            || Target.self is TimeoutConfigurable.Type
            || Target.self is any ResilienceCustomizable.Type
    }

    /// The requests in flight (with `trackInflights`) and the completions waiting for each.
    open var inflightRequests: [Endpoint: [Moya.Completion]] {
        Dictionary(inflightFlights.current.values.map { ($0.endpoint, $0.completions) }, uniquingKeysWith: { first, _ in first })
    }

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - endpointClosure: Maps targets to endpoints; ``defaultEndpointMapping(for:)`` by default.
    ///   - requestClosure:  Turns endpoints into requests; ``defaultRequestMapping(for:closure:)``
    ///                      by default.
    ///   - stubClosure:     Decides which targets are stubbed; ``neverStub(_:)`` by default.
    ///   - callbackQueue:   Where completions and progress run; `nil` for the main queue.
    ///   - session:         The transport; the shared ``Session/default`` by default.
    ///   - plugins:         Plugins told about every request.
    ///   - trackInflights:  Whether identical concurrent requests are sent only once.
    ///   - interceptors:    Adapt and retry every real request (see ``RequestInterceptor``),
    ///                      after the session's own interceptor; none by default.
    public init(
        endpointClosure: @escaping EndpointClosure = MoyaProvider.defaultEndpointMapping,
        requestClosure: @escaping RequestClosure = MoyaProvider.defaultRequestMapping,
        stubClosure: @escaping StubClosure = MoyaProvider.neverStub,
        callbackQueue: DispatchQueue? = nil,
        session: Session = MoyaProvider<Target>.defaultAlamofireSession(),
        plugins: [PluginType] = [],
        trackInflights: Bool = false,
        interceptors: [RequestInterceptor] = []
    ) {
        self.endpointClosure = endpointClosure
        self.requestClosure = requestClosure
        self.stubClosure = stubClosure
        self.session = session
        self.plugins = plugins
        self.exchangePlugins = plugins.compactMap { $0 as? any ExchangePluginType }
        self.trackInflights = trackInflights
        let interceptors = (session.interceptor.map { [$0] } ?? []) + interceptors
        self.interceptors = interceptors
        self.interceptorChain = InterceptorChain(interceptors)
        self.callbackQueue = callbackQueue
    }

    /// Returns the endpoint of `token`, using the `endpointClosure`.
    ///
    /// - Parameter token: The target.
    /// - Returns: Its endpoint.
    open func endpoint(_ token: Target) -> Endpoint {
        endpointClosure(token)
    }

    /// Sends a request for `target`.
    ///
    /// - Parameters:
    ///   - target:        What to request.
    ///   - callbackQueue: Where `progress` and `completion` run; overrides the provider's queue.
    ///   - progress:      Called with each progress event, and a final one with the response.
    ///   - completion:    Called exactly once with the result, cancellation included.
    /// - Returns: A token that cancels the request.
    @discardableResult
    open func request(
        _ target: Target,
        callbackQueue: DispatchQueue? = .none,
        progress: ProgressBlock? = .none,
        completion: @escaping Completion
    ) -> Cancellable {
        let callbackQueue = callbackQueue ?? self.callbackQueue
        return requestNormal(target, callbackQueue: callbackQueue, progress: progress, completion: completion)
    }

    /// Returns a stubbed response for `target` according to `stubBehavior`, telling plugins as
    /// for a real request. Override it to change how stubs are delivered; an override must call
    /// ``notifyPluginsOfImpendingStub(for:target:)`` and run the function made by
    /// ``createStubFunction(_:forTarget:withCompletion:endpoint:plugins:request:)``.
    ///
    /// - Parameters:
    ///   - target:        The target.
    ///   - request:       The request built for it.
    ///   - callbackQueue: Where to deliver; `nil` delivers `.immediate` stubs synchronously and
    ///                    `.delayed` ones on the main queue.
    ///   - completion:    Receives the result.
    ///   - endpoint:      The target's endpoint, whose sample response is returned.
    ///   - stubBehavior:  How to stub; `.never` completes with an error.
    /// - Returns: A token that cancels the stub before it is delivered.
    @discardableResult
    open func stubRequest(
        _ target: Target,
        request: URLRequest,
        callbackQueue: DispatchQueue?,
        completion: @escaping Moya.Completion,
        endpoint: Endpoint,
        stubBehavior: Moya.StubBehavior
    ) -> CancellableToken {
        let callbackQueue = callbackQueue ?? self.callbackQueue
        let cancellableToken = CancellableToken {}
        if case .never = stubBehavior {
            // Moya traps here; we report the programming error as a result instead.
            let error = MoyaError.underlying(RequestValidationError.stubbingDisabled, nil)
            DispatchQueue.moyaDeliver(.failure(error), on: callbackQueue, to: completion)
            return cancellableToken
        }
        let preparedRequest = notifyPluginsOfImpendingStub(for: request, target: target)
        let stub = createStubFunction(
            cancellableToken,
            forTarget: target,
            withCompletion: completion,
            endpoint: endpoint,
            plugins: plugins,
            request: preparedRequest
        )
        scheduleStub(stub, behavior: stubBehavior, callbackQueue: callbackQueue)
        return cancellableToken
    }
}

// Sendable: every stored property is a `let`; the only mutable state, the table of flights, sits
// behind one lock. The closures and plugins are the user's, called as Moya documents: the
// mapping closures on the thread that calls `request`, the rest on the callback queue.
extension MoyaProvider: @unchecked Sendable {}
