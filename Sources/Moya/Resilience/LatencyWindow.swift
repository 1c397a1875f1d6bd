import Foundation

/// The latencies of an origin's last responses, for a hedge's percentile delay
/// (``HedgingPolicy/Delay/percentile(_:minimum:)``). A value type, kept behind its owner's lock.
struct LatencyWindow: Sendable {
    /// How many latencies are kept.
    static let capacity = 200
    /// How many must have been seen before a percentile is given.
    static let minimumSamples = 20

    private var samples: [Double] = []
    private var next = 0
    /// The samples in order, made again after every 20 new ones (sorting 200 numbers for every
    /// request would cost more than the hedge saves).
    private var sorted: [Double] = []
    private var sinceSorted = 0

    /// Adds a latency, in seconds.
    mutating func add(_ latency: Double) {
        if samples.count < Self.capacity {
            samples.append(latency)
        } else {
            samples[next] = latency
            next = (next + 1) % Self.capacity
        }
        sinceSorted += 1
    }

    /// The `fraction` percentile (0.95 for the 95th); `nil` with too few samples.
    mutating func percentile(_ fraction: Double) -> Double? {
        guard samples.count >= Self.minimumSamples else { return nil }
        if sorted.isEmpty || sinceSorted >= 20 {
            sorted = samples.sorted()
            sinceSorted = 0
        }
        let index = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
        return sorted[index]
    }
}
