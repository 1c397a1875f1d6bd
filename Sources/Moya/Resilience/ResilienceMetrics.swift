import CoreMetrics
import Foundation

/// The resilience policies' metrics through swift-metrics, by origin (`server.address`,
/// `server.port`): `moya.retry_budget.refusals` (retries the budget refused),
/// `moya.circuit_breaker.state` (a gauge: 0 closed, 1 half-open, 2 open),
/// `moya.circuit_breaker.transitions` (with `from` and `to`) and
/// `moya.circuit_breaker.rejections` (requests failed at once by an open breaker). `nil` when
/// the session has no metrics backend.
struct ResilienceMetrics: Sendable {
    let factory: any MetricsFactory

    init?(factory: (any MetricsFactory)?) {
        guard let factory else { return nil }
        self.factory = factory
    }

    private static func server(_ host: String, _ port: Int) -> [(String, String)] {
        [("server.address", host), ("server.port", String(port))]
    }

    /// A retry to `host`:`port` was refused by its budget.
    func retryRefused(host: String, port: Int) {
        Counter(label: "moya.retry_budget.refusals", dimensions: Self.server(host, port), factory: factory).increment()
    }

    /// The breaker of `host`:`port` moved from `from` to `to`.
    func breakerMoved(host: String, port: Int, from: BreakerState.Phase, to: BreakerState.Phase) {
        let server = Self.server(host, port)
        Gauge(label: "moya.circuit_breaker.state", dimensions: server, factory: factory).record(to.gaugeValue)
        Counter(label: "moya.circuit_breaker.transitions", dimensions: server + [("from", from.name), ("to", to.name)], factory: factory)
            .increment()
    }

    /// An open breaker of `host`:`port` failed a request at once.
    func rejected(host: String, port: Int) {
        Counter(label: "moya.circuit_breaker.rejections", dimensions: Self.server(host, port), factory: factory).increment()
    }
}
