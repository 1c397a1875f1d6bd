extension RequestSubscriber {
    /// The callers of one request, in the order they came. Most requests have one, which is kept
    /// without an array (one allocation less per request).
    struct List: Sequence, Sendable {
        private var first: RequestSubscriber?
        private var others: [RequestSubscriber] = []

        /// An empty list.
        init() {}

        /// Whether no caller waits.
        var isEmpty: Bool { first == nil && others.isEmpty }

        /// Whether exactly one caller waits.
        var hasOne: Bool { first != nil && others.isEmpty }

        /// Whether the caller `id` is here.
        func contains(id: Int) -> Bool {
            first?.id == id || others.contains { $0.id == id }
        }

        /// Adds a caller at the end.
        mutating func append(_ subscriber: RequestSubscriber) {
            if isEmpty { first = subscriber } else { others.append(subscriber) }
        }

        /// Removes and returns the caller `id`, if it is here.
        mutating func remove(id: Int) -> RequestSubscriber? {
            if let first, first.id == id {
                self.first = others.isEmpty ? nil : others.removeFirst()
                return first
            }
            guard let index = others.firstIndex(where: { $0.id == id }) else { return nil }
            return others.remove(at: index)
        }

        /// Iterates over the callers in order.
        struct Iterator: IteratorProtocol {
            fileprivate var first: RequestSubscriber?
            fileprivate var others: IndexingIterator<[RequestSubscriber]>

            /// The next caller.
            mutating func next() -> RequestSubscriber? {
                if let first {
                    self.first = nil
                    return first
                }
                return others.next()
            }
        }

        /// An iterator over the callers.
        func makeIterator() -> Iterator {
            Iterator(first: first, others: others.makeIterator())
        }
    }
}
