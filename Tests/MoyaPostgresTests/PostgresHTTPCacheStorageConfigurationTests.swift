import Foundation
import MoyaPostgres
import Testing

/// Configurations from URLs; no server needed.
struct PostgresHTTPCacheStorageConfigurationTests {
    @Test func aFullURLGivesEveryPart() throws {
        let configuration = try PostgresHTTPCacheStorage.Configuration(url: "postgres://moya:s%40cret@db.internal:6543/cache?sslmode=require")
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "moya")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == "cache")
        #expect(configuration.tls == .require)
        #expect(configuration.namespace == "default")
        #expect(configuration.maximumSize == 1 << 30)
        #expect(configuration.maximumBodyLength == 64 << 20)
        #expect(configuration.chunkSize == 256 << 10)
        #expect(configuration.orphanGrace == 60)
    }

    @Test func theDefaultsFillWhatAShortURLLeavesOut() throws {
        let configuration = try PostgresHTTPCacheStorage.Configuration(url: "postgresql://127.0.0.1")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 5432)
        #expect(configuration.username == "postgres")
        #expect(configuration.password == nil)
        #expect(configuration.database == nil)
        #expect(configuration.tls == .prefer)
        let disabled = try PostgresHTTPCacheStorage.Configuration(url: "postgres://u@[::1]:5433/db?sslmode=disable")
        #expect(disabled.host == "::1")
        #expect(disabled.tls == .disable)
    }

    @Test(arguments: ["http://host/db", "not a url", "postgres:///db", "postgres://host:99999/db", "postgres://host/db?sslmode=sometimes"])
    func aBadURLThrowsAClearError(url: String) {
        #expect(throws: PostgresHTTPCacheStorage.ConfigurationError.self) { try PostgresHTTPCacheStorage.Configuration(url: url) }
    }

    @Test func theDescriptionLeavesThePasswordOut() throws {
        let configuration = try PostgresHTTPCacheStorage.Configuration(url: "postgres://moya:hunter2@db/cache")
        #expect(!"\(configuration)".contains("hunter2"))
        #expect(!String(reflecting: configuration).contains("hunter2"))
    }
}
