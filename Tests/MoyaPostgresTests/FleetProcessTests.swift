import Foundation
import Moya
import MoyaPostgres
import MoyaPostgresTestSupport
import MoyaTestServer
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Replicas of a service as separate processes (`MoyaFleetReplica`, built beside the test
/// bundle) sharing one HTTP cache in one PostgreSQL database.
@Suite(
    "Processes that share one cache in PostgreSQL", .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipMessage)))
struct FleetProcessTests {
    /// Runs one replica: `method url` through a cache in `namespace`; returns what it printed
    /// (`status cacheStatus bodyLength`).
    static func replica(_ postgres: String, _ namespace: String, _ method: String, _ url: URL) async throws -> String {
        // The replica's run is waited for on a thread of its own (``OwnThread``).
        try await OwnThread.run { try runReplica(postgres, namespace, method, url) }
    }

    private static func runReplica(_ postgres: String, _ namespace: String, _ method: String, _ url: URL) throws -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map { $0.appendingPathComponent("MoyaFleetReplica") }
        let program = try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "MoyaFleetReplica is not built (swift build --build-tests)")
        let process = Process()
        process.executableURL = program
        process.arguments = [postgres, namespace, method, url.absoluteString]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReplicaFailed(status: process.terminationStatus, output: String(decoding: complaint, as: UTF8.self))
        }
        return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A replica that did not exit 0.
    struct ReplicaFailed: Error, CustomStringConvertible {
        let status: Int32
        let output: String
        var description: String { "the replica exited \(status): \(output)" }
    }

    @Test("One process stores, another is answered from the store, a POST through a second invalidates, a third started later is warm")
    func threeProcesses() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/catalog", response: MockResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Data("catalog v1".utf8)))
        mock.route("POST", "/catalog", response: MockResponse(status: 204))
        let postgres = try await PostgresTestServer.url()
        let namespace = "fleet-\(UUID().uuidString)"
        let url = mock.baseURL.appendingPathComponent("catalog")
        let origin = { mock.requests.filter { $0.path == "/catalog" && $0.method == "GET" }.count }

        #expect(try await Self.replica(postgres, namespace, "GET", url) == "200 network 10")
        #expect(try await Self.replica(postgres, namespace, "GET", url) == "200 hit 10", "the second process is answered from the store")
        #expect(origin() == 1)
        #expect(try await Self.replica(postgres, namespace, "POST", url) == "204 network 0")
        #expect(try await Self.replica(postgres, namespace, "GET", url) == "200 network 10", "the POST through another process invalidated it")
        #expect(origin() == 2)
        #expect(try await Self.replica(postgres, namespace, "GET", url) == "200 hit 10", "a process started later is answered warm")
        #expect(origin() == 2)
        await mock.shutdown()
    }
}
