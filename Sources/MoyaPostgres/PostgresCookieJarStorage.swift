import Foundation
import Moya
import PostgresNIO

/// A ``CookieJarStorage`` in PostgreSQL: the cookies of a `CookieJar` that the processes of a
/// fleet share, in the same database (and through the same client) as their HTTP cache.
///
/// ```swift
/// import MoyaPostgres
///
/// let storage = PostgresHTTPCacheStorage(configuration: try .init(url: "postgres://moya@db.internal/services"))
/// let jar = CookieJar(sharedStorage: storage.cookieJarStorage())
/// await jar.synchronize()   // the cookies other replicas stored, before the first request
/// let session = Session(configuration: .init(cookieJar: jar, cache: HTTPCache(storage: storage)))
/// ```
///
/// The cookies are rows of `moya_cookies` (namespace, key, the jar's encoding of the cookie,
/// its expiry, when it was written), created by the same migrations as the cache's tables.
/// Expired cookies are not read, and are deleted when the jar writes. A jar keeps at most 3,000
/// cookies, and so does its namespace here: this is a store for a session's cookies, not a
/// database of users.
public final class PostgresCookieJarStorage: CookieJarStorage {
    /// The storage whose client and schema this one uses.
    let storage: PostgresHTTPCacheStorage
    /// Sets these cookies apart from other jars' in the same table.
    public let namespace: String

    /// The most cookies read back.
    static let maximumCookies = 3000

    init(storage: PostgresHTTPCacheStorage, namespace: String) {
        self.storage = storage
        self.namespace = namespace
    }

    /// Every unexpired cookie of the namespace.
    public func loadCookies() async throws -> [CookieJarRecord] {
        let namespace = namespace
        let limit = Self.maximumCookies
        return try await storage.perform("reading the shared cookies") { client in
            let rows = try await client.query(
                """
                SELECT key, data, expires_at FROM moya_cookies
                WHERE namespace = \(namespace) AND (expires_at IS NULL OR expires_at > now())
                ORDER BY updated_at DESC LIMIT \(limit)
                """)
            var records: [CookieJarRecord] = []
            for try await (key, data, expiresAt) in rows.decode((String, ByteBuffer, Date?).self) {
                records.append(CookieJarRecord(key: key, data: Data(buffer: data), expiresAt: expiresAt))
            }
            return records
        }
    }

    /// Writes the changes in one transaction, and deletes the namespace's expired cookies.
    public func saveCookies(_ stored: [CookieJarRecord], removing removed: [String], removeAll: Bool) async throws {
        let namespace = namespace
        try await storage.transaction("writing the shared cookies") { connection in
            if removeAll {
                try await connection.query("DELETE FROM moya_cookies WHERE namespace = \(namespace)", logger: connection.logger)
            }
            for key in removed {
                try await connection.query("DELETE FROM moya_cookies WHERE namespace = \(namespace) AND key = \(key)", logger: connection.logger)
            }
            for record in stored {
                let data = ByteBuffer(bytes: record.data)
                try await connection.query(
                    """
                    INSERT INTO moya_cookies (namespace, key, data, expires_at, updated_at)
                    VALUES (\(namespace), \(record.key), \(data), \(record.expiresAt), now())
                    ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at, updated_at = now()
                    """, logger: connection.logger)
            }
            try await connection.query(
                "DELETE FROM moya_cookies WHERE namespace = \(namespace) AND expires_at <= now()", logger: connection.logger)
        }
    }
}

extension PostgresHTTPCacheStorage {
    /// A cookie storage in the same database, through the same client: for
    /// `CookieJar(sharedStorage:)`.
    ///
    /// - Parameter namespace: Sets these cookies apart from other jars'; the cache's namespace
    ///   by default.
    public func cookieJarStorage(namespace: String? = nil) -> PostgresCookieJarStorage {
        PostgresCookieJarStorage(storage: self, namespace: namespace ?? self.namespace)
    }
}
