import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A private HTTP cache (RFC 9111) for a session's requests, in memory and optionally on disk,
/// that answers the way `URLSession` does under `.useProtocolCachePolicy` and the other
/// `URLRequest.CachePolicy` values.
///
/// Only responses to `GET` are stored, one per URL (without its fragment): a newer response
/// replaces the older whatever its `Vary` values. Memory and disk are each bounded in bytes and
/// give up their least recently used entries first; an entry larger than a capacity is not kept
/// there. On disk, each entry is a file named by the SHA-256 of its URL, with a checksum, written
/// to a temporary file and renamed into place: a process stopped mid-write leaves no torn entry
/// under a real name, and a file damaged anyway is found, deleted and treated as absent.
///
/// All methods are safe to call from any thread at once. Disk reads and writes happen on the
/// caller's thread, outside the cache's lock.
public final class HTTPCache: Sendable {
    /// The most header bytes a stored response may have; a response with more is not stored.
    static let maximumHeaderBytes = 64 * 1024

    /// The memory store and the disk index, behind the cache's one lock.
    private struct State: Sendable {
        var memory: CacheMemoryStore
        var disk: CacheDiskStore.Index?
        var nextGeneration: UInt64
    }

    /// The most bytes the cache keeps in memory.
    public let memoryCapacity: Int
    /// The most bytes the cache keeps on disk; 0 without a directory.
    public let diskCapacity: Int
    /// The directory of the disk cache, or `nil` for a memory-only cache.
    public let directory: URL?

    private let diskStore: CacheDiskStore?
    private let state: Protected<State>

    /// Makes a cache of at most `memoryCapacity` bytes in memory and, when `directory` is not
    /// `nil`, `diskCapacity` bytes in that directory (created, mode 0700, if it is missing).
    ///
    /// Opening a directory that holds a cache indexes its entries (most recently used by their
    /// modification time), deletes files left half-written or torn, and evicts down to
    /// `diskCapacity`.
    public init(memoryCapacity: Int = 10 * 1024 * 1024, diskCapacity: Int = 0, directory: URL? = nil) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.directory = directory
        self.diskCapacity = directory == nil ? 0 : max(0, diskCapacity)
        var disk: CacheDiskStore.Index?
        var generation: UInt64 = 1
        if let directory {
            let store = CacheDiskStore(directory: directory)
            (disk, generation) = store.makeIndex(capacity: self.diskCapacity)
            diskStore = store
        } else {
            diskStore = nil
        }
        state = Protected(State(memory: CacheMemoryStore(capacity: self.memoryCapacity), disk: disk, nextGeneration: generation))
    }

    /// The bytes the entries in memory take.
    public var currentMemoryUsage: Int { state.withLock { $0.memory.usage } }

    /// The bytes the entry files take.
    public var currentDiskUsage: Int { state.withLock { $0.disk?.totalCost ?? 0 } }

    /// Removes every stored response, from memory and disk.
    public func removeAll() {
        state.withLock { state in
            state.memory.removeAll()
            if let removed = state.disk?.removeAll() {
                for file in removed { diskStore?.delete(file.key) }
            }
        }
    }

    /// Removes the stored response for `url` (its fragment ignored).
    public func removeResponse(for url: URL) {
        remove(key: Self.key(for: url))
    }

    // MARK: - The transport's side

    /// What to do with a request before it is sent: answer from storage, validate, send, or
    /// fail because the network is not allowed (RFC 9111 §4, under `policy`).
    ///
    /// Only `GET` is answered from storage; another method goes to the network (or is
    /// `.unavailable` under `.returnCacheDataDontLoad`). A request that is already conditional
    /// or asks for a range goes to the network as it is under `.useProtocolCachePolicy` and
    /// `.reloadRevalidatingCacheData`.
    func decision(
        method: String, url: URL, requestHeaders: [(name: String, value: String)], policy: URLRequest.CachePolicy, now: Date = Date()
    ) -> CacheDecision {
        guard method.uppercased() == "GET" else {
            return policy == .returnCacheDataDontLoad ? .unavailable : .network
        }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .network
        case .returnCacheDataElseLoad:
            return storedResponse(for: url, requestHeaders: requestHeaders).map { .useStored($0) } ?? .network
        case .returnCacheDataDontLoad:
            return storedResponse(for: url, requestHeaders: requestHeaders).map { .useStored($0) } ?? .unavailable
        case .reloadRevalidatingCacheData:
            guard !Self.isConditionalOrRanged(requestHeaders), let entry = storedResponse(for: url, requestHeaders: requestHeaders),
                entry.hasValidator
            else { return .network }
            return .validate(entry, conditionalHeaders: entry.conditionalHeaders)
        case .useProtocolCachePolicy:
            return protocolDecision(url: url, requestHeaders: requestHeaders, now: now)
        @unknown default:
            return .network
        }
    }

    /// Handles a response from the network (anything but a 304 to a validation): stores it when
    /// RFC 9111 §3 allows, and after an unsafe method's success invalidates what it changed
    /// (RFC 9111 §4.4).
    ///
    /// A response to `GET` that may not be stored (other than a 206 or a 5xx) removes the
    /// response stored for the URL: it is newer, and the stored one must not be served instead.
    func responseReceived(
        method: String, url: URL, requestHeaders: [(name: String, value: String)], status: Int,
        responseHeaders: [(name: String, value: String)], body: Data, requestTime: Date, responseTime: Date
    ) {
        let method = method.uppercased()
        let key = Self.key(for: url)
        guard method == "GET" else {
            if !Self.safeMethods.contains(method), (200..<400).contains(status) {
                invalidate(url: url, key: key, responseHeaders: responseHeaders)
            }
            return
        }
        guard Self.isStorable(status: status, requestHeaders: requestHeaders, responseHeaders: responseHeaders, bodyCount: body.count) else {
            if status != 206, status < 500, status >= 200 { remove(key: key) }
            return
        }
        let entry = CachedResponse(
            key: key, url: url, status: status, headers: responseHeaders, body: body, requestTime: requestTime, responseTime: responseTime,
            varyValues: Self.varyValues(responseHeaders: responseHeaders, requestHeaders: requestHeaders))
        store(entry)
    }

    /// Handles a 304 to a validation of `entry`: the stored response takes the 304's header
    /// fields, except those it cannot take (RFC 9111 §3.2: `Content-Length`, the content coding,
    /// connection-specific fields), and the new request and response times; the update is stored
    /// and returned, to answer the request with. Without an `Age` in the 304, the old `Age` is
    /// dropped: the origin just vouched for the response.
    ///
    /// A 304 whose strong `ETag` differs from the entry's does not describe it (RFC 9111
    /// §4.3.4): the stored response is removed and `entry` is returned as it is.
    func notModifiedReceived(
        _ entry: CachedResponse, url: URL, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)],
        requestTime: Date, responseTime: Date
    ) -> CachedResponse {
        if let newTag = CacheHeaderFields.first("ETag", in: responseHeaders), !newTag.hasPrefix("W/"), newTag != entry.entityTag {
            remove(key: entry.key)
            return entry
        }
        let replacing = Set(
            responseHeaders.map { $0.name.lowercased() }.filter { !CacheHeaderFields.keptOnUpdate.contains($0) }
        ).union(["age"])
        var headers = entry.storedHeaders.filter { !replacing.contains($0.name.lowercased()) }
        headers += responseHeaders.filter { !CacheHeaderFields.keptOnUpdate.contains($0.name.lowercased()) }
        let updated = CachedResponse(
            key: entry.key, url: entry.url, status: entry.status, headers: headers, body: entry.body, requestTime: requestTime,
            responseTime: responseTime, varyValues: Self.varyValues(responseHeaders: headers, requestHeaders: requestHeaders))
        if Self.isStorable(status: updated.status, requestHeaders: requestHeaders, responseHeaders: headers, bodyCount: entry.body.count) {
            store(updated)
        } else {
            remove(key: entry.key)
        }
        return updated
    }

    // MARK: - Decisions

    /// Methods that change nothing on the server (RFC 9110 §9.2.1).
    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// `.useProtocolCachePolicy`: RFC 9111 §4 with the request's directives.
    private func protocolDecision(url: URL, requestHeaders: [(name: String, value: String)], now: Date) -> CacheDecision {
        var request = CacheControl(headers: requestHeaders)
        if request.isEmpty, CacheHeaderFields.listMembers("Pragma", in: requestHeaders).contains(where: { $0.lowercased() == "no-cache" }) {
            request = CacheControl(["no-cache"])
        }
        let fallback: CacheDecision = request.onlyIfCached ? .unavailable : .network
        guard !Self.isConditionalOrRanged(requestHeaders), let entry = storedResponse(for: url, requestHeaders: requestHeaders) else {
            return fallback
        }
        if !request.noCache && !entry.cacheControl.noCache {
            let age = entry.currentAge(now: now)
            let ageAcceptable = request.maxAge.map { age <= TimeInterval($0) } ?? true
            if ageAcceptable {
                let remaining = entry.freshnessLifetime - age
                if remaining > 0 {
                    if remaining >= TimeInterval(request.minFresh ?? 0) { return .useStored(entry) }
                } else if !entry.cacheControl.mustRevalidate, let maxStale = request.maxStale, -remaining <= TimeInterval(maxStale) {
                    return .useStored(entry)
                }
            }
        }
        guard !request.onlyIfCached, entry.hasValidator else { return fallback }
        return .validate(entry, conditionalHeaders: entry.conditionalHeaders)
    }

    /// Whether the request carries its own preconditions or a range: the cache neither answers
    /// nor validates those, the caller expects the server's own answer.
    private static func isConditionalOrRanged(_ headers: [(name: String, value: String)]) -> Bool {
        ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range", "Range"].contains {
            CacheHeaderFields.contains($0, in: headers)
        }
    }

    /// Whether a response to `GET` may be stored (RFC 9111 §3, for a private cache).
    static func isStorable(
        status: Int, requestHeaders: [(name: String, value: String)], responseHeaders: [(name: String, value: String)], bodyCount: Int
    ) -> Bool {
        guard status >= 200, status != 206, status != 304, !CacheHeaderFields.contains("Content-Range", in: responseHeaders) else { return false }
        guard !CacheControl(headers: requestHeaders).noStore, !CacheControl(headers: responseHeaders).noStore else { return false }
        guard CacheHeaderFields.byteCount(of: responseHeaders) <= maximumHeaderBytes else { return false }
        return heuristicallyCacheableStatuses.contains(status) || hasExplicitFreshness(headers: responseHeaders)
    }

    /// The request's values of the headers the response's `Vary` names.
    private static func varyValues(
        responseHeaders: [(name: String, value: String)], requestHeaders: [(name: String, value: String)]
    ) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in CacheHeaderFields.listMembers("Vary", in: responseHeaders).map({ $0.lowercased() }) + credentialHeaderNames where name != "*" {
            values[name] = .some(CacheHeaderFields.normalized(name, in: requestHeaders))
        }
        return values
    }

    /// Request headers every stored response varies on, whatever its `Vary` says: a response to
    /// one user's credentials or cookies is never served to a request with other ones (or none),
    /// so a cache shared by the sessions of several users cannot hand one user's data to
    /// another. A single user's requests, which carry the same credentials each time, still hit.
    static let credentialHeaderNames = ["authorization", "cookie"]

    /// The cache key of `url`: its text without the fragment, the scheme and host lowercased
    /// and a default port left out, so that equivalent spellings share an entry.
    static func key(for url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            let text = url.absoluteString
            return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
        }
        components.fragment = nil
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.percentEncodedHost = components.percentEncodedHost?.lowercased()
        if let port = components.port, (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
            components.port = nil
        }
        return components.string ?? url.absoluteString
    }

    // MARK: - Invalidation

    /// Removes the responses stored for `url` and for the same-origin URLs in the response's
    /// `Location` and `Content-Location` (RFC 9111 §4.4).
    private func invalidate(url: URL, key: String, responseHeaders: [(name: String, value: String)]) {
        remove(key: key)
        for name in ["Location", "Content-Location"] {
            guard let value = CacheHeaderFields.first(name, in: responseHeaders), let target = URL(string: value, relativeTo: url)?.absoluteURL,
                Self.sameOrigin(target, url)
            else { continue }
            remove(key: Self.key(for: target))
        }
    }

    /// Whether two URLs have the same scheme, host and port (default ports filled in).
    static func sameOrigin(_ left: URL, _ right: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int)? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return (scheme, host, port)
        }
        guard let a = origin(left), let b = origin(right) else { return false }
        return a == b
    }

    // MARK: - Storage

    /// The stored response for `url` if it matches the request's `Vary` headers.
    private func storedResponse(for url: URL, requestHeaders: [(name: String, value: String)]) -> CachedResponse? {
        guard let entry = lookup(key: Self.key(for: url)), entry.matchesVary(requestHeaders) else { return nil }
        return entry
    }

    /// The entry stored under `key`, from memory or else from disk (then kept in memory too),
    /// now the most recently used. A disk file that is not a whole, intact entry for `key` is
    /// deleted and is a miss.
    func lookup(key: String) -> CachedResponse? {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: key)
        let (hit, record): (CachedResponse?, CacheDiskStore.Record?) = state.withLock { state in
            if let entry = state.memory.entry(for: key) { return (entry, nil) }
            return (nil, state.disk?.touch(name))
        }
        if let hit { return hit }
        guard let record, let diskStore else { return nil }
        guard let data = diskStore.read(name), let entry = CacheEntryCodec.decode(data), entry.key == key else {
            state.withLock { state in
                guard state.disk?.peek(name)?.generation == record.generation else { return }
                state.disk?.remove(name)
                diskStore.delete(name)
            }
            return nil
        }
        diskStore.markUsed(name)
        state.withLock { state in
            if state.disk?.peek(name)?.generation == record.generation { state.memory.store(entry) }
        }
        return entry
    }

    /// Stores `entry` in memory and on disk, where each has room for it; where one has not, any
    /// older entry for its key there is removed.
    private func store(_ entry: CachedResponse) {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: entry.key)
        var temporary: URL?
        var size = 0
        if let diskStore, diskCapacity > 0 {
            let encoded = CacheEntryCodec.encode(entry)
            size = encoded.count
            if size <= diskCapacity { temporary = diskStore.writeTemporary(encoded, for: name) }
        }
        state.withLock { state in
            state.memory.store(entry)
            guard state.disk != nil, let diskStore else { return }
            if let temporary, diskStore.commit(temporary, as: name) {
                let generation = state.nextGeneration
                state.nextGeneration += 1
                let (_, evicted) = state.disk!.insert(name, CacheDiskStore.Record(size: size, generation: generation), cost: size)
                for victim in evicted { diskStore.delete(victim.key) }
            } else if state.disk?.remove(name) != nil {
                diskStore.delete(name)
            }
        }
    }

    /// Removes the entry stored under `key` from memory and disk.
    private func remove(key: String) {
        let name = diskStore == nil ? "" : CacheDiskStore.fileName(forKey: key)
        state.withLock { state in
            state.memory.remove(key)
            if state.disk?.remove(name) != nil { diskStore?.delete(name) }
        }
    }

    // MARK: - For tests

    /// The keys in memory, least recently used first.
    var memoryKeysOldestFirst: [String] { state.withLock { $0.memory.keysOldestFirst } }

    /// The entry file names on disk as indexed, least recently used first.
    var diskFilesOldestFirst: [String] { state.withLock { $0.disk?.keysOldestFirst ?? [] } }
}
