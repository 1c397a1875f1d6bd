import Dispatch
import NIOPosix

/// A one-thread event loop group for one test server, made without blocking a thread of the
/// cooperative pool.
///
/// The project's test routes work hard on their event loop (hashing uploads of tens of MiB,
/// parsing multipart bodies): on loops shared with other servers, that held up every other
/// server's connections, and under ThreadSanitizer their clients' timeouts fired. Making a
/// `MultiThreadedEventLoopGroup` waits until its thread runs, so it is made on a Dispatch thread.
enum DedicatedEventLoopGroup {
    static func make() async -> MultiThreadedEventLoopGroup {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: MultiThreadedEventLoopGroup(numberOfThreads: 1))
            }
        }
    }
}
