import Dispatch
import Foundation

/// What a ``ResilienceTimer`` entry may call instead of a closure: the object itself is held,
/// and nothing is allocated for the entry.
protocol ResilienceTimerTarget: AnyObject, Sendable {
    /// The entry's time came.
    func timerFired()
}

/// The session's one timer for its resilience policies' deadlines and hedges: its entries in
/// one array, and one dispatch timer set for the earliest.
///
/// A timer per request (`asyncAfter`) would wake a thread for every request, including the
/// many that end long before it fires (a hedge's 10 ms on a healthy upstream, a 30-second
/// deadline): at thousands of requests a second, those wake-ups cost more than the request.
/// Here scheduling takes a free place of the array (the one freed last, whose memory is the
/// warmest) and cancelling gives it back, under one lock: a cancelled entry is gone at once
/// (nothing is held until its time), and its handle says where it is (no hashing, no search).
/// An array of slots (a wheel) was tried: each request touched two slots' storage that no other
/// request had touched lately, and those cache misses were most of a request's timer cost.
///
/// The dispatch timer is set again only when an entry is due before the time it is set for,
/// and when it fires: entries of 30-second deadlines that requests cancel wake nobody, and
/// 10 ms hedges wake a thread about once per 10 ms, not once per request. When it fires, it
/// runs every entry due and finds the next in one pass over the array, whose length is the most
/// entries there were at once. An entry runs within a tick (4 ms) after its time.
///
/// Nothing refers to the timer weakly: the first weak reference to an object gives it a side
/// table for good, every retain and release of it then takes the runtime's slow path, and each
/// request with a deadline retains the timer. The dispatch timer's handler holds the ``Core``
/// instead, which the timer stops as it goes.
final class ResilienceTimer: Sendable {
    /// The entries and the dispatch timer.
    let core: Core

    /// A timer that runs its entries after real time, on a dispatch timer; or, on a test's
    /// `clock` that moves when the test says (``ResilienceClock/moves``), as that clock moves,
    /// with no dispatch timer. (A test's clock that does not say so leaves the timer on real
    /// time.)
    init(clock: ResilienceClock = .system) {
        core = Core(clock: clock)
    }

    /// Seconds now, on the timer's time: what ``schedule(after:from:target:)`` counts from.
    func now() -> TimeInterval {
        core.now()
    }

    /// A scheduled entry, for ``cancel(_:)``.
    typealias Handle = Core.Handle

    /// The dispatch timer stops with the timer: it would otherwise stay set, and keep its
    /// handler and the core, for ever (a session released while a request's deadline or a
    /// queued wait was pending).
    deinit {
        core.stop()
    }

    /// Runs `action` (on a global queue) `seconds` from now, unless cancelled first.
    @discardableResult
    func schedule(after seconds: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Handle {
        core.schedule(after: seconds, action: .closure(action))
    }

    /// Calls `target`'s ``ResilienceTimerTarget/timerFired()`` (on a global queue) `seconds`
    /// after `start` (the caller's reading of ``now()``, which this one then need not read
    /// again), unless cancelled first. The timer holds `target` until then.
    @discardableResult
    func schedule(after seconds: TimeInterval, from start: TimeInterval, target: any ResilienceTimerTarget) -> Handle {
        core.schedule(after: seconds, from: start, action: .target(target))
    }

    /// Calls `target`'s ``ResilienceTimerTarget/timerFired()`` (on a global queue) `seconds`
    /// after `uptime` (`DispatchTime`'s uptime, in nanoseconds: when a wait began), unless
    /// cancelled first. On the system clock, whose readings are that uptime, the clock is not
    /// read; a test's clock is read, and the time since `uptime` taken from its reading.
    @discardableResult
    func schedule(after seconds: TimeInterval, sinceUptime uptime: UInt64, target: any ResilienceTimerTarget) -> Handle {
        core.schedule(after: seconds, from: core.time(ofUptime: uptime), action: .target(target))
    }

    /// How many entries are scheduled and have neither run nor been cancelled (for tests that
    /// move a test's clock and wait for what it made due to be handled).
    var scheduled: Int {
        core.scheduled
    }

    /// Cancels the entry of `handle`, if it has not run. The dispatch timer stays set: it finds
    /// nothing due when it fires, and is set for the next entry then.
    ///
    /// - Returns: Whether the entry was still scheduled (it will not run); `false` when it has
    ///   run or is running, or was cancelled before.
    @discardableResult
    func cancel(_ handle: Handle) -> Bool {
        core.cancel(handle)
    }
}

extension ResilienceTimer {
    /// The entries and the dispatch timer, whose handler holds the core until ``stop()``.
    final class Core: Sendable {
        /// A scheduled entry, for ``cancel(_:)``.
        struct Handle: Sendable {
            /// Where the entry is in the array.
            fileprivate let index: Int
            /// Its number: a place taken again by a later entry is not cancelled by this handle.
            fileprivate let id: UInt64
        }

        /// What an entry runs: a closure, or a target's ``ResilienceTimerTarget/timerFired()`` (no
        /// closure to allocate, for the entries every request may make).
        enum Action: Sendable {
            case closure(@Sendable () -> Void)
            case target(any ResilienceTimerTarget)

            func run() {
                switch self {
                case .closure(let action): action()
                case .target(let target): target.timerFired()
                }
            }
        }

        private struct Entry {
            let id: UInt64
            /// The tick it is due at.
            let due: UInt64
            let action: Action
        }

        private struct Store {
            /// The entries; `nil` where a place is free.
            var entries: [Entry?] = []
            /// The free places, the last freed at the end.
            var free: [Int] = []
            var nextID: UInt64 = 0
            /// How many entries are scheduled.
            var count = 0
            /// The tick the dispatch timer is set for, `nil` while it is set for nothing.
            var armed: UInt64?
            /// The dispatch timer, made at the first entry and kept. Unchecked: a dispatch source
            /// is thread-safe, and it is only made, set and cancelled here.
            var timer: UncheckedSendable<any DispatchSourceTimer>?
            /// Whether ``timer`` was made.
            var hasTimer = false
            /// Whether the core was stopped: no timer is made after.
            var stopped = false

            /// Frees place `index`, whose entry ran or was cancelled.
            mutating func free(_ index: Int) {
                entries[index] = nil
                free.append(index)
                count -= 1
                // After a burst, the storage goes with the last entry.
                if count == 0, entries.count > 1024 {
                    entries = []
                    free = []
                }
            }
        }

        /// The tick, in nanoseconds: 4 ms, a bound on how late a hedge or a deadline is.
        static let tick: UInt64 = 4_000_000

        private let store = Protected(Store())
        private let queue = DispatchQueue(label: "org.moya.resilience-timer")
        /// The test's clock the entries are due on; `nil` for real time (`DispatchTime`'s
        /// uptime), on a dispatch timer.
        private let testClock: ResilienceClock?
        /// Whether the entries run on real time, on a dispatch timer.
        private var runsOnDispatch: Bool { testClock == nil }

        init(clock: ResilienceClock) {
            testClock = clock.moves == nil ? nil : clock
            // Weak: the timer holds the clock, and with it the clock's `Moves`; a strong
            // reference back would keep both alive for good.
            clock.moves?.join { [weak self] in self?.runDue() }
        }

        /// Seconds now, on the entries' time.
        func now() -> TimeInterval {
            testClock?.now() ?? ResilienceClock.seconds(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds)
        }

        /// How many entries are scheduled.
        var scheduled: Int {
            store.withLock { $0.count }
        }

        /// Stops the dispatch timer for good, which lets its handler, and with it the core, go.
        /// Entries still scheduled never run.
        func stop() {
            store.withLock { store in
                store.stopped = true
                return store.timer
            }?.value.cancel()
        }

        /// The reading of the clock at `uptime` (`DispatchTime`'s uptime, in nanoseconds).
        func time(ofUptime uptime: UInt64) -> TimeInterval {
            guard let testClock else { return ResilienceClock.seconds(uptimeNanoseconds: uptime) }
            let now = DispatchTime.now().uptimeNanoseconds
            return testClock.now() - Double(now - min(now, uptime)) / 1e9
        }

        /// The tick of `seconds` on the clock.
        private static func tick(at seconds: TimeInterval) -> UInt64 {
            UInt64(max(0, seconds) * 1e9) / tick
        }

        /// Runs `action` (on a global queue) `seconds` after `start` (a reading of the clock; now
        /// by default), unless cancelled first.
        func schedule(after seconds: TimeInterval, from startTime: TimeInterval? = nil, action: Action) -> Handle {
            let startTick = Self.tick(at: startTime ?? now())
            let due = startTick + UInt64(max(0, min(seconds, 1e7)) * 1e9 / Double(Self.tick)) + 1
            let (handle, makes): (Handle, Bool) = store.withLock { store in
                var makes = false
                // Asked of a flag: reading the optional timer copies it, a retain and a release
                // of the one timer every request's deadline shares.
                if !store.hasTimer, !store.stopped, runsOnDispatch {
                    store.timer = UncheckedSendable(DispatchSource.makeTimerSource(queue: queue))
                    store.hasTimer = true
                    makes = true
                }
                store.nextID &+= 1
                let index: Int
                if let free = store.free.popLast() {
                    index = free
                } else {
                    index = store.entries.count
                    store.entries.append(nil)
                }
                store.entries[index] = Entry(id: store.nextID, due: due, action: action)
                store.count += 1
                // The timer is set again only for an entry due before the time it is set for;
                // under the lock, so that two entries never set it out of order.
                if !makes, store.armed.map({ due < $0 }) ?? true {
                    Self.set(&store, at: due)
                }
                return (Handle(index: index, id: store.nextID), makes)
            }
            if makes { start() }
            return handle
        }

        /// Cancels the entry of `handle`, if it has not run; whether it was still scheduled.
        func cancel(_ handle: Handle) -> Bool {
            // The entry is released after the lock: its closure or target may be the last reference
            // to a request's state, whose teardown has no business under the timer's lock.
            let removed: Entry? = store.withLock { store in
                guard handle.index < store.entries.count, let entry = store.entries[handle.index], entry.id == handle.id else { return nil }
                store.free(handle.index)
                return entry
            }
            return removed != nil
        }

        /// Gives the dispatch timer its handler, and starts it at the earliest entry.
        private func start() {
            store.withLock { store in
                guard let timer = store.timer?.value else { return }
                // Strong: the core lives as long as the dispatch timer, which ``stop()`` ends.
                timer.setEventHandler { [self] in runDue() }
                store.armed = nil
                var earliest: UInt64?
                for case let entry? in store.entries where earliest.map({ entry.due < $0 }) ?? true {
                    earliest = entry.due
                }
                Self.set(&store, at: earliest)
                timer.resume()
            }
        }

        /// Sets the dispatch timer for the start of tick `due` (when the entries of that tick are
        /// due), or for nothing. Under the lock.
        private static func set(_ store: inout Store, at due: UInt64?) {
            guard let timer = store.timer?.value else { return }
            store.armed = due
            let deadline = due.map { DispatchTime(uptimeNanoseconds: $0 * tick) } ?? .distantFuture
            timer.schedule(deadline: deadline, repeating: .never, leeway: .nanoseconds(Int(tick / 4)))
        }

        /// Runs every entry due, and sets the dispatch timer for the next, if there is one: when
        /// the dispatch timer fires, or when a test's clock moved.
        func runDue() {
            let nowTick = Self.tick(at: now())
            var due: [Action] = []
            store.withLock { store in
                var next: UInt64?
                if store.count > 0 {
                    for index in store.entries.indices {
                        guard let entry = store.entries[index] else { continue }
                        if entry.due <= nowTick {
                            due.append(entry.action)
                            store.free(index)
                            if store.entries.isEmpty { break }
                        } else if next.map({ entry.due < $0 }) ?? true {
                            next = entry.due
                        }
                    }
                }
                Self.set(&store, at: next)
            }
            // Off the timer's queue: an action may run a caller's completion.
            for action in due { DispatchQueue.global().async { action.run() } }
        }
    }
}
