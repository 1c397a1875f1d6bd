import Dispatch
import Foundation

/// What a ``ResilienceTimer`` entry may call instead of a closure: the object itself is held,
/// and nothing is allocated for the entry.
protocol ResilienceTimerTarget: AnyObject, Sendable {
    /// The entry's time came.
    func timerFired()
}

/// The session's one timer for its resilience policies' deadlines and hedges: a wheel of
/// slots a tick apart, and one dispatch timer set for the earliest slot that holds an entry.
///
/// A timer per request (`asyncAfter`) would wake a thread for every request, including the
/// many that end long before it fires (a hedge's 10 ms on a healthy upstream, a 30-second
/// deadline): at thousands of requests a second, those wake-ups cost more than the request.
/// Here scheduling and cancelling are an append and a write under one lock, and a
/// cancelled entry is gone at once (nothing is held until its time). The dispatch timer is set
/// again only when an entry is due before the slot it is set for, and when it fires: a wheel of
/// 30-second deadlines that requests cancel wakes nobody, and one of 10 ms hedges wakes a
/// thread about once per 10 ms, not once per request nor once per tick. An entry runs within a
/// tick after its time.
///
/// A slot is an array, and a handle says where its entry is: cancelling is a comparison and a
/// write, with no hashing (a dictionary's removal was most of a request's deadline). A cancelled
/// entry's action is released at once and leaves a hole; a slot with no live entry is emptied
/// (its storage kept), and one whose holes outnumber its entries is compacted when the wheel
/// turns past it (an entry moved then is found by its number).
final class ResilienceTimer: Sendable {
    /// A scheduled entry, for ``cancel(_:)``.
    struct Handle: Sendable {
        fileprivate let slot: Int
        /// Where the entry was put in its slot: it is there until the slot is compacted.
        fileprivate let index: Int
        fileprivate let id: UInt64
    }

    /// What an entry runs: a closure, or a target's ``ResilienceTimerTarget/timerFired()`` (no
    /// closure to allocate, for the entries every request may make).
    private enum Action: Sendable {
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

    /// The entries of one tick of every turn: `nil` where one was cancelled or has run.
    private struct Slot {
        var entries: [Entry?] = []
        /// How many are not `nil`.
        var live = 0

        /// Takes out the entry `id`, looked for at `index` first.
        mutating func remove(_ id: UInt64, at index: Int) -> Entry? {
            var index = index
            if index >= entries.count || entries[index]?.id != id {
                // Moved by a compaction.
                guard let found = entries.firstIndex(where: { $0?.id == id }) else { return nil }
                index = found
            }
            guard let entry = entries[index] else { return nil }
            entries[index] = nil
            live -= 1
            if live == 0 { entries.removeAll(keepingCapacity: true) }
            return entry
        }
    }

    private struct Wheel {
        var slots: [Slot]
        var nextID: UInt64 = 0
        var count = 0
        /// The tick the wheel turned to last: every entry due at or before it has run.
        var turned: UInt64
        /// The tick the dispatch timer is set for, `nil` while it is set for nothing.
        var armed: UInt64?
        /// The dispatch timer, made at the first entry and kept. Unchecked: a dispatch source
        /// is thread-safe, and it is only made, set and cancelled here.
        var timer: UncheckedSendable<any DispatchSourceTimer>?
    }

    /// The tick, in nanoseconds: 4 ms, a bound on how late a hedge or a deadline is.
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
    /// hedge or deadline was pending) stops its timer: the dispatch source would otherwise stay
    /// set, and hold its handler, for ever.
    deinit {
        wheel.withLock { $0.timer }?.value.cancel()
    }

    private static func currentTick() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds / tick
    }

    /// Runs `action` (on a global queue) `seconds` from now, unless cancelled first.
    @discardableResult
    func schedule(after seconds: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Handle {
        schedule(after: seconds, action: .closure(action))
    }

    /// Calls `target`'s ``ResilienceTimerTarget/timerFired()`` (on a global queue) `seconds` from
    /// now, unless cancelled first. The wheel holds `target` until then.
    @discardableResult
    func schedule(after seconds: TimeInterval, target: any ResilienceTimerTarget) -> Handle {
        schedule(after: seconds, action: .target(target))
    }

    private func schedule(after seconds: TimeInterval, action: Action) -> Handle {
        let ticks = UInt64(max(0, seconds) * 1e9 / Double(Self.tick)) + 1
        let now = Self.currentTick()
        let (handle, makes): (Handle, Bool) = wheel.withLock { wheel in
            var makes = false
            if wheel.slots.isEmpty {
                wheel.slots = Array(repeating: Slot(), count: Self.slotCount)
                wheel.timer = UncheckedSendable(DispatchSource.makeTimerSource(queue: queue))
                makes = true
            }
            if wheel.count == 0 {
                // Every slot is empty: the wheel goes on from now.
                wheel.turned = max(wheel.turned, now)
            }
            // Never in a slot the wheel has already turned past: it would wait a whole turn.
            let due = max(now + ticks, wheel.turned + 1)
            wheel.nextID &+= 1
            let slot = Int(due % UInt64(Self.slotCount))
            let index = wheel.slots[slot].entries.count
            wheel.slots[slot].entries.append(Entry(id: wheel.nextID, due: due, action: action))
            wheel.slots[slot].live += 1
            wheel.count += 1
            // The timer is set again only for an entry due before the slot it is set for; under
            // the lock, so that two entries never set it out of order.
            if !makes, wheel.armed.map({ due < $0 }) ?? true {
                Self.set(&wheel, at: due)
            }
            return (Handle(slot: slot, index: index, id: wheel.nextID), makes)
        }
        if makes { start() }
        return handle
    }

    /// Cancels the entry of `handle`, if it has not run. The timer stays set: it finds nothing
    /// due when it fires, and is set for the next entry then.
    ///
    /// - Returns: Whether the entry was still scheduled (it will not run); `false` when it has
    ///   run or is running, or was cancelled before.
    @discardableResult
    func cancel(_ handle: Handle) -> Bool {
        // The entry is released after the lock: its closure or target may be the last reference
        // to a request's state, whose teardown has no business under the wheel's lock.
        let removed: Entry? = wheel.withLock { wheel in
            guard !wheel.slots.isEmpty, let entry = wheel.slots[handle.slot].remove(handle.id, at: handle.index) else { return nil }
            wheel.count -= 1
            return entry
        }
        return removed != nil
    }

    /// Gives the timer its handler, and starts it at the first entry's slot.
    private func start() {
        wheel.withLock { wheel in
            guard let timer = wheel.timer?.value else { return }
            timer.setEventHandler { [weak self] in self?.turn() }
            wheel.armed = nil
            var earliest: UInt64?
            for slot in wheel.slots where slot.live > 0 {
                for case let entry? in slot.entries where earliest.map({ entry.due < $0 }) ?? true { earliest = entry.due }
            }
            Self.set(&wheel, at: earliest)
            timer.resume()
        }
    }

    /// Sets the timer for the start of tick `due` (when the entries of that tick are due), or
    /// for nothing. Under the lock.
    private static func set(_ wheel: inout Wheel, at due: UInt64?) {
        guard let timer = wheel.timer?.value else { return }
        wheel.armed = due
        let deadline = due.map { DispatchTime(uptimeNanoseconds: $0 * tick) } ?? .distantFuture
        timer.schedule(deadline: deadline, repeating: .never, leeway: .nanoseconds(Int(tick / 4)))
    }

    /// Turns the wheel to now: runs what is due, and sets the timer for the next slot that holds
    /// an entry, if any does.
    private func turn() {
        let now = Self.currentTick()
        var due: [Action] = []
        wheel.withLock { wheel in
            // At most a turn's worth of slots: every slot is visited once.
            let from = max(wheel.turned + 1, now >= UInt64(Self.slotCount) ? now - UInt64(Self.slotCount) + 1 : 0)
            if from <= now, !wheel.slots.isEmpty {
                for tick in from...now {
                    let slot = Int(tick % UInt64(Self.slotCount))
                    guard wheel.slots[slot].live > 0 else { continue }
                    for index in wheel.slots[slot].entries.indices {
                        guard let entry = wheel.slots[slot].entries[index], entry.due <= now else { continue }
                        due.append(entry.action)
                        wheel.slots[slot].entries[index] = nil
                        wheel.slots[slot].live -= 1
                        wheel.count -= 1
                    }
                    if wheel.slots[slot].live == 0 {
                        wheel.slots[slot].entries.removeAll(keepingCapacity: true)
                    } else if wheel.slots[slot].entries.count > 2 * wheel.slots[slot].live + 16 {
                        // Holes left by cancels beside entries of later turns: they go, and the
                        // entries that stay are found by their numbers from now on.
                        wheel.slots[slot].entries.removeAll { $0 == nil }
                    }
                }
            }
            wheel.turned = max(wheel.turned, now)
            // The next slot after now that holds an entry: the timer fires for it (an entry of
            // a later turn waits there, and the timer is set again when it fires).
            var next: UInt64?
            if wheel.count > 0 {
                for ahead in 1...UInt64(Self.slotCount) where wheel.slots[Int((now + ahead) % UInt64(Self.slotCount))].live > 0 {
                    next = now + ahead
                    break
                }
            }
            Self.set(&wheel, at: next)
        }
        // Off the wheel's queue: an action may run a caller's completion.
        for action in due { DispatchQueue.global().async { action.run() } }
    }
}
