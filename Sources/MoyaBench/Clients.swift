import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moya
import NIOCore
import NIOPosix

/// One way of sending the benchmark's requests.
protocol BenchClient: Sendable {
    var name: String { get }
    /// A GET of `path`; returns the number of body bytes.
    func get(_ path: String) async throws -> Int
    /// A JSON POST of `payload` to `path`; returns the number of body bytes.
    func post(_ path: String, payload: Payload) async throws -> Int
    func shutdown() async throws
}

/// The JSON body of the POST workload.
struct Payload: Codable, Sendable {
    let name: String
    let tags: [String]
    let count: Int
    static let sample = Payload(name: "moya-bench", tags: ["a", "b", "c", "d"], count: 42)
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}

/// Raw AsyncHTTPClient: the baseline every other client is compared with. Same pool settings as
/// Moya's default session (8 connections per host, HTTP/1.1 or 2 as negotiated).
final class RawAHCClient: BenchClient {
    let name = "AsyncHTTPClient (raw)"
    let base: URL
    let client: HTTPClient

    init(base: URL, connections: Int) {
        self.base = base
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.decompression = .enabled(limit: .ratio(100))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    func get(_ path: String) async throws -> Int {
        let response = try await client.execute(request: HTTPClient.Request(url: base.absoluteString + path)).get()
        guard response.status == .ok else { throw BenchFailure(description: "status \(response.status)") }
        return response.body?.readableBytes ?? 0
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        let body = try JSONEncoder().encode(payload)
        var request = try HTTPClient.Request(url: base.absoluteString + path, method: .POST)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(body)
        let response = try await client.execute(request: request).get()
        guard response.status == .ok else { throw BenchFailure(description: "status \(response.status)") }
        return response.body?.readableBytes ?? 0
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

/// The benchmark's API as a Moya target.
struct BenchTarget: TargetType {
    let baseURL: URL
    let path: String
    let method: Moya.Method
    let task: Moya.Task
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }
    var sampleData: Data { Data("{\"ok\":true}".utf8) }

    /// The GET workload's target.
    static func get(_ base: URL, _ path: String) -> BenchTarget {
        BenchTarget(baseURL: base, path: path, method: .get, task: .requestPlain)
    }

    /// The JSON POST workload's target.
    static func post(_ base: URL, _ path: String, _ payload: Payload) -> BenchTarget {
        BenchTarget(baseURL: base, path: path, method: .post, task: .requestJSONEncodable(payload))
    }
}

/// `MoyaProvider` with the callback API, completions on a global queue.
final class MoyaCallbackClient: BenchClient {
    let name = "MoyaProvider (callbacks)"
    let base: URL
    let session: Session
    let provider: MoyaProvider<BenchTarget>

    init(base: URL, connections: Int) {
        self.base = base
        session = Session(configuration: .init(maximumConnectionsPerHost: connections))
        provider = MoyaProvider<BenchTarget>(callbackQueue: .global(), session: session)
    }

    func send(_ target: BenchTarget) async throws -> Int {
        let result: UncheckedBox<Result<Moya.Response, MoyaError>> = await withCheckedContinuation { continuation in
            provider.request(target) { result in
                continuation.resume(returning: UncheckedBox(result))
            }
        }
        return try result.value.get().data.count
    }

    func get(_ path: String) async throws -> Int {
        try await send(.get(base, path))
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        try await send(.post(base, path, payload))
    }

    func shutdown() async throws {
        try await session.shutdown()
    }
}

/// `MoyaProvider` with async/await.
final class MoyaAsyncClient: BenchClient {
    let name = "MoyaProvider (async)"
    let base: URL
    let session: Session
    let provider: MoyaProvider<BenchTarget>

    init(base: URL, connections: Int) {
        self.base = base
        session = Session(configuration: .init(maximumConnectionsPerHost: connections))
        provider = MoyaProvider<BenchTarget>(session: session)
    }

    func get(_ path: String) async throws -> Int {
        try await provider.request(.get(base, path)).data.count
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        try await provider.request(.post(base, path, payload)).data.count
    }

    func shutdown() async throws {
        try await session.shutdown()
    }
}

/// FoundationNetworking's `URLSession` (libcurl on Linux).
final class URLSessionClient: BenchClient {
    let name = "URLSession"
    let base: URL
    let session: URLSession

    init(base: URL, connections: Int) {
        self.base = base
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        session = URLSession(configuration: configuration)
    }

    private func send(_ request: URLRequest) async throws -> Int {
        let outcome: UncheckedBox<(Data?, URLResponse?, (any Error)?)> = await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                continuation.resume(returning: UncheckedBox((data, response, error)))
            }.resume()
        }
        let (data, response, error) = outcome.value
        if let error { throw error }
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchFailure(description: "bad status") }
        return data?.count ?? 0
    }

    func get(_ path: String) async throws -> Int {
        try await send(URLRequest(url: base.appendingPathComponent(path)))
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(payload)
        return try await send(request)
    }

    func shutdown() async throws {
        session.invalidateAndCancel()
    }
}

/// Hands a value that is not `Sendable` from a callback to the awaiting task.
struct UncheckedBox<Value>: @unchecked Sendable {
    // Sendable: the value is created in the callback and only read by the resumed task.
    let value: Value
    init(_ value: Value) { self.value = value }
}
