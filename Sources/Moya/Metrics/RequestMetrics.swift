import CoreMetrics
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's request metrics: the metrics backend it was created with and its
/// ``Session/Configuration/MetricsOptions``. A session has one only when metrics are enabled and
/// a backend is in place, so that without one a request pays a single `nil` check.
///
/// Every request measured gets a ``RequestMeasurement`` from ``start(_:requestBodyBytes:stubbed:targetName:)``
/// and ends it with ``RequestMeasurement/finish(_:responseBodyBytes:)``. The names, units and
/// dimensions follow OpenTelemetry's semantic conventions for HTTP clients; the DocC article
/// `Metrics` lists them.
struct RequestMetrics: Sendable {
    /// The metrics' names.
    enum Label {
        /// How long requests take, in seconds (a timer).
        static let duration = "http.client.request.duration"
        /// How many requests are under way (a meter that goes up and down).
        static let activeRequests = "http.client.active_requests"
        /// The size of request bodies, in bytes (a recorder that aggregates).
        static let requestBodySize = "http.client.request.body.size"
        /// The size of response bodies, in bytes (a recorder that aggregates).
        static let responseBodySize = "http.client.response.body.size"
    }

    /// The dimensions' names.
    enum Dimension {
        static let method = "http.request.method"
        static let scheme = "url.scheme"
        static let serverAddress = "server.address"
        static let serverPort = "server.port"
        static let statusCode = "http.response.status_code"
        static let errorType = "error.type"
        /// `"true"` on a stubbed request; absent on the others.
        static let stubbed = "moya.stubbed"
        /// The target's name, when ``SessionMetricsOptions/includesTargetName`` is set.
        static let target = "moya.target"
        /// `"hit"` or `"revalidated"` on a response from the HTTP cache (``Response/cacheStatus``);
        /// absent on the others.
        static let cache = "moya.cache"
    }

    /// At most this many combinations of starting dimensions keep their metric objects.
    static let maximumCachedStarts = 256

    /// Where the metrics go.
    let factory: any MetricsFactory
    /// What the session was asked to report.
    let options: SessionMetricsOptions
    /// The metric objects made so far, by starting dimensions (see ``MetricHandles``).
    private let handles = Protected([StartKey: MetricHandles]())

    /// A request's starting dimensions, as a key.
    private struct StartKey: Hashable {
        var method: String
        var scheme: String?
        var host: String?
        var port: Int?
        var stubbed: Bool
    }

    /// The metrics of a session created now with `options`, or `nil` when they are disabled or
    /// no backend is in place: the task's (`withMetricsFactory(_:_:)`), or else the one
    /// bootstrapped in `MetricsSystem`. Read once per session, like its tracer.
    init?(options: SessionMetricsOptions) {
        guard let factory = options.currentFactory else { return nil }
        self.factory = factory
        self.options = options
    }

    /// Starts measuring `request`, which is about to be handed to the transport or to a stub (or
    /// to fail just before): counts it as active and starts its clock.
    ///
    /// - Parameters:
    ///   - request:          The request as it will be sent (after the plugins' `prepare`, when
    ///                       there are plugins).
    ///   - requestBodyBytes: The size of its body, read when the request ends (a streamed body
    ///                       of unknown length counts what was sent); `nil` for the size of
    ///                       `httpBody` (0 without one).
    ///   - stubbed:          Whether a stub answers it: it is labelled `moya.stubbed`, and has
    ///                       no `server.address` or `server.port`, since no server is contacted.
    ///   - targetName:       `moya.target` (``targetName(of:)``), or `nil`.
    func start(
        _ request: URLRequest, requestBodyBytes: (@Sendable () -> Int64)? = nil, stubbed: Bool, targetName: String?
    ) -> RequestMeasurement {
        var key = StartKey(method: Self.methodName(request.httpMethod ?? "GET"), stubbed: stubbed)
        if let url = request.url {
            key.scheme = url.scheme?.lowercased()
            if !stubbed, let host = url.host, !host.isEmpty {
                key.host = host
                key.port = url.port ?? Self.defaultPort(forScheme: key.scheme)
            }
        }
        return RequestMeasurement(
            handles: handles(for: key),
            targetName: targetName,
            requestBodyBytes: requestBodyBytes ?? { [size = Int64(request.httpBody?.count ?? 0)] in size }
        )
    }

    /// How many combinations of starting dimensions keep their metric objects; for tests.
    var cachedStartCount: Int {
        handles.withLock { $0.count }
    }

    /// The metric objects for `key`, made on first use.
    private func handles(for key: StartKey) -> MetricHandles {
        if let cached = handles.withLock({ $0[key] }) { return cached }
        // Made outside the lock: the backend takes locks of its own.
        let made = MetricHandles(dimensions: Self.dimensions(of: key), factory: factory)
        return handles.withLock { handles in
            if let cached = handles[key] { return cached }
            if handles.count < Self.maximumCachedStarts { handles[key] = made }
            return made
        }
    }

    private static func dimensions(of key: StartKey) -> [(String, String)] {
        var dimensions: [(String, String)] = []
        dimensions.reserveCapacity(8)
        dimensions.append((Dimension.method, key.method))
        if let scheme = key.scheme {
            dimensions.append((Dimension.scheme, scheme))
        }
        if let host = key.host {
            dimensions.append((Dimension.serverAddress, host))
            if let port = key.port {
                dimensions.append((Dimension.serverPort, String(port)))
            }
        }
        if key.stubbed {
            dimensions.append((Dimension.stubbed, "true"))
        }
        return dimensions
    }

    /// ``start(_:requestBodyBytes:stubbed:targetName:)`` for a request to `target`.
    func start(
        _ request: URLRequest, requestBodyBytes: (@Sendable () -> Int64)? = nil, stubbed: Bool, target: @autoclosure () -> any TargetType
    ) -> RequestMeasurement {
        start(request, requestBodyBytes: requestBodyBytes, stubbed: stubbed, targetName: targetName(of: target()))
    }

    /// `moya.target` for `target` when the options include it, `nil` otherwise (and `target` is
    /// not read): a ``NamedTarget``'s operation name, or else the name ``NetworkLoggerPlugin``
    /// logs, without a path.
    func targetName(of target: @autoclosure () -> any TargetType) -> String? {
        guard options.includesTargetName else { return nil }
        let target = target()
        return target.caseName(includingPath: false)
    }

    /// `http.request.method`: a method OpenTelemetry knows, as it is, and `_OTHER` for any other,
    /// so that a client sending made-up methods cannot make series without end. Methods are
    /// case-sensitive: `get` is `_OTHER`.
    static func methodName(_ method: String) -> String {
        switch method {
        case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE", "QUERY":
            return method
        default:
            return "_OTHER"
        }
    }

    /// The port a URL without one reaches: 80 for `http`, 443 for `https`.
    static func defaultPort(forScheme scheme: String?) -> Int? {
        switch scheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
