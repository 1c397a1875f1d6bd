import NIOCore
import NIOPosix
import Testing

@testable import Moya

/// An attempt recorded before its hop to the event loop: a cancel during the hop is seen there,
/// before AsyncHTTPClient gets the request.
@Suite("PendingAttempt: a cancel during the hop to the loop stops the attempt before it starts")
struct PendingAttemptTests {
    @Test("A cancel from another thread reaches the loop before the attempt that was queued after it")
    func cancelFromElsewhere() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pending = PendingAttempt(loop: loop)
        // Not on the loop: the cancel hops there, and runs before what is queued after it.
        pending.cancel()
        let cancelled = try await loop.submit { pending.isCancelled }.get()
        #expect(cancelled)
    }

    @Test("A cancel on the loop is seen at once; without one the attempt may start")
    func cancelOnTheLoop() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let untouched = PendingAttempt(loop: loop)
        let pending = PendingAttempt(loop: loop)
        let (before, after) = try await loop.submit { () -> (Bool, Bool) in
            let before = untouched.isCancelled
            pending.cancel()
            return (before, pending.isCancelled)
        }.get()
        #expect(!before)
        #expect(after)
    }
}
