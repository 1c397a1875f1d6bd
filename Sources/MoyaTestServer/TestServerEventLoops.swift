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
enum TestServerEventLoops {
    private static let group = LockedValue<MultiThreadedEventLoopGroup?>(nil)

    /// The shared group, made on first use.
    static func shared() async -> MultiThreadedEventLoopGroup {
        if let existing = self.group.withLock({ $0 }) {
            return existing
        }
        let made = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: MultiThreadedEventLoopGroup(numberOfThreads: 8))
            }
        }
        let (group, spare) = self.group.withLock { stored -> (MultiThreadedEventLoopGroup, MultiThreadedEventLoopGroup?) in
            if let stored { return (stored, made) }
            stored = made
            return (made, nil)
        }
        // Two first uses at once: the one that came second gives its group back.
        spare?.shutdownGracefully { _ in }
        return group
    }
}
