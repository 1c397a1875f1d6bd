import Foundation
import Logging

/// The cookies of a jar on a ``CookieJarStorage``: a copy in memory that requests read and write
/// at once, kept in step with the storage in the background.
///
/// Each change (a cookie stored, replaced or removed, or every cookie removed) is written to the
/// storage by one task at a time, in order; a write that fails is tried again a second later,
/// unless a newer change to the same cookie came meanwhile. The copy reads the storage again,
/// in the background, when a request finds it older than the refresh interval: cookies that
/// another process stored replace the copy's, and cookies it removed go, except those with a
/// change of this process's still on its way to the storage.
final class CookieReplica: Sendable {
    private struct State: Sendable {
        var store = MemoryCookieStore()
        /// Changes not yet written: the cookie to store, or `nil` to remove it.
        var pending: [StoredCookie.Key: StoredCookie?] = [:]
        /// Whether every cookie is to be removed from the storage before `pending` is written.
        var removeAllPending = false
        /// Whether a task is writing.
        var isFlushing = false
        /// Incremented after each write that reached the storage: a read that overlapped one is
        /// dropped, since it may predate it.
        var writes = 0
        var lastRead: Date?
        var isReading = false
        /// Who waits for the next read to end (``synchronize()``).
        var readWaiters: [CheckedContinuation<Void, Never>] = []
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let storage: any CookieJarStorage
    private let refreshInterval: TimeInterval
    private let state = Protected(State())
    private static let logger = Logger(label: "org.moya.session")

    /// A copy of `storage`'s cookies, read again after `refreshInterval` seconds; the first read
    /// starts at once.
    init(storage: any CookieJarStorage, refreshInterval: TimeInterval) {
        self.storage = storage
        self.refreshInterval = max(0, refreshInterval)
        startReadIfDue(force: true)
    }

    // MARK: - The copy, under the jar's lock

    /// Runs `body` on the copy, reading the storage again first (in the background) when the
    /// copy is older than the refresh interval.
    func read<Result>(_ body: (MemoryCookieStore) -> Result) -> Result {
        startReadIfDue(force: false)
        return state.withLock { body($0.store) }
    }

    /// Changes the copy with `body`, which returns the changes to write to the storage.
    func change(_ body: (inout MemoryCookieStore) -> [StoredCookie.Key: StoredCookie?]) {
        state.withLock { state in
            for (key, cookie) in body(&state.store) { state.pending.updateValue(cookie, forKey: key) }
        }
        startFlush()
    }

    /// Removes every cookie from the copy, and from the storage.
    func removeAll() {
        state.withLock { state in
            state.store.removeAll()
            state.pending = [:]
            state.removeAllPending = true
        }
        startFlush()
    }

    /// Records that cookies were sent (in the copy only: the storage keeps when cookies were
    /// stored, not when each process last sent them).
    func touch(_ keys: [StoredCookie.Key], inGroup group: String, at date: Date) {
        state.withLock { $0.store.touch(keys, inGroup: group, at: date) }
    }

    /// A number for a cookie about to be stored for the first time.
    func nextSequenceNumber() -> UInt64 {
        state.withLock { $0.store.nextSequenceNumber() }
    }

    // MARK: - Keeping in step

    /// Writes what changed, then reads the storage, and returns when both are done (or failed).
    func synchronize() async {
        await withCheckedContinuation { continuation in
            let flushing = state.withLock { state -> Bool in
                guard state.isFlushing || !state.pending.isEmpty || state.removeAllPending else { return false }
                state.flushWaiters.append(continuation)
                return true
            }
            if flushing {
                startFlush()
            } else {
                continuation.resume()
            }
        }
        await withCheckedContinuation { continuation in
            state.withLock { $0.readWaiters.append(continuation) }
            startReadIfDue(force: true)
        }
    }

    private func startFlush() {
        let start = state.withLock { state -> Bool in
            guard !state.isFlushing else { return false }
            state.isFlushing = true
            return true
        }
        guard start else { return }
        _Concurrency.Task { await flush() }
    }

    /// Writes the pending changes until there are none; after a failure, starts again a second
    /// later.
    private func flush() async {
        while true {
            let (changes, removeAll) = state.withLock { state -> ([StoredCookie.Key: StoredCookie?], Bool) in
                defer {
                    state.pending = [:]
                    state.removeAllPending = false
                }
                return (state.pending, state.removeAllPending)
            }
            if changes.isEmpty && !removeAll {
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.isFlushing = false
                    defer { state.flushWaiters = [] }
                    return state.flushWaiters
                }
                for waiter in waiters { waiter.resume() }
                return
            }
            var stored: [CookieJarRecord] = []
            var removed: [String] = []
            for (key, cookie) in changes {
                if let cookie, let record = Self.record(of: cookie) {
                    stored.append(record)
                } else {
                    removed.append(Self.recordKey(key))
                }
            }
            do {
                try await storage.saveCookies(stored, removing: removed, removeAll: removeAll)
                state.withLock { $0.writes += 1 }
            } catch {
                Self.logger.warning(
                    "The cookie jar's shared storage failed; its cookies are kept in memory and written again",
                    metadata: ["moya.error": "\(error)"])
                // Put back what no newer change replaced, and try again a second later.
                state.withLock { state in
                    for (key, cookie) in changes where state.pending.index(forKey: key) == nil { state.pending.updateValue(cookie, forKey: key) }
                    if removeAll { state.removeAllPending = true }
                }
                let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.isFlushing = false
                    defer { state.flushWaiters = [] }
                    return state.flushWaiters
                }
                for waiter in waiters { waiter.resume() }
                // Tried again a second later, as long as the jar is still there.
                _Concurrency.Task { [weak self] in
                    try? await _Concurrency.Task.sleep(nanoseconds: 1_000_000_000)
                    self?.startFlush()
                }
                return
            }
        }
    }

    private func startReadIfDue(force: Bool) {
        let now = Date()
        let start = state.withLock { state -> Bool in
            guard !state.isReading else { return false }
            if !force, let last = state.lastRead, now.timeIntervalSince(last) < refreshInterval { return false }
            state.isReading = true
            return true
        }
        guard start else { return }
        _Concurrency.Task { await readStorage() }
    }

    /// Reads the storage and brings the copy in step with it.
    private func readStorage() async {
        let (writesBefore, wasFlushing) = state.withLock { ($0.writes, $0.isFlushing) }
        var remote: [StoredCookie.Key: StoredCookie]?
        do {
            var cookies: [StoredCookie.Key: StoredCookie] = [:]
            for record in try await storage.loadCookies() {
                guard let cookie = Self.cookie(of: record) else { continue }
                cookies[cookie.key] = cookie
            }
            remote = cookies
        } catch {
            Self.logger.warning(
                "The cookie jar's shared storage could not be read; the cookies in memory are used", metadata: ["moya.error": "\(error)"])
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer {
                state.isReading = false
                state.lastRead = Date()
                state.readWaiters = []
            }
            // A read that overlapped a write may predate it: it is dropped, and the next request
            // reads again.
            guard let remote, !wasFlushing, state.writes == writesBefore, !state.removeAllPending else {
                if remote != nil { state.lastRead = nil }
                return state.readWaiters
            }
            let now = Date()
            for local in state.store.allCookies() where remote[local.key] == nil && state.pending.index(forKey: local.key) == nil {
                state.store.remove(local.key)
            }
            for (key, cookie) in remote where state.pending.index(forKey: key) == nil && !cookie.isExpired(at: now) {
                var merged = cookie
                if let local = state.store.cookie(for: key) { merged.lastAccess = max(local.lastAccess, cookie.lastAccess) }
                state.store.insert(merged)
            }
            return state.readWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Records

    /// The record's key of the cookie with `key`.
    static func recordKey(_ key: StoredCookie.Key) -> String {
        "\(key.domain)\u{1F}\(key.path)\u{1F}\(key.name)"
    }

    /// The cookie as the jar encodes it, as JSON.
    private struct Encoded: Codable {
        var name, value, domain, path: String
        var hostOnly, secure, httpOnly: Bool
        var sameSite: String?
        var expires: Date?
        var created, lastAccess: Date
        var sequence: UInt64
    }

    /// The record of `cookie`.
    static func record(of cookie: StoredCookie) -> CookieJarRecord? {
        let encoded = Encoded(
            name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path, hostOnly: cookie.hostOnly, secure: cookie.secure,
            httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, expires: cookie.expires, created: cookie.created, lastAccess: cookie.lastAccess,
            sequence: cookie.sequence)
        guard let data = try? JSONEncoder().encode(encoded) else { return nil }
        return CookieJarRecord(key: recordKey(cookie.key), data: data, expiresAt: cookie.expires)
    }

    /// The cookie `record` holds, or `nil` when it is not one of the jar's records.
    static func cookie(of record: CookieJarRecord) -> StoredCookie? {
        guard let encoded = try? JSONDecoder().decode(Encoded.self, from: record.data),
            StoredCookie.isSafe(encoded.name, allowingEquals: false), StoredCookie.isSafe(encoded.value, allowingEquals: true),
            !encoded.domain.isEmpty, encoded.path.hasPrefix("/")
        else { return nil }
        var cookie = StoredCookie(
            name: encoded.name, value: encoded.value, domain: encoded.domain, path: encoded.path, hostOnly: encoded.hostOnly, secure: encoded.secure,
            httpOnly: encoded.httpOnly, sameSite: encoded.sameSite, expires: encoded.expires, created: encoded.created, lastAccess: encoded.lastAccess)
        cookie.sequence = encoded.sequence
        guard recordKey(cookie.key) == record.key else { return nil }
        return cookie
    }
}

/// A ``CookieStore`` on a ``CookieReplica``: the jar's lock orders its calls, the replica's own
/// lock orders them with the replica's background reads and writes.
struct ReplicatedCookieStore: CookieStore {
    /// The replica.
    let replica: CookieReplica

    var count: Int { replica.read { $0.count } }
    func allCookies() -> [StoredCookie] { replica.read { $0.allCookies() } }
    func cookies(inGroup group: String) -> [StoredCookie] { replica.read { $0.cookies(inGroup: group) } }
    func cookie(for key: StoredCookie.Key) -> StoredCookie? { replica.read { $0.cookie(for: key) } }

    mutating func insert(_ cookie: StoredCookie) {
        replica.change { store in
            store.insert(cookie)
            return [cookie.key: cookie]
        }
    }

    mutating func remove(_ key: StoredCookie.Key) {
        replica.change { store in
            store.remove(key)
            return [key: StoredCookie?.none]
        }
    }

    mutating func removeAll() {
        replica.removeAll()
    }

    mutating func touch(_ keys: [StoredCookie.Key], inGroup group: String, at date: Date) {
        replica.touch(keys, inGroup: group, at: date)
    }

    mutating func nextSequenceNumber() -> UInt64 {
        replica.nextSequenceNumber()
    }
}
