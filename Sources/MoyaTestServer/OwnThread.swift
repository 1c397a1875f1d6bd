import Foundation

/// Runs work that blocks (waits for a child process, reads a pipe to its end) on a thread of its
/// own, and awaits it.
///
/// On Linux, Swift's tasks run on Dispatch's global queues: a blocking call made in a test's
/// task, or handed to `DispatchQueue.global()`, holds one of the few threads (two on a 2-core
/// machine) that every test of a parallel run shares, and their requests then wait.
public enum OwnThread {
    /// What `work` returned or threw, once it has run on a new thread.
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
