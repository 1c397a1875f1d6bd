import Dispatch

/// Runs async work from synchronous top-level code (the demo) by blocking the calling thread
/// until a task has finished it. Never use it on a task: blocking a thread of
/// the cooperative pool is exactly what the async API avoids.
enum BlockingBridge {
    @available(*, noasync)
    static func run<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws -> Value {
        let result = LockedValue<Result<Value, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await work()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            finished.signal()
        }
        finished.wait()
        return try result.withLock { $0! }.get()
    }
}
