/// Values by key with a cost each, bounded in total cost, least recently used first out.
///
/// A doubly linked list threaded through the dictionary by key: every operation is O(1) but
/// eviction, which is O(1) per evicted value.
struct CacheLRU<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Node: Sendable {
        var value: Value
        var cost: Int
        var older: Key?
        var newer: Key?
    }

    /// The most the costs of the values may add up to.
    let capacity: Int
    /// What the costs of the values add up to.
    private(set) var totalCost = 0
    private var nodes: [Key: Node] = [:]
    private var oldest: Key?
    private var newest: Key?

    /// An empty list that holds at most `capacity` of cost.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many values there are.
    var count: Int { nodes.count }

    /// The keys, least recently used first.
    var keysOldestFirst: [Key] {
        var keys: [Key] = []
        var cursor = oldest
        while let key = cursor {
            keys.append(key)
            cursor = nodes[key]?.newer
        }
        return keys
    }

    /// The value for `key`, without changing its recency.
    func peek(_ key: Key) -> Value? { nodes[key]?.value }

    /// The value for `key`, now the most recently used.
    mutating func touch(_ key: Key) -> Value? {
        guard let node = nodes[key] else { return nil }
        unlink(key, node)
        link(key, node)
        return node.value
    }

    /// Stores `value` as the most recently used, replacing any value for `key`, and evicts the
    /// least recently used values until the total fits. Returns what was replaced and what was
    /// evicted. A value costing more than the capacity is not stored (and what it replaces is
    /// removed all the same).
    mutating func insert(_ key: Key, _ value: Value, cost: Int) -> (replaced: Value?, evicted: [(key: Key, value: Value)]) {
        let replaced = remove(key)
        guard cost <= capacity else { return (replaced, []) }
        link(key, Node(value: value, cost: cost, older: nil, newer: nil))
        totalCost += cost
        var evicted: [(key: Key, value: Value)] = []
        while totalCost > capacity, let victim = oldest, victim != key, let value = remove(victim) {
            evicted.append((victim, value))
        }
        return (replaced, evicted)
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard let node = nodes[key] else { return nil }
        unlink(key, node)
        nodes[key] = nil
        totalCost -= node.cost
        return node.value
    }

    /// Removes every value and returns them with their keys.
    mutating func removeAll() -> [(key: Key, value: Value)] {
        let all = nodes.map { (key: $0.key, value: $0.value.value) }
        nodes = [:]
        oldest = nil
        newest = nil
        totalCost = 0
        return all
    }

    /// Takes `node` out of the list (it stays in `nodes`).
    private mutating func unlink(_ key: Key, _ node: Node) {
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
    }

    /// Puts `node` at the newest end.
    private mutating func link(_ key: Key, _ node: Node) {
        var node = node
        node.older = newest
        node.newer = nil
        if let newest { nodes[newest]?.newer = key } else { oldest = key }
        newest = key
        nodes[key] = node
    }
}
