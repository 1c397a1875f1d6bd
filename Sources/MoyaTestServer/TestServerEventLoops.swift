import Dispatch
import NIOPosix

/// The event loops of the project's test servers: eight threads that all of them share, apart
/// from the loops of MoyaTesting's own servers, made without blocking a thread of the
/// cooperative pool.
///
/// The project's test routes work hard on their event loop (hashing uploads of tens of MiB,
/// parsing multipart bodies). On the kit's two loops that held up every other server's
/// connections, and under ThreadSanitizer their clients' timeouts fired. A loop per server
/// was worse: with every test running in parallel, hundreds of server threads on two cores
/// accepted connections too late. Eight loops keep one busy route from stalling the rest.
/// Making a `MultiThreadedEventLoopGroup` waits until its threads run, so it is made on a
/// Dispatch thread, once, and never shut down (like `MultiThreadedEventLoopGroup.singleton`).
///
/// One task makes it, so the hundreds of tests that start a server in the first moment of a
/// parallel run all wait for the same group. (Each used to make its own and give it back if
/// another had been stored first: thousands of threads and over ten thousand descriptors at
/// once, for a moment.)
enum TestServerEventLoops {
    /// Runs once, on first use (a `static let` is initialised once, whichever thread asks).
    private static let making = Task<MultiThreadedEventLoopGroup, Never> {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: MultiThreadedEventLoopGroup(numberOfThreads: 8))
            }
        }
    }

    /// The shared group, made on first use.
    static func shared() async -> MultiThreadedEventLoopGroup {
        await making.value
    }
}
