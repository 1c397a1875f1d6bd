import NIOCore

/// Runs Swift tasks on one of the mock servers' event loops: a route's handler runs there, on
/// the server's own threads, instead of Swift's shared cooperative pool.
///
/// Tests run in parallel on that pool. When hundreds of them are queued on a machine with two
/// cores, a handler that waited its turn there could answer seconds late, long enough for the
/// client under test to time out. On the server's loop it answers as soon as the request is in.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.eventLoop.execute {
            job.runSynchronously(on: executor)
        }
    }
}
