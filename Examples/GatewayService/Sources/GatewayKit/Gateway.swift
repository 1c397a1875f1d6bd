import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import Moya
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The gateway: a Hummingbird application whose routes call the ``Upstream`` API through one
/// `MoyaProvider`, and the Moya `Session` under it, run together by a `ServiceGroup`.
///
/// - `GET /greeting`: the upstream's greeting (a JSON echo of what the upstream received,
///   trace headers included), from the session's HTTP cache when it is fresh; the
///   `X-Upstream-Cache` header says whether it came from the network or the cache.
/// - `GET /slow/{seconds}`: the upstream's answer after that many seconds (at most 10).
/// - `GET /metrics`: the Prometheus registry: Moya's client metrics, and the server's own when
///   the process bootstrapped swift-metrics with the same registry.
///
/// An upstream failure (after the retry policy gave up) is answered with `502 Bad Gateway`.
public struct Gateway: Sendable {
    /// The session every upstream call goes through: one connection pool for the whole
    /// service, and a `Service` of the group, so that it closes after the server has drained.
    public let session: Session
    /// The provider the routes call.
    public let provider: MoyaProvider<Upstream>
    /// Where the client metrics go; `/metrics` writes it out.
    public let registry: PrometheusCollectorRegistry
    /// How long a graceful shutdown may take in all, from the signal to the cancellation of
    /// whatever still runs (see ``makeServiceGroup(application:signals:)``).
    public let shutdownLimit: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - upstream:      Where the upstream API lives (an httpbin).
    ///   - registry:      Where the session's metrics go.
    ///   - logger:        The service's logger.
    ///   - shutdownLimit: How long a graceful shutdown may take in all: requests still running
    ///                    that long after it began are cancelled. Default: 10 seconds.
    public init(upstream: URL, registry: PrometheusCollectorRegistry, logger: Logger, shutdownLimit: Duration = .seconds(10)) {
        self.registry = registry
        self.logger = logger
        self.shutdownLimit = shutdownLimit
        var configuration = Session.Configuration()
        // A private cache for the upstream's cacheable answers (`/greeting`), in memory.
        configuration.cache = HTTPCache(memoryCapacity: 4 * 1024 * 1024)
        // Requests still running `shutdownLimit` (10 s) after shutdown began are cancelled: the
        // service group sees to that (`makeServiceGroup`). The session's own grace period cannot,
        // as it begins only once the server has drained, however long that took. Upstream calls
        // still running then (the routes' calls end with their requests, so only calls made
        // outside one) may go on for half the limit, or for what is left of it if that is less.
        let half = (shutdownLimit / 2).components
        configuration.shutdownGracePeriod = Double(half.seconds) + Double(half.attoseconds) * 1e-18
        // An upstream that fails at least half of 20 calls in 10 s is left alone for 5 s:
        // callers get a 502 at once instead of waiting on it (the retry budget, on by default,
        // already keeps the retries below a fifth of the calls). No upstream call takes more
        // than 10 s in all, its retries and their waits included.
        configuration.resilience = try! ResilienceOptions(circuitBreaker: .default, deadline: 10)
        // The session's metrics go to this registry, whatever the process bootstrapped.
        let session = withMetricsFactory(PrometheusMetricsFactory(registry: registry)) {
            Session(configuration: configuration)
        }
        self.session = session
        self.provider = MoyaProvider<Upstream>(
            endpointClosure: Upstream.endpoints(at: upstream),
            session: session,
            plugins: [UpstreamLogPlugin(logger: logger)],
            // Idempotent requests that failed on a 5xx or a lost connection are sent again, up to
            // twice, 0.2 s and 0.4 s later.
            interceptors: [RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.2)]
        )
    }

    /// The routes, with the middleware that logs, measures and traces each incoming request.
    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(LogRequestsMiddleware(.info))
        router.middlewares.add(MetricsMiddleware())
        // Continues the caller's trace (its `traceparent`) in a server span; the upstream calls
        // made while the route runs are children of that span.
        router.middlewares.add(TracingMiddleware())
        let provider = self.provider
        router.get("greeting") { _, _ -> Response in
            try await Self.forward { () async throws(MoyaError) in try await provider.request(.greeting) }
        }
        router.get("slow/:seconds") { _, context -> Response in
            let seconds = try context.parameters.require("seconds", as: Int.self)
            guard (0...10).contains(seconds) else { throw HTTPError(.badRequest, message: "seconds must be 0...10") }
            return try await Self.forward { () async throws(MoyaError) in try await provider.request(.delay(seconds: seconds)) }
        }
        let registry = self.registry
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: registry.emitToString()))
            )
        }
        return router
    }

    /// Hands the upstream's answer on, or a `502` for an upstream failure.
    private static func forward(_ call: () async throws(MoyaError) -> Moya.Response) async throws -> Response {
        do {
            let upstream = try await call()
            var headers: HTTPFields = [.contentType: "application/json"]
            if let name = HTTPField.Name("X-Upstream-Cache") {
                headers[name] = upstream.cacheStatus.description
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: upstream.data)))
        } catch {
            throw HTTPError(.badGateway, message: "The upstream API failed: \(error.localizedDescription)")
        }
    }

    /// The Hummingbird application.
    ///
    /// - Parameters:
    ///   - host:            The address to listen on.
    ///   - port:            The port; `0` picks a free one.
    ///   - onServerRunning: Called with the listening channel once the server runs (a test
    ///                      learns the port there).
    public func makeApplication(
        host: String = "127.0.0.1", port: Int = 8080, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(host, port: port), serverName: "GatewayService"),
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    /// The group that runs the session and the application. On graceful shutdown (one of
    /// `signals`, or `triggerGracefulShutdown()`), services stop in the reverse order of this
    /// list: the server first (it stops accepting and finishes the requests it has, which may
    /// still call upstream), then the session (it refuses new calls, lets those in flight end
    /// within its grace period, and closes its connections).
    ///
    /// Neither step has a bound of its own that covers the whole: the server waits for its
    /// requests however long their upstream calls take, and the session's grace period only
    /// starts after that. So the group bounds the shutdown: ``shutdownLimit`` after it began,
    /// the group cancels both services; the server's requests still running fail (their
    /// upstream calls are cancelled), the session closes at once, and `run()` returns. Should
    /// cancelled work not end within 5 more seconds, the group stops the process
    /// (`fatalError`) rather than let it hang. With the default limit the process is gone
    /// within 15 seconds of `SIGTERM`, inside Kubernetes' default grace period of 30.
    public func makeServiceGroup(
        application: some ApplicationProtocol, signals: [UnixSignal] = [.sigterm, .sigint]
    ) -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: session), .init(service: application)],
            gracefulShutdownSignals: signals,
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = shutdownLimit
        configuration.maximumCancellationDuration = .seconds(5)
        return ServiceGroup(configuration: configuration)
    }
}
