import Foundation
import Logging
import PostgresNIO

extension PostgresHTTPCacheStorage {
    /// Where the storage's PostgreSQL server is, how to reach it, and the bounds of what it
    /// stores there.
    ///
    /// ```swift
    /// import MoyaPostgres
    ///
    /// var configuration = try PostgresHTTPCacheStorage.Configuration(url: "postgres://moya:secret@db.internal:5432/cache")
    /// configuration.namespace = "api-gateway"
    /// configuration.maximumSize = 4 << 30
    /// let storage = PostgresHTTPCacheStorage(configuration: configuration)
    /// ```
    ///
    /// Its descriptions leave the password out.
    public struct Configuration: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// Whether connections to the server are encrypted.
        public enum TLS: Sendable, Equatable {
            /// Plain TCP: fine on loopback or a private network you trust.
            case disable
            /// TLS when the server offers it, plain otherwise; the server's certificate is not
            /// verified (as libpq's `sslmode=prefer`): protects against eavesdropping only.
            case prefer
            /// TLS or no connection, with the server's certificate verified against the system's
            /// trust roots and the host name (as libpq's `sslmode=verify-full`).
            case require
        }

        /// The server's host name or IP address.
        public var host: String
        /// The server's TCP port (`5432` unless told).
        public var port: Int
        /// The role to connect as.
        public var username: String
        /// The role's password, if the server asks for one. Never logged or described.
        public var password: String?
        /// The database to use; `nil` for the server's default (the role's name).
        public var database: String?
        /// Whether connections are encrypted (``TLS-swift.enum/prefer`` unless told).
        public var tls: TLS
        /// Sets the records of this storage apart from those of other storages in the same
        /// tables: the size bound, ``PostgresHTTPCacheStorage/removeAll()`` and the sweep all
        /// apply to one namespace. Processes that share a cache use the same namespace.
        public var namespace: String
        /// The most body bytes the namespace holds; a commit beyond it evicts the oldest records
        /// (by when they were stored). 1 GiB unless told.
        public var maximumSize: Int64
        /// The most body bytes one record may hold (64 MiB unless told).
        public var maximumBodyLength: Int64
        /// The size of the rows a body is stored in, and so the most a writer buffers and a reader
        /// holds at once (256 KiB unless told).
        public var chunkSize: Int
        /// How long a reader's lease on a body lasts before it is renewed (a record removed
        /// while it is read keeps its chunks while the lease does); also how long a writer may go
        /// without writing before a sweep takes its chunks for those of a dead process (60 s
        /// unless told).
        public var orphanGrace: TimeInterval
        /// The longest wait for a new connection to the server (5 s unless told).
        public var connectTimeout: TimeInterval
        /// The longest any one call waits for the server before it throws (10 s unless told): a
        /// server that is down or unreachable never holds a caller longer.
        public var operationTimeout: TimeInterval
        /// How often, at most, a commit starts a sweep (``PostgresHTTPCacheStorage/removeExpired()``)
        /// in the background; `nil` never (60 s unless told).
        public var sweepInterval: TimeInterval?
        /// The most connections the storage opens to the server at once (8 unless told). A near
        /// cache's change feed (``PostgresHTTPCacheStorage/changes()``) holds one of them while
        /// it listens, and needs 2 or more.
        public var maximumConnections: Int
        /// The `application_name` the storage's connections show in `pg_stat_activity`.
        public var applicationName: String
        /// The PostgreSQL channel (`LISTEN`/`NOTIFY`) on which every change to the records is
        /// announced, for the near caches of the processes that share the storage
        /// (``PostgresHTTPCacheStorage/changes()``): `moya_http_cache` unless told. Processes
        /// that share a namespace use the same channel; the payloads name their namespace, so
        /// namespaces may share a channel. Letters, digits and underscores, 63 bytes at most;
        /// another name gives no change feed (the near cache then never answers).
        public var notificationChannel: String
        /// Where the storage and its PostgreSQL client log (a failed background sweep, a lost
        /// connection).
        public var logger: Logger

        /// A configuration with the default bounds.
        ///
        /// - Parameters:
        ///   - host: The server's host name or IP address.
        ///   - port: The server's TCP port.
        ///   - username: The role to connect as.
        ///   - password: The role's password, if the server asks for one.
        ///   - database: The database to use; `nil` for the server's default.
        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String?) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            tls = .prefer
            namespace = "default"
            maximumSize = 1 << 30
            maximumBodyLength = 64 << 20
            chunkSize = 256 << 10
            orphanGrace = 60
            connectTimeout = 5
            operationTimeout = 10
            sweepInterval = 60
            maximumConnections = 8
            applicationName = "moya-http-cache"
            notificationChannel = PostgresHTTPCacheStorage.defaultNotificationChannel
            logger = Logger(label: "Moya.PostgresHTTPCacheStorage")
        }

        /// A configuration from a connection URL: `postgres://user:password@host:port/database`
        /// (or `postgresql://`). The user defaults to `postgres`, the port to `5432`; user and
        /// password may be percent-encoded. The query may say `sslmode=disable`, `prefer` or
        /// `require` (`verify-ca` and `verify-full` mean ``TLS-swift.enum/require``) and
        /// `application_name=...`.
        ///
        /// - Throws: ``PostgresHTTPCacheStorage/ConfigurationError`` when `url` is not such a URL.
        public init(url: String) throws {
            guard let components = URLComponents(string: url),
                let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
            else {
                throw ConfigurationError(message: "Not a PostgreSQL URL: expected postgres://user:password@host:port/database.")
            }
            guard var host = components.host, !host.isEmpty else {
                throw ConfigurationError(message: "The PostgreSQL URL names no host: expected postgres://user:password@host:port/database.")
            }
            if host.hasPrefix("["), host.hasSuffix("]") {
                host = String(host.dropFirst().dropLast())
            }
            if let port = components.port, !(1...65_535).contains(port) {
                throw ConfigurationError(message: "The PostgreSQL URL's port \(port) is not between 1 and 65535.")
            }
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            if path.contains("/") {
                throw ConfigurationError(message: "The PostgreSQL URL's path names more than a database: \(path).")
            }
            let user = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? "postgres"
            self.init(host: host, port: components.port ?? 5432, username: user, password: components.password, database: path.isEmpty ? nil : path)
            for item in components.queryItems ?? [] {
                switch (item.name, item.value ?? "") {
                case ("sslmode", "disable"), ("sslmode", "allow"): tls = .disable
                case ("sslmode", "prefer"): tls = .prefer
                case ("sslmode", "require"), ("sslmode", "verify-ca"), ("sslmode", "verify-full"): tls = .require
                case ("sslmode", let mode):
                    throw ConfigurationError(message: "The PostgreSQL URL's sslmode \"\(mode)\" is not one of disable, prefer, require.")
                case ("application_name", let name): applicationName = name
                default: break
                }
            }
        }

        /// The configuration without its password.
        public var description: String {
            var text = "PostgresHTTPCacheStorage.Configuration(postgres://\(username)"
            if password != nil { text += ":***" }
            text += "@\(host):\(port)/\(database ?? ""), namespace: \(namespace), maximumSize: \(maximumSize)"
            text += ", maximumBodyLength: \(maximumBodyLength), chunkSize: \(chunkSize), tls: \(tls))"
            return text
        }

        /// The configuration without its password.
        public var debugDescription: String { description }

        /// The PostgresNIO client configuration these values make.
        var clientConfiguration: PostgresClient.Configuration {
            let clientTLS: PostgresClient.Configuration.TLS
            switch tls {
            case .disable:
                clientTLS = .disable
            case .prefer:
                var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
                tlsConfiguration.certificateVerification = .none
                clientTLS = .prefer(tlsConfiguration)
            case .require:
                clientTLS = .require(.makeClientConfiguration())
            }
            var configuration = PostgresClient.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: clientTLS)
            configuration.options.connectTimeout = .milliseconds(Int64(max(connectTimeout, 0.001) * 1000))
            configuration.options.maximumConnections = max(maximumConnections, 1)
            configuration.options.additionalStartupParameters = [("application_name", applicationName)]
            return configuration
        }
    }

    /// A ``PostgresHTTPCacheStorage/Configuration`` could not be made from a URL.
    public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong with the URL (never its password).
        public let message: String

        /// What is wrong with the URL.
        public var description: String { message }
    }
}
