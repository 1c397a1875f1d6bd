import Foundation

/// Two counts over a sliding window of time, kept in ten slots: what happened in the last
/// window, give or take a tenth of it. A value type, kept behind its owner's lock.
struct SlidingCounts: Sendable {
    /// The number of slots a window is cut into.
    static let slotCount = 10

    /// Each slot's length, in seconds.
    let slotLength: TimeInterval
    /// Each slot's index in time (`now / slotLength`, rounded down), or `Int64.min` for one never used.
    private var indices = [Int64](repeating: .min, count: SlidingCounts.slotCount)
    private var first = [Int](repeating: 0, count: SlidingCounts.slotCount)
    private var second = [Int](repeating: 0, count: SlidingCounts.slotCount)

    /// Counts over windows of `window` seconds.
    init(window: TimeInterval) {
        slotLength = window / Double(Self.slotCount)
    }

    private func slot(at now: TimeInterval) -> Int64 {
        Int64((now / slotLength).rounded(.down))
    }

    /// Adds to the counts of the slot of `now`.
    mutating func add(first addedFirst: Int = 0, second addedSecond: Int = 0, at now: TimeInterval) {
        let index = slot(at: now)
        let position = Int(((index % Int64(Self.slotCount)) + Int64(Self.slotCount)) % Int64(Self.slotCount))
        if indices[position] != index {
            indices[position] = index
            first[position] = 0
            second[position] = 0
        }
        first[position] += addedFirst
        second[position] += addedSecond
    }

    /// The two counts of the window that ends at `now`.
    func totals(at now: TimeInterval) -> (first: Int, second: Int) {
        let current = slot(at: now)
        var totals = (first: 0, second: 0)
        for position in 0..<Self.slotCount where indices[position] > current - Int64(Self.slotCount) && indices[position] <= current {
            totals.first += first[position]
            totals.second += second[position]
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
        indices = [Int64](repeating: .min, count: Self.slotCount)
    }
}
