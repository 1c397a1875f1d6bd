import AsyncHTTPClient
import Foundation
import Moya
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of a workload.
enum RequestKind: Sendable {
    /// A GET of the path.
    case get(String)
    /// A JSON POST of the payload to the path.
    case post(String, Payload)
}

/// One way of sending the benchmark's requests.
protocol BenchClient: Sendable {
    var name: String { get }
    /// Sends `total` requests of `kind`, `concurrency` at a time; returns requests per second and
    /// each request's latency.
    func load(_ kind: RequestKind, concurrency: Int, total: Int) async throws -> (rate: Double, latencies: [Double])
    func shutdown() async throws
}

/// A client whose requests are awaited: `concurrency` tasks each await one request after another
/// (``runLoad(concurrency:total:_:)``). (A callback API drives its own loop instead.)
protocol AwaitingBenchClient: BenchClient {
    /// A GET of `path`; returns the number of body bytes.
    func get(_ path: String) async throws -> Int
    /// A JSON POST of `payload` to `path`; returns the number of body bytes.
    func post(_ path: String, payload: Payload) async throws -> Int
}

extension AwaitingBenchClient {
    func load(_ kind: RequestKind, concurrency: Int, total: Int) async throws -> (rate: Double, latencies: [Double]) {
        try await runLoad(concurrency: concurrency, total: total) {
            switch kind {
            case .get(let path): return try await self.get(path)
            case .post(let path, let payload): return try await self.post(path, payload: payload)
            }
        }
    }
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

/// Raw AsyncHTTPClient: the baseline every other client is compared with. Same client settings as
/// Moya's default session (8 connections per host, HTTP/1.1 or 2 as negotiated, the same
/// timeouts and decompression) except the tracer, which stays AsyncHTTPClient's default (the
/// `ahc-notrace` control has none, as a Moya session's client), and the same bytes on the wire:
/// it sends the headers a default `Session` adds (`Accept-Encoding`, `Accept-Language`,
/// `User-Agent`), so that both sides do the same HTTP work.
final class RawAHCClient: AwaitingBenchClient {
    let name: String
    let base: URL
    let client: HTTPClient
    let headers = HTTPHeaders(Session.defaultHTTPHeaders.map { ($0.key, $0.value) })

    /// - Parameters:
    ///   - traced: `false` gives the client no tracer instead of AsyncHTTPClient's
    ///   default (the bootstrapped one, here the no-op tracer, which still has every request's
    ///   span attributes worked out). A Moya session does that (`Session.clientTracer`); this is
    ///   the `ahc-notrace` control.
    ///   - trustRoots: For HTTPS, the certificates to trust instead of the system's.
    init(base: URL, connections: Int, traced: Bool = true, trustRoots: [NIOSSLCertificate]? = nil) {
        self.base = base
        self.name = traced ? "AsyncHTTPClient (raw)" : "AsyncHTTPClient (no tracer)"
        // The guarantees of a default Moya session: the same timeouts, pool and decompression.
        // The 60 s read timeout makes AsyncHTTPClient move a timer at every part it reads; a
        // session keeps the same limit with one timer of its own per request.
        let moya = Session.Configuration.default
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(
            connect: .milliseconds(Int64(moya.timeoutIntervalForConnect * 1000)),
            read: .milliseconds(Int64(moya.timeoutIntervalForRequest * 1000))
        )
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.connectionPool.retryConnectionEstablishment = moya.retriesFailedConnections
        configuration.decompression = .enabled(limit: .ratio(100))
        if !traced {
            configuration.tracing.tracer = nil
        }
        if let trustRoots {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(trustRoots)
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// The GET workload's request.
    func getRequest(_ path: String) throws -> HTTPClient.Request {
        try HTTPClient.Request(url: base.absoluteString + path, headers: headers)
    }

    /// The JSON POST workload's request.
    func postRequest(_ path: String, payload: Payload) throws -> HTTPClient.Request {
        var request = try HTTPClient.Request(url: base.absoluteString + path, method: .POST, headers: headers)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(try JSONEncoder().encode(payload))
        return request
    }

    func get(_ path: String) async throws -> Int {
        try await send(getRequest(path))
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        try await send(postRequest(path, payload: payload))
    }

    private func send(_ request: HTTPClient.Request) async throws -> Int {
        let response = try await client.execute(request: request).get()
        guard response.status == .ok else { throw BenchFailure(description: "status \(response.status)") }
        return response.body?.readableBytes ?? 0
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

/// Raw AsyncHTTPClient through `execute(request:delegate:eventLoop:deadline:)` with a minimal
/// delegate of this module's, as the provider calls it (the provider needs the returned task to
/// cancel). Not a baseline: it tells how much of the provider's cost is AsyncHTTPClient's
/// generic delegate path rather than the provider's own code.
final class RawAHCDelegateClient: AwaitingBenchClient {
    let name = "AsyncHTTPClient (delegate)"
    let raw: RawAHCClient

    init(base: URL, connections: Int) {
        raw = RawAHCClient(base: base, connections: connections)
    }

    /// Collects the body; the status is checked by the caller.
    final class Collector: HTTPClientResponseDelegate, @unchecked Sendable {
        // Sendable: AsyncHTTPClient calls a delegate on the task's event loop only.
        typealias Response = (HTTPResponseStatus, ByteBuffer?)
        private var status: HTTPResponseStatus = .ok
        private var body: ByteBuffer?

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            status = head.status
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            var buffer = buffer
            if body == nil { body = buffer } else { body!.writeBuffer(&buffer) }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            (status, body)
        }
    }

    func send(_ request: HTTPClient.Request) async throws -> Int {
        let task = raw.client.execute(request: request, delegate: Collector(), eventLoop: .indifferent, deadline: nil)
        let (status, body) = try await task.futureResult.get()
        guard status == .ok else { throw BenchFailure(description: "status \(status)") }
        return body?.readableBytes ?? 0
    }

    func get(_ path: String) async throws -> Int {
        try await send(raw.getRequest(path))
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        try await send(raw.postRequest(path, payload: payload))
    }

    func shutdown() async throws {
        try await raw.shutdown()
    }
}

/// Raw AsyncHTTPClient through the delegate API (``RawAHCDelegateClient``), each request first
/// built the way the provider builds it: the target's endpoint by `defaultEndpointMapping`, its
/// `URLRequest` by `urlRequest()`, and AsyncHTTPClient's request from that, with the session's
/// default headers. Not a baseline: with the delegate control it splits the provider's cost
/// into building the request and everything after.
final class RawAHCWithMoyaRequestClient: AwaitingBenchClient {
    let name = "AsyncHTTPClient (Moya's request)"
    let delegateClient: RawAHCDelegateClient

    init(base: URL, connections: Int) {
        delegateClient = RawAHCDelegateClient(base: base, connections: connections)
    }

    func get(_ path: String) async throws -> Int {
        try await delegateClient.send(request(for: .get(delegateClient.raw.base, path)))
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        try await delegateClient.send(request(for: .post(delegateClient.raw.base, path, payload)))
    }

    private func request(for target: BenchTarget) throws -> HTTPClient.Request {
        let urlRequest = try MoyaProvider<BenchTarget>.defaultEndpointMapping(for: target).urlRequest()
        guard let url = urlRequest.url else { throw BenchFailure(description: "no URL") }
        var headers = delegateClient.raw.headers
        for (name, value) in urlRequest.allHTTPHeaderFields ?? [:] {
            headers.replaceOrAdd(name: name, value: value)
        }
        let body = urlRequest.httpBody.map { HTTPClient.Body.bytes($0) }
        return try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"), headers: headers, body: body)
    }

    func shutdown() async throws {
        try await delegateClient.shutdown()
    }
}

/// Raw AsyncHTTPClient through its own async/await API (`HTTPClientRequest`,
/// `execute(_:timeout:)`, the body collected with `collect(upTo:)`), on the same client as the
/// baseline. Not the baseline: the future-based API the baseline uses is AsyncHTTPClient's
/// fastest path; this tells what async code written against AsyncHTTPClient directly gets.
final class RawAHCAsyncClient: AwaitingBenchClient {
    let name = "AsyncHTTPClient (async API)"
    let raw: RawAHCClient

    init(base: URL, connections: Int) {
        raw = RawAHCClient(base: base, connections: connections)
    }

    func get(_ path: String) async throws -> Int {
        var request = HTTPClientRequest(url: raw.base.absoluteString + path)
        request.headers = raw.headers
        return try await send(request)
    }

    func post(_ path: String, payload: Payload) async throws -> Int {
        var request = HTTPClientRequest(url: raw.base.absoluteString + path)
        request.method = .POST
        request.headers = raw.headers
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(payload)))
        return try await send(request)
    }

    private func send(_ request: HTTPClientRequest) async throws -> Int {
        let response = try await raw.client.execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw BenchFailure(description: "status \(response.status)") }
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return body.readableBytes
    }

    func shutdown() async throws {
        try await raw.shutdown()
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
///
/// Its load is driven the way callback code is written: each of `concurrency` chains sends its
/// next request from the previous one's completion, and only the end of the whole run resumes
/// the benchmark's task. (Awaiting every request through a continuation would measure a second
/// thread hop, from the callback queue to the task's executor, that callback users don't have.)
final class MoyaCallbackClient: BenchClient {
    let name: String
    let base: URL
    let session: Session
    let provider: MoyaProvider<BenchTarget>

    /// - Parameters:
    ///   - configuration: The session's configuration; its connections per host are set to
    ///     `connections`.
    ///   - name: How the tables name the client.
    ///   - interceptors: The provider's interceptors; none unless given.
    init(
        base: URL, connections: Int, configuration: Session.Configuration = .init(), name: String = "MoyaProvider (callbacks)",
        interceptors: [RequestInterceptor] = []
    ) {
        self.base = base
        self.name = name
        var configuration = configuration
        configuration.maximumConnectionsPerHost = connections
        session = Session(configuration: configuration)
        provider = MoyaProvider<BenchTarget>(callbackQueue: .global(), session: session, interceptors: interceptors)
    }

    func load(_ kind: RequestKind, concurrency: Int, total: Int) async throws -> (rate: Double, latencies: [Double]) {
        let target: BenchTarget
        switch kind {
        case .get(let path): target = .get(base, path)
        case .post(let path, let payload): target = .post(base, path, payload)
        }
        let run = CallbackRun(chains: concurrency)
        let perChain = total / concurrency
        let clock = ContinuousClock()
        let start = clock.now
        let outcome: UncheckedBox<Result<[Double], any Error>> = await withCheckedContinuation { continuation in
            run.onEnd = { continuation.resume(returning: UncheckedBox($0)) }
            for _ in 0..<concurrency {
                let latencies = ChainLatencies()
                latencies.values.reserveCapacity(perChain)
                chain(target, remaining: perChain, latencies: latencies, run: run, clock: clock)
            }
        }
        let latencies = try outcome.value.get()
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(latencies.count) / seconds, latencies)
    }

    /// One chain's latencies. A class, so that recording one does not copy the array: a value
    /// captured by the completion and appended to in it would be copied on every request.
    private final class ChainLatencies: @unchecked Sendable {
        // Sendable: a chain's requests run one after another, so one thread at a time uses it.
        var values: [Double] = []
    }

    /// Sends one request, and from its completion the next, until `remaining` is 0.
    private func chain(_ target: BenchTarget, remaining: Int, latencies: ChainLatencies, run: CallbackRun, clock: ContinuousClock) {
        guard remaining > 0 else {
            run.chainEnded(latencies: latencies.values, error: nil)
            return
        }
        let begin = clock.now
        provider.request(target) { [self] result in
            let elapsed = clock.now - begin
            if case .failure(let error) = result {
                run.chainEnded(latencies: latencies.values, error: error)
                return
            }
            latencies.values.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            chain(target, remaining: remaining - 1, latencies: latencies, run: run, clock: clock)
        }
    }

    func shutdown() async throws {
        try await session.shutdown()
    }
}

/// `MoyaProvider` with async/await.
final class MoyaAsyncClient: AwaitingBenchClient {
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
final class URLSessionClient: AwaitingBenchClient {
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

/// The chains of one callback-driven run: collects their latencies and reports the end of the
/// last one.
final class CallbackRun: @unchecked Sendable {
    // Sendable: every field is touched under `lock`, except `onEnd`, set before any chain starts.
    private let lock = NSLock()
    private var running: Int
    private var latencies: [Double] = []
    private var error: (any Error)?
    var onEnd: (Result<[Double], any Error>) -> Void = { _ in }

    init(chains: Int) {
        running = chains
    }

    func chainEnded(latencies chainLatencies: [Double], error chainError: (any Error)?) {
        lock.lock()
        latencies += chainLatencies
        if let chainError, error == nil { error = chainError }
        running -= 1
        let isLast = running == 0
        lock.unlock()
        guard isLast else { return }
        if let error {
            onEnd(.failure(error))
        } else {
            onEnd(.success(latencies))
        }
    }
}

/// Hands a value that is not `Sendable` from a callback to the awaiting task.
struct UncheckedBox<Value>: @unchecked Sendable {
    // Sendable: the value is created in the callback and only read by the resumed task.
    let value: Value
    init(_ value: Value) { self.value = value }
}
