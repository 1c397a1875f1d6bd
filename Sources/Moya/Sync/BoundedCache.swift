/// A dictionary that keeps at most ``capacity`` entries, forgetting the oldest first, behind one
/// lock: for values that are costly to work out again and cheap to keep, such as what a URL
/// parses into.
///
/// "Oldest" is the order entries were added in, not used in: a look-up takes the lock once and
/// changes nothing, which keeps it cheap on a request's path.
final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The most entries kept.
    let capacity: Int

    private struct State {
        var values: [Key: Value] = [:]
        /// The keys kept, oldest first.
        var order: [Key] = []
    }

    private let state = Protected(State())

    /// - Parameter capacity: The most entries kept (at least one).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value kept for `key`, if any.
    func value(for key: Key) -> Value? {
        state.withLock { $0.values[key] }
    }

    /// Keeps `value` for `key`, unless a value is kept for it already (two callers that worked it
    /// out at once keep the first), and forgets the oldest entry when there are more than
    /// ``capacity``.
    func keep(_ value: Value, for key: Key) {
        state.withLock { state in
            guard state.values[key] == nil else { return }
            state.values[key] = value
            state.order.append(key)
            if state.order.count > capacity {
                state.values.removeValue(forKey: state.order.removeFirst())
            }
        }
    }

    /// How many entries are kept.
    var count: Int {
        state.withLock { $0.values.count }
    }
}
