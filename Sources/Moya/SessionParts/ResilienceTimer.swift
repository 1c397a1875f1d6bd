import Dispatch
import Foundation

/// The session's one timer for its resilience policies' deadlines and hedges: a wheel of
/// buckets a tick apart, turned by one repeating timer while anything is scheduled.
///
/// A timer per request (`asyncAfter`) would wake a thread for every request, including the
/// many that end long before it fires (a hedge's 10 ms on a healthy upstream, a 30-second
/// deadline): at thousands of requests a second, those wake-ups cost more than the request.
/// Here scheduling and cancelling are a dictionary insert and removal under one lock, a
/// cancelled entry is gone at once (nothing is held until its time), and the wheel turns at most
/// once a tick. An entry fires within a tick after its time.
final class ResilienceTimer: Sendable {
    /// A scheduled entry, for ``cancel(_:)``.
    struct Handle: Sendable {
        fileprivate let slot: Int
        fileprivate let id: UInt64
    }

    private struct Entry {
        /// The tick it is due at.
        let due: UInt64
        let action: @Sendable () -> Void
    }

    private struct Wheel {
        var slots: [[UInt64: Entry]]
        var nextID: UInt64 = 0
        var count = 0
        /// The tick the wheel turned to last.
        var turned: UInt64
        /// The timer turning the wheel, while anything is scheduled. Unchecked: a dispatch
        /// source is thread-safe, and it is only made, resumed and cancelled here.
        var timer: UncheckedSendable<any DispatchSourceTimer>?
    }

    /// The tick, in nanoseconds: 4 ms, a bound on how late a hedge or a deadline is, and at
    /// most 250 wake-ups a second while anything is scheduled.
    static let tick: UInt64 = 4_000_000
    /// The slots: a turn of the wheel is 4,096 ticks (16 s); a later entry waits in its slot
    /// for as many turns as it needs.
    private static let slotCount = 4096

    private let wheel: Protected<Wheel>
    private let queue = DispatchQueue(label: "org.moya.resilience-timer")

    init() {
        // The slots are made at the first entry: most sessions never schedule one.
        wheel = Protected(Wheel(slots: [], turned: Self.currentTick()))
    }

    /// A wheel let go of with entries still scheduled (a session released while a request's
    /// hedge or deadline was pending) stops its timer: the dispatch source would otherwise go on
    /// turning, and hold its handler, for ever.
    deinit {
        wheel.withLock { $0.timer }?.value.cancel()
    }

    private static func currentTick() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds / tick
    }

    /// Runs `action` (on a global queue) `seconds` from now, unless cancelled first.
    @discardableResult
    func schedule(after seconds: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Handle {
        let ticks = UInt64(max(0, seconds) * 1e9 / Double(Self.tick)) + 1
        let due = Self.currentTick() + ticks
        let (handle, starts): (Handle, Bool) = wheel.withLock { wheel in
            if wheel.slots.isEmpty { wheel.slots = Array(repeating: [:], count: Self.slotCount) }
            wheel.nextID &+= 1
            let slot = Int(due % UInt64(Self.slotCount))
            wheel.slots[slot][wheel.nextID] = Entry(due: due, action: action)
            wheel.count += 1
            let starts = wheel.timer == nil
            if starts {
                // Every slot is empty: the wheel starts turning from now.
                wheel.timer = UncheckedSendable(DispatchSource.makeTimerSource(queue: queue))
                wheel.turned = due - ticks
            }
            return (Handle(slot: slot, id: wheel.nextID), starts)
        }
        if starts { start() }
        return handle
    }

    /// Cancels the entry of `handle`, if it has not run.
    func cancel(_ handle: Handle) {
        wheel.withLock { wheel in
            if !wheel.slots.isEmpty, wheel.slots[handle.slot].removeValue(forKey: handle.id) != nil {
                wheel.count -= 1
            }
        }
    }

    /// Starts the timer that turns the wheel.
    private func start() {
        guard let timer = wheel.withLock({ $0.timer?.value }) else { return }
        timer.setEventHandler { [weak self] in self?.turn() }
        timer.schedule(deadline: .now() + .nanoseconds(Int(Self.tick)), repeating: .nanoseconds(Int(Self.tick)), leeway: .nanoseconds(Int(Self.tick / 4)))
        timer.resume()
    }

    /// Turns the wheel to now: runs what is due, and stops the timer when nothing is left.
    private func turn() {
        let now = Self.currentTick()
        var due: [@Sendable () -> Void] = []
        let stopped: UncheckedSendable<any DispatchSourceTimer>? = wheel.withLock { wheel in
            // At most a turn's worth of slots: every slot is visited once.
            let from = max(wheel.turned + 1, now >= UInt64(Self.slotCount) ? now - UInt64(Self.slotCount) + 1 : 0)
            if from <= now, !wheel.slots.isEmpty {
                for tick in from...now {
                    let slot = Int(tick % UInt64(Self.slotCount))
                    guard !wheel.slots[slot].isEmpty else { continue }
                    for (id, entry) in wheel.slots[slot] where entry.due <= now {
                        due.append(entry.action)
                        wheel.slots[slot].removeValue(forKey: id)
                        wheel.count -= 1
                    }
                }
            }
            wheel.turned = now
            guard wheel.count == 0, let timer = wheel.timer else { return nil }
            wheel.timer = nil
            return timer
        }
        stopped?.value.cancel()
        // Off the wheel's queue: an action may run a caller's completion.
        for action in due { DispatchQueue.global().async(execute: action) }
    }
}
