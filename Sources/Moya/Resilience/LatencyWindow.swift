import Foundation

/// The latencies of an origin's last responses, for a hedge's percentile delay
/// (``HedgingPolicy/Delay/percentile(_:minimum:)``). A value type, kept behind its owner's lock.
struct LatencyWindow: Sendable {
    /// How many latencies are kept.
    static let capacity = 200
    /// How many must have been seen before a percentile is given.
    static let minimumSamples = 20
    /// One admission in how many has its latency kept, once there are enough to give a
    /// percentile: the window then spans the last 800 requests.
    static let sampleEvery = 4
    /// How many new latencies make the percentile be found again: a percentile of the last 200
    /// moves little in 50 more, and finding it is most of what a hedged request's latency costs.
    static let refreshEvery = 50

    private var samples: [Double] = []
    /// How many latencies are kept.
    var count: Int { samples.count }
    private var next = 0
    /// A scratch copy of the samples, kept for its storage: the percentile is selected in it.
    private var scratch: [Double] = []
    /// The last percentile found, of which fraction, and the samples added since.
    private var found: (fraction: Double, value: Double)?
    private var sinceFound = 0

    /// Adds a latency, in seconds.
    mutating func add(_ latency: Double) {
        if samples.count < Self.capacity {
            samples.append(latency)
        } else {
            samples[next] = latency
            next = (next + 1) % Self.capacity
        }
        sinceFound += 1
    }

    /// The `fraction` percentile (0.95 for the 95th); `nil` with too few samples. Found again
    /// after every ``refreshEvery`` new samples (and as soon as there are enough), by selection (linear on average) in a scratch
    /// copy whose storage is kept: sorting 200 numbers for every request would cost more than
    /// the hedge saves.
    mutating func percentile(_ fraction: Double) -> Double? {
        guard samples.count >= Self.minimumSamples else { return nil }
        if let found, found.fraction == fraction, sinceFound < Self.refreshEvery {
            return found.value
        }
        let rank = min(samples.count - 1, max(0, Int((fraction * Double(samples.count)).rounded(.up)) - 1))
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples)
        let value = Self.select(rank, in: &scratch)
        found = (fraction, value)
        sinceFound = 0
        return value
    }

    /// The value of rank `rank` (0 the smallest) in `values`, which are reordered: Hoare's
    /// selection with the middle element as pivot.
    static func select(_ rank: Int, in values: inout [Double]) -> Double {
        var low = 0
        var high = values.count - 1
        while low < high {
            let pivot = values[low + (high - low) / 2]
            var left = low
            var right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            // [low, right] ≤ pivot ≤ [left, high]; between them, the pivot's equals.
            if rank <= right {
                high = right
            } else if rank >= left {
                low = left
            } else {
                return values[rank]
            }
        }
        return values[rank]
    }
}
