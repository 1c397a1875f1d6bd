import Foundation
import Logging
import Moya
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// The channel changes are announced on unless told: `moya_http_cache`.
    public static let defaultNotificationChannel = "moya_http_cache"

    /// The longest payload sent: PostgreSQL takes less than 8000 bytes. A key whose payload
    /// would be longer is announced as a change of the whole namespace.
    static let largestPayload = 7_900

    /// The most keys one transaction announces one by one; more are announced as a change of
    /// the whole namespace.
    static let mostKeysAnnounced = 1_000

    /// The most changes a feed holds for a consumer that reads slower than they come; beyond it
    /// the feed drops them and tells the consumer to drop everything (an interruption, then
    /// coherent again).
    static let feedBuffer = 1_024

    /// The longest wait before listening again after the listening connection was lost.
    static let longestRelistenDelay: TimeInterval = 5

    /// Whether `channel` is a name the storage listens and notifies on: letters, digits and
    /// underscores, not starting with a digit, 63 bytes at most (PostgreSQL's identifiers).
    static func isValidChannel(_ channel: String) -> Bool {
        guard let first = channel.utf8.first, channel.utf8.count <= 63, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return channel.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    // MARK: - Payloads

    /// The payload that announces a change of `key` in `namespace`: `<bytes of the namespace>:`,
    /// the namespace, `|` and the key; a change of the whole namespace when that is too long.
    static func notificationPayload(namespace: String, key: String) -> String {
        let payload = "\(namespace.utf8.count):\(namespace)|\(key)"
        return payload.utf8.count <= largestPayload ? payload : namespaceWidePayload(namespace)
    }

    /// The payload that announces a change of every record of `namespace`: `<bytes>:`, the
    /// namespace and `*`; `*` alone (every namespace) when the namespace is too long itself.
    static func namespaceWidePayload(_ namespace: String) -> String {
        let payload = "\(namespace.utf8.count):\(namespace)*"
        return payload.utf8.count <= largestPayload ? payload : "*"
    }

    /// What `payload` announces to a storage of `namespace`: `nil` for another namespace's
    /// change, or a payload this storage does not know (ignored).
    static func change(from payload: String, namespace: String) -> HTTPCacheStorageChange? {
        if payload == "*" { return .changedAll }
        let bytes = Array(payload.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon <= 10,
            let length = Int(String(decoding: bytes[..<colon], as: UTF8.self)), length >= 0,
            bytes.count > colon + length + 1
        else { return nil }
        let name = bytes[(colon + 1)..<(colon + 1 + length)]
        guard name.elementsEqual(namespace.utf8) else { return nil }
        let marker = bytes[colon + 1 + length]
        let rest = bytes[(colon + 2 + length)...]
        switch marker {
        case UInt8(ascii: "*") where rest.isEmpty:
            return .changedAll
        case UInt8(ascii: "|"):
            return .changed(key: String(decoding: rest, as: UTF8.self))
        default:
            return nil
        }
    }

    // MARK: - Announcing changes

    /// Announces a change of each of `keys` in `namespace` on `channel`, within the transaction
    /// of `connection` (delivered when it commits); a change of the whole namespace when there
    /// are too many.
    static func notify(
        _ keys: some Collection<String>, in namespace: String, on channel: String, connection: PostgresConnection
    ) async throws {
        guard !keys.isEmpty, isValidChannel(channel) else { return }
        guard keys.count <= mostKeysAnnounced else {
            try await notifyAll(in: namespace, on: channel, connection: connection)
            return
        }
        let payloads = Array(Set(keys.map { notificationPayload(namespace: namespace, key: $0) }))
        try await connection.query(
            "SELECT pg_notify(\(channel), payload) FROM unnest(\(payloads)::text[]) AS payload", logger: connection.logger)
    }

    /// Announces a change of every record of `namespace` on `channel`, within the transaction of
    /// `connection`.
    static func notifyAll(in namespace: String, on channel: String, connection: PostgresConnection) async throws {
        guard isValidChannel(channel) else { return }
        try await connection.query("SELECT pg_notify(\(channel), \(namespaceWidePayload(namespace)))", logger: connection.logger)
    }

    /// Announces a change of the keys whose records the sweep is about to delete as expired
    /// (the transaction holds the namespace's lock, so the sweep deletes the same records).
    static func notifyExpiring(in namespace: String, on channel: String, connection: PostgresConnection) async throws {
        guard isValidChannel(channel) else { return }
        var keys: [String] = []
        let rows = try await connection.query(
            """
            SELECT DISTINCT key FROM moya_http_cache_records WHERE namespace = \(namespace) AND expires_at <= now()
            LIMIT \(mostKeysAnnounced + 1)
            """, logger: connection.logger)
        for try await key in rows.decode(String.self) {
            keys.append(key)
        }
        try await notify(keys, in: namespace, on: channel, connection: connection)
    }

    // MARK: - The change feed

    /// A feed of the changes to this namespace's records made by any process that shares the
    /// storage, for a near cache (``HTTPCache/NearCache``).
    ///
    /// The feed leases one connection of the client's pool for as long as it is read, and
    /// `LISTEN`s on ``Configuration-swift.struct/notificationChannel``: it yields
    /// ``HTTPCacheStorageChange/coherent`` once the server acknowledged the `LISTEN`, then a
    /// change per key announced in this namespace. When the connection is lost (the server
    /// restarted, the backend was terminated, the network failed), it yields
    /// ``HTTPCacheStorageChange/interrupted`` and listens again after a back-off of 0.1 s,
    /// doubling up to 5 s, then ``HTTPCacheStorageChange/coherent`` again. A consumer that reads
    /// slower than changes come is told to drop everything rather than left to miss one.
    ///
    /// The feed ends when its consumer stops reading it, or at ``shutdown()``. `nil` when the
    /// storage is shut down, when the channel's name is not one it can listen on, or when the
    /// storage was made with ``Configuration-swift.struct/maximumConnections`` of 1 (the feed
    /// would hold the only connection, and every other call would wait for it).
    ///
    /// A connection that dies without the client noticing (no reset from the network) loses
    /// notifications silently until TCP gives up: the near cache's
    /// ``HTTPCache/NearCache/maximumAge`` bounds how stale an entry gets then.
    public func changes() -> AsyncStream<HTTPCacheStorageChange>? {
        guard Self.isValidChannel(notificationChannel) else {
            logger.error(
                "The HTTP cache's PostgreSQL storage has no change feed: its notification channel is not a name it can listen on",
                metadata: ["channel": "\(notificationChannel)"])
            return nil
        }
        if let maximum = maximumConnections, maximum < 2 {
            logger.error(
                "The HTTP cache's PostgreSQL storage has no change feed: it may open one connection only, which the feed would hold for good (set maximumConnections to 2 or more)",
                metadata: ["maximumConnections": "\(maximum)"])
            return nil
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: HTTPCacheStorageChange.self, bufferingPolicy: .bufferingNewest(Self.feedBuffer))
        let id = UUID()
        let feed = Feed(continuation: continuation)
        let client = client
        let namespace = namespace
        let channel = notificationChannel
        let logger = logger
        let shared = state
        let accepted = shared.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            state.listeners[id] = _Concurrency.Task.detached {
                await Self.listen(client: client, channel: channel, namespace: namespace, feed: feed, logger: logger)
                continuation.finish()
                _ = shared.withLock { $0.listeners.removeValue(forKey: id) }
            }
            return true
        }
        guard accepted else {
            continuation.finish()
            return nil
        }
        continuation.onTermination = { _ in
            let listener = shared.withLock { $0.listeners[id] }
            listener?.cancel()
        }
        return stream
    }

    /// Listens on `channel` until the task is cancelled, again after each lost connection.
    private static func listen(client: PostgresClient, channel: String, namespace: String, feed: Feed, logger: Logger) async {
        var delay: TimeInterval = 0.1
        while !_Concurrency.Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        feed.send(.coherent)
                        delay = 0.1
                        for try await notification in notifications {
                            if let change = change(from: notification.payload, namespace: namespace) {
                                feed.send(change)
                            }
                        }
                    }
                }
            } catch {
                if !_Concurrency.Task.isCancelled {
                    logger.warning(
                        "The HTTP cache's PostgreSQL change feed lost its connection; the near cache is off until it listens again",
                        metadata: ["error": "\(describe(error).message)"])
                }
            }
            feed.send(.interrupted)
            guard !_Concurrency.Task.isCancelled else { return }
            let jittered = delay * Double.random(in: 0.8...1.2)
            do {
                try await _Concurrency.Task.sleep(nanoseconds: UInt64(jittered * 1_000_000_000))
            } catch {
                return
            }
            delay = min(delay * 2, longestRelistenDelay)
        }
    }

    /// The consumer's end of a feed, which keeps it coherent when its buffer overflows.
    private struct Feed: Sendable {
        let continuation: AsyncStream<HTTPCacheStorageChange>.Continuation

        /// Yields `change`; when the buffer dropped an older change, tells the consumer to drop
        /// everything (an interruption), and that the feed is coherent again unless `change`
        /// said otherwise.
        func send(_ change: HTTPCacheStorageChange) {
            guard case .dropped = continuation.yield(change) else { return }
            continuation.yield(.interrupted)
            if change != .interrupted {
                continuation.yield(.coherent)
            }
        }
    }

    /// Forgets the bodies of `ids` that came with their records.
    func forgetInlineBodies(_ ids: [UUID]) {
        guard !ids.isEmpty else { return }
        state.withLock { $0.inlineBodies.remove(ids) }
    }
}
