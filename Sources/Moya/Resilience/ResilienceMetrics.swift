import CoreMetrics
import Foundation

/// The resilience policies' metrics through swift-metrics, by origin (`server.address`,
/// `server.port`): `moya.retry_budget.refusals` (retries the budget refused),
/// `moya.circuit_breaker.state` (a gauge: 0 closed, 1 half-open, 2 open),
/// `moya.circuit_breaker.transitions` (with `from` and `to`) and
/// `moya.circuit_breaker.rejections` (requests failed at once by an open breaker),
/// `moya.concurrency_limit.rejections`, `.queued`, `.wait` (a timer: how long a queued request
/// waited) and `.limit` (a gauge: an adaptive limit where it stands), `moya.hedges.sent` and
/// `moya.hedges.won`. `nil` when the session has no metrics backend.
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

    /// A request to `host`:`port` was refused a place under its concurrency limit.
    func limitRejected(host: String, port: Int) {
        Counter(label: "moya.concurrency_limit.rejections", dimensions: Self.server(host, port), factory: factory).increment()
    }

    /// A request to `host`:`port` was queued for a place.
    func limitQueued(host: String, port: Int) {
        Counter(label: "moya.concurrency_limit.queued", dimensions: Self.server(host, port), factory: factory).increment()
    }

    /// A queued request to `host`:`port` got its place after `seconds`.
    func limitWaited(host: String, port: Int, seconds: TimeInterval) {
        Timer(label: "moya.concurrency_limit.wait", dimensions: Self.server(host, port), factory: factory)
            .recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }

    /// The adaptive limit of `host`:`port` stands at `limit`.
    func limitMoved(host: String, port: Int, to limit: Int) {
        Gauge(label: "moya.concurrency_limit.limit", dimensions: Self.server(host, port), factory: factory).record(limit)
    }

    /// A request to `host`:`port` was refused by its spent rate limit.
    func rateLimited(host: String, port: Int) {
        Counter(label: "moya.rate_limit.rejections", dimensions: Self.server(host, port), factory: factory).increment()
    }

    /// A request to `host`:`port` waited `seconds` for its rate limit's reset.
    func rateLimitWaited(host: String, port: Int, seconds: TimeInterval) {
        Timer(label: "moya.rate_limit.wait", dimensions: Self.server(host, port), factory: factory)
            .recordNanoseconds(Int64(max(0, seconds) * 1e9))
    }

    /// A hedge went to `host`:`port` (`won` false), or a hedge's answer won (`won` true).
    func hedge(host: String, port: Int, won: Bool) {
        Counter(label: won ? "moya.hedges.won" : "moya.hedges.sent", dimensions: Self.server(host, port), factory: factory).increment()
    }
}
