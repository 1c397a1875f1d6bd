import Foundation
import GatewayKit
import Logging
import Synchronization
import Testing
import Tracing

/// The spans every gateway of the test process finished. The tracer is the process's (a
/// bootstrap happens once), so tests tell their spans apart by trace ID.
final class SpanLog: Sendable {
    static let shared = SpanLog()
    private let records = Mutex<[LogTracer.Record]>([])

    private static let bootstrapOnce: Void = {
        InstrumentationSystem.bootstrap(LogTracer(logger: Logger(label: "spans"), onEnd: { SpanLog.shared.add($0) }))
    }()

    /// Bootstraps the process's tracer, once.
    static func bootstrap() {
        _ = bootstrapOnce
    }

    func add(_ record: LogTracer.Record) {
        records.withLock { $0.append(record) }
    }

    /// The spans from `spanID` up to (not including) `ancestorID` in trace `traceID`, following
    /// parents, waiting up to five seconds for them to finish (a server span ends after its
    /// response was written).
    func waitForChain(from spanID: String, to ancestorID: String, traceID: String) async throws -> [LogTracer.Record] {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let spans = records.withLock { $0.filter { $0.traceID == traceID } }
            var chain: [LogTracer.Record] = []
            var current: String? = spanID
            while let id = current, id != ancestorID, let span = spans.first(where: { $0.spanID == id }) {
                chain.append(span)
                current = span.parentSpanID
            }
            if current == ancestorID {
                return chain
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("no chain of spans from \(spanID) to \(ancestorID); spans of the trace: \(spans)")
                return chain
            }
            try await _Concurrency.Task.sleep(for: .milliseconds(20))
        }
    }
}
