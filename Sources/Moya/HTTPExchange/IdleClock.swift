import NIOCore
import NIOPosix

/// What an ``IdleClock`` watches: an attempt with an idle timeout, bound to the clock's loop.
protocol IdleWatched: AnyObject {
    /// When the attempt times out if nothing more is heard, or `nil` when it is not waiting
    /// (reading is paused, or it has ended).
    var idleDue: NIODeadline? { get }

    /// The attempt waited past ``idleDue``: it fails. The clock no longer watches it.
    func idleExpired()
}

/// Keeps time for the idle timeouts of all the attempts on one event loop with a single timer.
///
/// A timer of its own for each attempt costs a scheduled task on the loop for every request, and
/// cancelling it when the response comes in: a client that sends one request at a time sent
/// about 4 % more requests per second with no idle timer at all. Here an attempt that starts
/// waiting is added to the loop's clock (a dictionary insert) and removed when it ends. The
/// clock's one timer is due at the earliest time an attempt it watches may time out; an attempt
/// whose limit ends later than that adds nothing to schedule. When the timer fires, it fails the
/// attempts whose time is up and is scheduled again for the earliest of the others. An attempt
/// that was heard from since it was added is not due yet: it moves its own due time forward
/// without telling the clock.
///
/// A timer whose attempts all ended meanwhile still fires once, finds nothing, and is not
/// scheduled again.
final class IdleClock: @unchecked Sendable {
    // Sendable: every method is called on `loop`'s thread (see `assertOnLoop`), and the timer
    // runs there too, so the state below is only touched from that one thread.

    /// The loop the clock and the attempts it watches run on.
    let loop: any EventLoop
    /// The attempts being watched.
    private var watched: [ObjectIdentifier: any IdleWatched] = [:]
    /// The scheduled check, and when it is due.
    private var check: (due: NIODeadline, timer: Scheduled<Void>)?

    /// A clock for `loop`. Use ``on(_:)`` for the shared clock of a loop of NIO's singleton group.
    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// One clock for each loop of `MultiThreadedEventLoopGroup.singleton`, the group of every
    /// client a session makes.
    private static let shared: [ObjectIdentifier: IdleClock] = {
        var clocks: [ObjectIdentifier: IdleClock] = [:]
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
            clocks[ObjectIdentifier(loop)] = IdleClock(loop: loop)
        }
        return clocks
    }()

    /// The clock for `loop`: the shared one of a loop of NIO's singleton group, or else a new one.
    static func on(_ loop: any EventLoop) -> IdleClock {
        shared[ObjectIdentifier(loop)] ?? IdleClock(loop: loop)
    }

    /// How many attempts the clock watches (for tests).
    var watchedCount: Int {
        assertOnLoop()
        return watched.count
    }

    /// When the clock's timer is due, if it is scheduled (for tests).
    var checkDue: NIODeadline? {
        assertOnLoop()
        return check?.due
    }

    /// Watches `subject` until ``unwatch(_:)``, or until it expires. Adding a watched subject
    /// again only makes sure the timer is due by its ``IdleWatched/idleDue``.
    func watch(_ subject: any IdleWatched) {
        assertOnLoop()
        guard let due = subject.idleDue else { return }
        watched[ObjectIdentifier(subject)] = subject
        if let check, check.due <= due {
            return
        }
        schedule(at: due)
    }

    /// Stops watching `subject`. The timer stays: when it fires with nothing to watch, it ends.
    func unwatch(_ subject: any IdleWatched) {
        assertOnLoop()
        watched.removeValue(forKey: ObjectIdentifier(subject))
    }

    private func schedule(at due: NIODeadline) {
        check?.timer.cancel()
        let timer = loop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            fire()
        }
        check = (due, timer)
    }

    /// The timer fired: the subjects whose time is up expire; the timer is scheduled again for
    /// the earliest of the others.
    private func fire() {
        check = nil
        let now = NIODeadline.now()
        var ended: [ObjectIdentifier] = []
        var expired: [any IdleWatched] = []
        var next: NIODeadline?
        for (key, subject) in watched {
            guard let due = subject.idleDue else {
                ended.append(key)
                continue
            }
            if due <= now {
                ended.append(key)
                expired.append(subject)
            } else if next.map({ due < $0 }) ?? true {
                next = due
            }
        }
        for key in ended {
            watched.removeValue(forKey: key)
        }
        if let next {
            schedule(at: next)
        }
        // Last: an expiring attempt fails its task, which may call back into the clock.
        for subject in expired {
            subject.idleExpired()
        }
    }

    private func assertOnLoop() {
        assert(loop.inEventLoop, "IdleClock used off its event loop")
    }
}
