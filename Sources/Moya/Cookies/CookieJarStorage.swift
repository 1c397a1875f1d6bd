import Foundation

/// Where a ``CookieJar`` made with ``CookieJar/init(sharedStorage:refreshInterval:acceptPolicy:)``
/// keeps its cookies so that other processes share them: the replicas of a service that act as
/// one user keep one session with their upstream.
///
/// The jar works on a copy in memory, as any jar does, so a request never waits for the storage:
/// it writes what changes to the storage in the background, and reads the storage again when its
/// copy is older than its refresh interval. A storage only keeps opaque records by key (a
/// cookie's name, domain and path); the `MoyaPostgres` product has one in PostgreSQL.
public protocol CookieJarStorage: Sendable {
    /// Every unexpired cookie stored.
    func loadCookies() async throws -> [CookieJarRecord]

    /// Stores `stored` (replacing the records with the same keys) and removes the records whose
    /// keys are in `removed`, after removing every record first when `removeAll`; all in one
    /// step.
    func saveCookies(_ stored: [CookieJarRecord], removing removed: [String], removeAll: Bool) async throws
}

/// One cookie as a ``CookieJarStorage`` keeps it: a key that says which cookie it is, the jar's
/// own encoding of the cookie, opaque to the storage, and when it expires.
public struct CookieJarRecord: Sendable, Hashable {
    /// The cookie's identity: its name, domain and path. A record with the same key replaces
    /// this one.
    public let key: String
    /// The cookie, in the jar's encoding.
    public let data: Data
    /// When the cookie expires (the storage may delete it then), or `nil` for a session cookie.
    public let expiresAt: Date?

    /// Makes a record.
    ///
    /// - Parameters:
    ///   - key: The cookie's identity.
    ///   - data: The cookie, in the jar's encoding.
    ///   - expiresAt: When it expires, or `nil`.
    public init(key: String, data: Data, expiresAt: Date?) {
        self.key = key
        self.data = data
        self.expiresAt = expiresAt
    }
}
