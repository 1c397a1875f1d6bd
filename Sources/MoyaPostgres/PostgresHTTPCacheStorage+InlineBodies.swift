import Foundation
import Moya

extension PostgresHTTPCacheStorage {
    /// The small bodies that ``PostgresHTTPCacheStorage/records(forKey:)`` read with their
    /// records, kept a few seconds for the ``PostgresHTTPCacheStorage/openBody(of:)`` that
    /// follows, so that a hit costs one round trip. Bounded in bytes and in time; a record's body
    /// never changes (a new response is a new record), so a kept body is the record's body for as
    /// long as it is kept.
    struct InlineBodies: Sendable {
        /// The largest body read with its record.
        static let largestBody = 64 << 10
        /// The most bytes kept.
        static let capacity = 4 << 20
        /// How long a body is kept after its record was read.
        static let lifetime: TimeInterval = 2

        private struct Body: Sendable {
            let data: Data
            let key: String
            let keptAt: Date
            /// Its place in `order`, counted from the first body ever kept.
            let serial: Int
        }

        private var bodies: [UUID: Body] = [:]
        /// The identities in the order they were kept, the oldest first, each with its serial
        /// (an identity kept again, or forgotten, leaves an entry that no longer matches).
        private var order: [(id: UUID, serial: Int)] = []
        private var start = 0
        private var serials = 0
        private var bytes = 0

        /// Keeps `data`, the body of the record `id` of `key`, read at `now`.
        mutating func keep(_ data: Data, for id: UUID, key: String, at now: Date) {
            guard data.count <= Self.largestBody else { return }
            if let old = bodies.removeValue(forKey: id) { bytes -= old.data.count }
            serials += 1
            bodies[id] = Body(data: data, key: key, keptAt: now, serial: serials)
            bytes += data.count
            order.append((id, serials))
            trim(now: now)
        }

        /// The body of the record `id`, if it was kept less than ``lifetime`` before `now`.
        mutating func body(of id: UUID, at now: Date) -> Data? {
            guard let body = bodies[id] else { return nil }
            guard now.timeIntervalSince(body.keptAt) < Self.lifetime else {
                remove([id])
                return nil
            }
            return body.data
        }

        /// Forgets the bodies of `ids`.
        mutating func remove(_ ids: [UUID]) {
            for id in ids {
                if let old = bodies.removeValue(forKey: id) { bytes -= old.data.count }
            }
        }

        /// Forgets the bodies of `key`'s records.
        mutating func remove(key: String) {
            remove(bodies.filter { $0.value.key == key }.map(\.key))
        }

        /// Forgets the oldest bodies while there are too many bytes or they are too old, and
        /// compacts the order.
        private mutating func trim(now: Date) {
            while start < order.count {
                let (id, serial) = order[start]
                guard let body = bodies[id], body.serial == serial else {
                    start += 1
                    continue
                }
                guard bytes > Self.capacity || now.timeIntervalSince(body.keptAt) >= Self.lifetime else { break }
                bodies[id] = nil
                bytes -= body.data.count
                start += 1
            }
            if start > 1_024, start * 2 > order.count {
                order.removeFirst(start)
                start = 0
            }
        }
    }

    /// Hands out a body read with its record, in one chunk.
    final class InlineBodyReader: HTTPCacheBodyReader {
        private let remaining: Locked<Data?>

        init(_ data: Data) {
            remaining = Locked(data.isEmpty ? nil : data)
        }

        func next() async throws -> Data? {
            remaining.withLock { remaining in
                defer { remaining = nil }
                return remaining
            }
        }

        func close() async {
            remaining.withLock { $0 = nil }
        }
    }
}
