import Foundation
import GatewayKit
import Hummingbird
import Logging
import Moya
import Prometheus
import ServiceLifecycle
import Testing
import Tracing

/// A gateway started in process on a free port, with a provider that calls it.
struct RunningGateway {
    let gateway: Gateway
    let group: ServiceGroup
    let runTask: _Concurrency.Task<Void, any Error>
    /// Calls the gateway.
    let client: MoyaProvider<GatewayAPI>
    let clientSession: Session

    /// Starts a gateway in front of the test httpbin and waits until it listens.
    static func start() async throws -> RunningGateway {
        SpanLog.bootstrap()
        let upstream = try #require(testHTTPBin)
        var logger = Logger(label: "GatewayServiceTests")
        logger.logLevel = .notice
        let gateway = Gateway(upstream: upstream, registry: PrometheusCollectorRegistry(), logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = gateway.makeApplication(port: 0) { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }
        let group = gateway.makeServiceGroup(application: application, signals: [])
        let runTask = _Concurrency.Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let clientSession = Session()
        let base = URL(string: "http://127.0.0.1:\(port)")!
        let client = MoyaProvider<GatewayAPI>(endpointClosure: GatewayAPI.endpoints(at: base), session: clientSession)
        return RunningGateway(gateway: gateway, group: group, runTask: runTask, client: client, clientSession: clientSession)
    }

    /// Whether the gateway's session has an upstream call in flight, from its metrics.
    func upstreamCallInFlight() async throws -> Bool {
        Self.showsUpstreamCallInFlight(metrics: gateway.registry.emitToString())
    }

    /// Whether a gateway's metrics page shows an upstream call in flight: the session's
    /// active-requests gauge is above 0.
    static func showsUpstreamCallInFlight(metrics page: String) -> Bool {
        page.split(separator: "\n").contains { line in
            line.hasPrefix("http_client_active_requests{") && !line.hasSuffix(" 0.0") && !line.hasSuffix(" 0")
        }
    }

    /// Stops the gateway (if a test did not) and the client's session.
    func stop() {
        let group = group
        let clientSession = clientSession
        _Concurrency.Task {
            await group.triggerGracefulShutdown()
            try? await clientSession.shutdown()
        }
    }
}

/// The gateway's own API, as a client sees it.
enum GatewayAPI: TargetType {
    case greeting
    case slow(seconds: Int)
    case metrics

    var baseURL: URL { URL(string: "http://127.0.0.1")! }
    var path: String {
        switch self {
        case .greeting: return "/greeting"
        case .slow(let seconds): return "/slow/\(seconds)"
        case .metrics: return "/metrics"
        }
    }
    var method: Moya.Method { .get }
    var task: Moya.Task { .requestPlain }
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }

    static func endpoints(at baseURL: URL) -> @Sendable (GatewayAPI) -> Endpoint {
        { target in
            Endpoint(
                url: baseURL.appendingPathComponent(target.path).absoluteString,
                sampleResponseClosure: { .networkResponse(200, Data()) },
                method: target.method, task: target.task, httpHeaderFields: target.headers)
        }
    }
}
