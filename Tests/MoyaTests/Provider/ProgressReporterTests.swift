import Dispatch
import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// Progress events that come faster than the delivery queue runs them are coalesced.
@Suite("Progress reporting")
struct ProgressReporterTests {
    @Test("Events that arrive while one waits for the queue are merged into it; the figures only grow, and the last ones are delivered")
    func coalesced() async {
        let queue = DispatchQueue(label: "progress-test")
        let seen = Recorder<(Int64, Int64)>()
        let reporter = ProgressReporter(block: { seen.append(($0.progressObject!.completedUnitCount, $0.progressObject!.totalUnitCount)) }, queue: queue)
        // The queue is blocked while 10,000 events arrive: they become one. The behaviour under
        // test: the gate blocks the delivery queue's Dispatch thread, not a cooperative one.
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        for completed in 1...10_000 {
            reporter.report(completed: Int64(completed), total: 10_000)
        }
        gate.signal()
        await drain(queue)
        #expect(seen.values.count == 1)
        #expect(seen.values.last?.0 == 10_000)
        // Once delivered, the next event is queued again.
        reporter.report(completed: 10_000, total: 10_000)
        await drain(queue)
        #expect(seen.values.count == 2)
        // Without a blocked queue, events arriving from another thread still never go backwards.
        for completed in 1...2_000 {
            reporter.report(completed: Int64(completed), total: 2_000)
        }
        await drain(queue)
        let figures = seen.values.dropFirst(2).map(\.0)
        #expect(figures == figures.sorted())
        #expect(figures.last == 2_000)
        // The final event carries the last figures and the response.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                reporter.reportCompletion(response: Response(statusCode: 200, data: Data()))
                continuation.resume()
            }
        }
        #expect(seen.values.last?.0 == 2_000)
    }
}
