import CoreMetrics

/// The metric objects of one combination of a request's starting dimensions (method, scheme,
/// server address and port, stubbed), made once and reused by every request that has them.
///
/// Making a metric object asks the backend for a handler, which for most backends means building
/// a key from the label and the dimensions and looking it up under a lock (swift-prometheus also
/// validates and sorts the dimensions): with a Prometheus backend that was about 130 µs of CPU
/// per request when every request made its four objects anew. Here each combination makes them
/// once. The duration and body-size objects also depend on the outcome (status code, error type,
/// target name), and are kept per outcome in ``outcome(_:)``.
///
/// Both levels are bounded (``RequestMetrics/maximumCachedStarts`` and
/// ``maximumCachedOutcomes``): past the bound, objects are made for the one request and not kept,
/// so a session that talks to endless hosts does not grow without end.
final class MetricHandles: Sendable {
    /// At most this many outcomes are kept per combination.
    static let maximumCachedOutcomes = 64

    /// The starting dimensions.
    let dimensions: [(String, String)]
    /// `http.client.active_requests` for these dimensions.
    let activeRequests: Meter
    private let factory: any MetricsFactory
    private let outcomes = Protected([OutcomeKey: OutcomeHandles]())

    /// What, besides the starting dimensions, tells a request's duration and body sizes apart.
    struct OutcomeKey: Hashable, Sendable {
        /// The response's status code; `nil` when there was no response.
        var statusCode: Int?
        var errorType: String?
        var targetName: String?
        /// `moya.cache`: `hit` or `revalidated` for a response from the HTTP cache; `nil`
        /// otherwise.
        var cacheStatus: String? = nil
    }

    /// The metric objects of one outcome.
    struct OutcomeHandles: Sendable {
        let duration: CoreMetrics.Timer
        let requestBodySize: Recorder
        /// Only for an outcome with a response: a request without one records no response size,
        /// and a backend would otherwise show an empty series for it.
        let responseBodySize: Recorder?
    }

    init(dimensions: [(String, String)], factory: any MetricsFactory) {
        self.dimensions = dimensions
        self.factory = factory
        self.activeRequests = Meter(label: RequestMetrics.Label.activeRequests, dimensions: dimensions, factory: factory)
    }

    /// The duration and body-size objects for `key`, made on first use.
    func outcome(_ key: OutcomeKey) -> OutcomeHandles {
        if let cached = outcomes.withLock({ $0[key] }) { return cached }
        // Made outside the lock: the backend takes locks of its own.
        let made = makeOutcome(key)
        return outcomes.withLock { outcomes in
            if let cached = outcomes[key] { return cached }
            if outcomes.count < Self.maximumCachedOutcomes { outcomes[key] = made }
            return made
        }
    }

    private func makeOutcome(_ key: OutcomeKey) -> OutcomeHandles {
        var dimensions = self.dimensions
        dimensions.reserveCapacity(dimensions.count + 4)
        if let statusCode = key.statusCode {
            dimensions.append((RequestMetrics.Dimension.statusCode, String(statusCode)))
        }
        if let errorType = key.errorType {
            dimensions.append((RequestMetrics.Dimension.errorType, errorType))
        }
        if let targetName = key.targetName {
            dimensions.append((RequestMetrics.Dimension.target, targetName))
        }
        if let cacheStatus = key.cacheStatus {
            dimensions.append((RequestMetrics.Dimension.cache, cacheStatus))
        }
        return OutcomeHandles(
            duration: CoreMetrics.Timer(
                label: RequestMetrics.Label.duration, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory),
            requestBodySize: Recorder(label: RequestMetrics.Label.requestBodySize, dimensions: dimensions, aggregate: true, factory: factory),
            responseBodySize: key.statusCode == nil
                ? nil : Recorder(label: RequestMetrics.Label.responseBodySize, dimensions: dimensions, aggregate: true, factory: factory)
        )
    }
}
