import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import Moya

/// The event loop's one timer for the idle timeouts of all its attempts. These tests drive a
/// clock of their own on a real loop with stand-in attempts; `IdleTimeoutTests` covers the
/// timeouts of real requests.
@Suite("IdleClock: one timer per event loop for the idle timeouts")
struct IdleClockTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    /// An attempt as the clock sees it. Touched only on the clock's loop, but for ``expired``.
    final class Attempt: IdleWatched, @unchecked Sendable {
        // Sendable: every read and write happens on the clock's loop (the tests hop there);
        // `expired` is a `Signal`, safe from any thread.
        var due: NIODeadline?
        var expiries: [NIODeadline] = []
        var onExpiry: (() -> Void)?
        /// Fires when the attempt first expires.
        let expired = Signal()

        init(due: NIODeadline?) {
            self.due = due
        }

        var idleDue: NIODeadline? { due }

        func idleExpired() {
            expiries.append(.now())
            onExpiry?()
            expired.fire()
        }
    }

    /// Runs `body` on the loop and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
        try await loop.submit(body).get()
    }

    /// A future that completes once the clock's timer, as it is scheduled now, has fired: for a
    /// timer that fires with no attempt to expire, so that no callback tells it. Call it on the
    /// loop in the same turn as the calls that schedule the timer, so that the timer cannot
    /// fire (and be scheduled again, or not at all) in between. A task scheduled on the loop
    /// for the timer's deadline runs after it, as NIO runs the tasks due at the same time in the
    /// order they were scheduled.
    func timerMarker(_ clock: IdleClock) -> EventLoopFuture<Void>? {
        guard let due = clock.checkDue else { return nil }
        return loop.scheduleTask(deadline: due) {}.futureResult
    }

    @Test("One timer for many attempts: a later limit schedules nothing, an earlier one moves the timer forward")
    func oneTimer() async throws {
        let clock = IdleClock(loop: loop)
        try await onLoop {
            let now = NIODeadline.now()
            let first = Attempt(due: now + .seconds(100))
            let later = Attempt(due: now + .seconds(200))
            let earlier = Attempt(due: now + .seconds(50))
            clock.watch(first)
            #expect(clock.checkDue == first.due)
            clock.watch(later)
            #expect(clock.checkDue == first.due)
            clock.watch(earlier)
            #expect(clock.checkDue == earlier.due)
            #expect(clock.watchedCount == 3)
            // Watching again changes nothing.
            clock.watch(first)
            #expect(clock.watchedCount == 3)
            for attempt in [first, later, earlier] {
                clock.unwatch(attempt)
            }
            #expect(clock.watchedCount == 0)
            // The timer stays until it fires.
            #expect(clock.checkDue == earlier.due)
        }
    }

    @Test("An attempt expires once, not before its due time, and then nothing is left to time")
    func expiresOnce() async throws {
        let clock = IdleClock(loop: loop)
        let attempt = try await onLoop {
            let attempt = Attempt(due: .now() + .milliseconds(100))
            clock.watch(attempt)
            return attempt
        }
        #expect(await attempt.expired.wait(), "the attempt expires")
        try await onLoop {
            #expect(attempt.expiries.count == 1)
            #expect(attempt.expiries.allSatisfy { $0 >= attempt.due! })
            #expect(clock.watchedCount == 0)
            #expect(clock.checkDue == nil)
        }
    }

    @Test("An attempt heard from after it was watched expires at its new due time, not the first")
    func movedDueTime() async throws {
        let clock = IdleClock(loop: loop)
        let attempt = try await onLoop {
            let now = NIODeadline.now()
            let attempt = Attempt(due: now + .milliseconds(50))
            clock.watch(attempt)
            // Activity moves the due time without telling the clock, as an exchange does.
            attempt.due = now + .milliseconds(400)
            return attempt
        }
        #expect(await attempt.expired.wait(), "the attempt expires")
        try await onLoop {
            #expect(attempt.expiries.count == 1)
            #expect(attempt.expiries[0] >= attempt.due!)
            #expect(clock.checkDue == nil)
        }
    }

    @Test("An attempt no longer watched never expires; the timer fires once and is not scheduled again")
    func unwatchedNeverExpires() async throws {
        let clock = IdleClock(loop: loop)
        let (attempt, marker) = try await onLoop {
            let attempt = Attempt(due: .now() + .milliseconds(50))
            clock.watch(attempt)
            clock.unwatch(attempt)
            return (attempt, self.timerMarker(clock))
        }
        let timer = try #require(marker, "the clock has a timer scheduled")
        try await timer.get()
        try await onLoop {
            #expect(clock.checkDue == nil, "the timer has fired and is not scheduled again")
            #expect(attempt.expiries.isEmpty)
            #expect(clock.watchedCount == 0)
        }
    }

    @Test("An attempt that stopped waiting (reading paused) is let go when the timer fires, not failed")
    func pausedAttemptIsDropped() async throws {
        let clock = IdleClock(loop: loop)
        let (paused, waiting, marker) = try await onLoop {
            let now = NIODeadline.now()
            let paused = Attempt(due: now + .milliseconds(50))
            let waiting = Attempt(due: now + .seconds(100))
            clock.watch(paused)
            clock.watch(waiting)
            paused.due = nil
            return (paused, waiting, self.timerMarker(clock))
        }
        let timer = try #require(marker, "the clock has a timer scheduled")
        try await timer.get()
        try await onLoop {
            #expect(clock.watchedCount == 1, "the paused attempt is let go")
            #expect(paused.expiries.isEmpty)
            #expect(waiting.expiries.isEmpty)
            // The timer now waits for the one attempt left.
            #expect(clock.checkDue == waiting.due)
            clock.unwatch(waiting)
        }
    }

    @Test("Attempts expire in their own time, and one that expires may start another wait from its callback")
    func expiriesInTurnAndReentry() async throws {
        let clock = IdleClock(loop: loop)
        let (first, second, next) = try await onLoop {
            let now = NIODeadline.now()
            let first = Attempt(due: now + .milliseconds(30))
            let second = Attempt(due: now + .milliseconds(120))
            let next = Attempt(due: nil)
            first.onExpiry = {
                next.due = .now() + .milliseconds(30)
                clock.watch(next)
            }
            clock.watch(second)
            clock.watch(first)
            return (first, second, next)
        }
        for (attempt, name) in [(first, "first"), (second, "second"), (next, "next")] {
            #expect(await attempt.expired.wait(), "the \(name) attempt expires")
        }
        try await onLoop {
            for attempt in [first, second, next] {
                #expect(attempt.expiries.count == 1)
                #expect(attempt.expiries[0] >= attempt.due!)
            }
            #expect(clock.watchedCount == 0)
        }
    }

    @Test("Each loop of NIO's singleton group has one shared clock; a loop of another group gets a clock of its own")
    func sharedClocks() async throws {
        #expect(IdleClock.on(loop) === IdleClock.on(loop))
        #expect(IdleClock.on(loop).loop === loop)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let other = group.next()
        #expect(IdleClock.on(other) !== IdleClock.on(other))
        #expect(IdleClock.on(other).loop === other)
        try await group.shutdownGracefully()
    }
}
