import Foundation

/// Two counts over a sliding window of time, kept in ten slots: what happened in the last
/// window, give or take a tenth of it. A value type, kept behind its owner's lock.
///
/// The slot being counted into is kept inline, in the value itself, and the earlier slots in
/// an array it is moved into when its time is over (once a slot's length, a second for a
/// ten-second window). Every request adds to these counts, and its owner's state is written by
/// one thread and then another: counts in arrays of their own touched three more blocks of
/// memory per addition, each a cache miss when the other thread wrote it last.
struct SlidingCounts: Sendable {
    /// The number of slots a window is cut into.
    static let slotCount = 10

    /// One slot's counts, and its index in time (`now / slotLength`, rounded down), or
    /// `Int64.min` for one never used.
    private struct Slot {
        var index = Int64.min
        var first = 0
        var second = 0
    }

    /// Each slot's length, in seconds.
    let slotLength: TimeInterval
    /// The latest slot counted into.
    private var current = Slot()
    /// The slots before it, each at its index modulo ``slotCount``.
    private var earlier = [Slot](repeating: Slot(), count: SlidingCounts.slotCount)

    /// Counts over windows of `window` seconds.
    init(window: TimeInterval) {
        slotLength = window / Double(Self.slotCount)
    }

    private func slot(at now: TimeInterval) -> Int64 {
        // The floor, by truncation and a correction below zero (a test's clock): without SSE4.1,
        // `rounded(.down)` is a call into libm on every count.
        let slots = now / slotLength
        let truncated = Int64(slots)
        return Double(truncated) > slots ? truncated - 1 : truncated
    }

    private static func position(of index: Int64) -> Int {
        Int(((index % Int64(slotCount)) + Int64(slotCount)) % Int64(slotCount))
    }

    /// Adds to the counts of the slot of `now`.
    mutating func add(first addedFirst: Int = 0, second addedSecond: Int = 0, at now: TimeInterval) {
        let index = slot(at: now)
        if index > current.index {
            // The current slot's time is over: it joins the earlier ones, in place of the slot
            // a window before it.
            if current.index != .min { earlier[Self.position(of: current.index)] = current }
            current = Slot(index: index)
        } else if index < current.index {
            // A time read before another thread's, counted after it: its slot is an earlier one.
            let position = Self.position(of: index)
            if earlier[position].index < index { earlier[position] = Slot(index: index) }
            guard earlier[position].index == index else { return }
            earlier[position].first += addedFirst
            earlier[position].second += addedSecond
            return
        }
        current.first += addedFirst
        current.second += addedSecond
    }

    /// The two counts of the window that ends at `now`.
    func totals(at now: TimeInterval) -> (first: Int, second: Int) {
        let latest = slot(at: now)
        func inWindow(_ slot: Slot) -> Bool { slot.index > latest - Int64(Self.slotCount) && slot.index <= latest }
        var totals = (first: 0, second: 0)
        if inWindow(current) {
            totals = (current.first, current.second)
        }
        for slot in earlier where slot.index != current.index && inWindow(slot) {
            totals.first += slot.first
            totals.second += slot.second
        }
        return totals
    }

    /// Whether nothing was counted in the window that ends at `now`.
    func isEmpty(at now: TimeInterval) -> Bool {
        let totals = totals(at: now)
        return totals.first == 0 && totals.second == 0
    }

    /// Forgets every count.
    mutating func reset() {
        current = Slot()
        earlier = [Slot](repeating: Slot(), count: Self.slotCount)
    }
}
