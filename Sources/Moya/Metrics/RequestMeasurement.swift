import CoreMetrics
import Foundation

/// One request being measured, from ``RequestMetrics/start(_:requestBodyBytes:stubbed:targetName:)``
/// to ``finish(_:responseBodyBytes:)``: it is counted in `http.client.active_requests` until it
/// finishes, and then its duration and body sizes are recorded with its outcome.
///
/// Only the first ``finish(_:responseBodyBytes:)`` counts. The pipeline finishes a measurement
/// where the request's outcome becomes known (the transport's or the stub's result, a failure
/// before sending) and again where a cancel stops its work: whichever comes first is the outcome
/// recorded, and the request leaves the active ones exactly once.
final class RequestMeasurement: Sendable {
    /// The metric objects of the request's starting dimensions.
    private let handles: MetricHandles
    /// `moya.target`, added to the duration and body sizes only.
    private let targetName: String?
    /// The request body's size, read when the request ends.
    private let requestBodyBytes: @Sendable () -> Int64
    private let startedAt: UInt64
    private let isFinished = Protected(false)

    init(handles: MetricHandles, targetName: String?, requestBodyBytes: @escaping @Sendable () -> Int64) {
        self.handles = handles
        self.targetName = targetName
        self.requestBodyBytes = requestBodyBytes
        handles.activeRequests.increment()
        self.startedAt = DispatchTime.now().uptimeNanoseconds
    }

    /// Ends the measurement with the request's outcome, unless it has already ended.
    ///
    /// - Parameters:
    ///   - result:            The result the provider delivers (or would deliver: a cancel may
    ///                        still win the race to the callers).
    ///   - responseBodyBytes: The size of the response body, for a download whose body is in a
    ///                        file; `nil` for the size of the response's `data`.
    func finish(_ result: Result<Moya.Response, MoyaError>, responseBodyBytes: Int64? = nil) {
        let endedAt = DispatchTime.now().uptimeNanoseconds
        let isFirst = isFinished.withLock { isFinished in
            defer { isFinished = true }
            return !isFinished
        }
        guard isFirst else { return }
        handles.activeRequests.decrement()

        let outcome = RequestOutcome(result)
        let cacheStatus = outcome.response.flatMap { $0.cacheStatus == .network ? nil : $0.cacheStatus.description }
        let metrics = handles.outcome(
            .init(statusCode: outcome.statusCode, errorType: outcome.errorType, targetName: targetName, cacheStatus: cacheStatus))
        metrics.duration.recordNanoseconds(endedAt >= startedAt ? endedAt - startedAt : 0)
        metrics.requestBodySize.record(requestBodyBytes())
        if let response = outcome.response {
            metrics.responseBodySize?.record(responseBodyBytes ?? Int64(response.data.count))
        }
    }
}
