import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An input stream that gives `count` bytes, then fails with `EIO`, as a stream over a file or a
/// socket that breaks part-way.
final class FailingInputStream: InputStream {
    /// The stream's state, apart: a subclass of a class that may be `Sendable` keeps no `var`.
    private final class State: @unchecked Sendable {
        // Sendable: an upload reads a stream from one thread at a time.
        var remaining: Int
        var status: Stream.Status = .notOpen
        init(remaining: Int) { self.remaining = remaining }
    }

    private let state: State

    init(failingAfter count: Int) {
        state = State(remaining: count)
        super.init(data: Data())
    }

    override func open() { state.status = .open }
    override func close() { state.status = .closed }
    override var streamStatus: Stream.Status { state.status }
    override var streamError: (any Error)? { state.status == .error ? POSIXError(.EIO) : nil }
    override var hasBytesAvailable: Bool { state.status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard state.remaining > 0 else {
            state.status = .error
            return -1
        }
        let count = min(length, state.remaining)
        buffer.update(repeating: 7, count: count)
        state.remaining -= count
        return count
    }
}

/// Whether `error` is the failure of a request whose one-shot body had to be sent again.
func isNotReplayable(_ error: MoyaError?, _ reason: NonReplayableBodyError.Reason) -> Bool {
    guard case .underlying(let underlying as NonReplayableBodyError, _)? = error else { return false }
    return underlying.reason == reason && (underlying.errorDescription ?? "").contains("one-shot")
}

@Suite("A request's httpBodyStream is streamed: whole, framed by its Content-Length or chunked, and failing clearly")
struct BodyStreamUploadTests {
    let server: TestServer
    var base: URL { server.baseURL }

    /// Over four chunks of the uploader, and not a multiple of one.
    static var payload: Data { Data(payloadBytes) }

    /// The payload's bytes. Kept as an array: a `Data` held by a global was reported as a leak by
    /// LeakSanitizer, which does not see a pointer whose spare bits carry an enum tag.
    private static let payloadBytes = (0..<(BodyStreamer.chunkSize * 4 + 4099)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    init() async throws {
        server = try await TestServer.start()
    }

    /// A provider whose request closure gives every request a new stream from `makeStream` as its
    /// `httpBodyStream`, and `contentLength` as its `Content-Length` when given.
    func provider(
        contentLength: Int? = nil, plugins: [PluginType] = [], interceptors: [RequestInterceptor] = [],
        makeStream: @escaping () -> InputStream = { InputStream(data: BodyStreamUploadTests.payload) }
    ) -> MoyaProvider<Remote> {
        MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                do {
                    var request = try endpoint.urlRequest()
                    request.httpBodyStream = makeStream()
                    if let contentLength {
                        request.setValue(String(contentLength), forHTTPHeaderField: "Content-Length")
                    }
                    done(.success(request))
                } catch {
                    done(.failure(error as? MoyaError ?? .underlying(error, nil)))
                }
            }, plugins: plugins, interceptors: interceptors)
    }

    func upload(_ provider: MoyaProvider<Remote>, method: Moya.Method = .post) async throws -> UploadReport {
        let result = await send(provider, Remote(base, "/upload", method: method))
        return try JSONDecoder().decode(UploadReport.self, from: try result.get().data)
    }

    @Test("With a Content-Length header, the stream arrives whole with that Content-Length")
    func withContentLength() async throws {
        let report = try await upload(provider(contentLength: Self.payload.count))
        #expect(report.length == Self.payload.count)
        #expect(report.sha256 == HexDigest.sha256(Self.payload))
        #expect(report.contentLength == String(Self.payload.count))
        #expect(report.transferEncoding == nil)
    }

    @Test("Without a Content-Length header, the stream arrives whole, chunked")
    func chunked() async throws {
        let report = try await upload(provider(), method: .put)
        #expect(report.length == Self.payload.count)
        #expect(report.sha256 == HexDigest.sha256(Self.payload))
        #expect(report.contentLength == nil)
        #expect(report.transferEncoding == "chunked")
    }

    @Test("A stream a plugin sets arrives whole, and the logger that shows the request reads none of it")
    func setByPluginAndLogged() async throws {
        let capture = LogCapture()
        let logger = NetworkLoggerPlugin(configuration: capturing(capture, .verbose))
        let provider = MoyaProvider<Remote>(plugins: [StreamSettingPlugin(), logger])
        let result = await send(provider, Remote(base, "/upload", method: .post))
        let report = try JSONDecoder().decode(UploadReport.self, from: try result.get().data)
        #expect(report.length == Self.payload.count)
        #expect(report.sha256 == HexDigest.sha256(Self.payload))
        #expect(capture.entries.contains { $0.hasPrefix("Request Body Stream|") })
    }

    @Test("A stream that fails part-way fails the request once, with the stream's error")
    func failingStream() async throws {
        let plugin = RecordingPlugin()
        let completions = Recorder<UncheckedResult>()
        let provider = provider(plugins: [plugin]) { FailingInputStream(failingAfter: BodyStreamer.chunkSize + 1000) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            provider.request(Remote(base, "/upload", method: .post), callbackQueue: .global(), progress: nil) { result in
                completions.append(UncheckedResult(result))
                continuation.resume()
            }
        }
        let error = try #require(completions.values.first?.result.error)
        guard case .readFailed(let url, let underlying)? = error.underlyingError as? FileTransferError else {
            Issue.record("expected FileTransferError.readFailed, got \(error)")
            return
        }
        #expect(url == nil)
        #expect((underlying as? POSIXError)?.code == .EIO)
        #expect(error.localizedDescription.contains("input stream"), "\(error.localizedDescription)")
        // Time is the behaviour under test: a "nothing more happens" window, no second completion and no second didReceive.
        try await _Concurrency.Task.sleep(for: .milliseconds(300))
        #expect(completions.values.count == 1)
        #expect(plugin.events.filter { $0.hasSuffix("didReceive") }.count == 1)
    }

    @Test("A stream shorter or longer than its Content-Length fails the request with lengthMismatch")
    func lengthMismatch() async throws {
        let count = Self.payload.count
        let short = await send(provider(contentLength: count + 10), Remote(base, "/upload", method: .post))
        guard case .lengthMismatch(let expected, let actual)? = short.error?.underlyingError as? FileTransferError else {
            Issue.record("expected lengthMismatch, got \(short)")
            return
        }
        #expect(expected == UInt64(count + 10))
        #expect(actual == UInt64(count))

        let long = await send(provider(contentLength: count - 10), Remote(base, "/upload", method: .post))
        guard case .lengthMismatch(let announced, let read)? = long.error?.underlyingError as? FileTransferError else {
            Issue.record("expected lengthMismatch, got \(long)")
            return
        }
        #expect(announced == UInt64(count - 10))
        #expect(read > announced)
        #expect(long.error?.localizedDescription.contains("more") == true, "\(String(describing: long.error?.localizedDescription))")
    }

    @Test("A 307 or 308 redirect that must send the stream again fails, saying the body is a one-shot stream", arguments: [307, 308])
    func redirect(status: Int) async throws {
        let target = Remote(
            base, "/redirect-to", method: .post,
            task: .requestParameters(parameters: ["url": "/upload", "status": status], encoding: URLEncoding.queryString))
        let result = await send(provider(contentLength: Self.payload.count), target)
        let location = try #require(URL(string: "/upload", relativeTo: base)?.absoluteURL)
        #expect(isNotReplayable(result.error, .redirect(statusCode: status, location: location)), "\(result)")
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to"])
    }

    @Test("An interceptor's retry that must send the stream again fails, saying the body is a one-shot stream")
    func retry() async throws {
        let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0)
        let result = await send(
            provider(interceptors: [policy]),
            Remote(base, "/flaky/one-shot", method: .put, task: .requestParameters(parameters: ["failures": 1], encoding: URLEncoding.queryString)))
        #expect(isNotReplayable(result.error, .retry), "\(result)")
        // The 503 that asked for the retry comes with the error.
        #expect(result.error?.response?.statusCode == 503)
        #expect(server.receivedRequests.count == 1)
    }
}

extension BodyStreamUploadTests {
    @Test("A retry of an attempt that failed names the failure too")
    func retryAfterFailure() async throws {
        let policy = RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0)
        let result = await send(
            provider(interceptors: [policy]),
            Remote(
                base, "/flaky/dropped", method: .put,
                task: .requestParameters(parameters: ["failures": 1, "failWith": "drop"], encoding: URLEncoding.queryString)))
        #expect(isNotReplayable(result.error, .retry), "\(result)")
        guard case .underlying(let error as NonReplayableBodyError, nil)? = result.error else { return }
        #expect(error.attemptFailure?.underlyingTransportError?.code == .networkConnectionLost)
        #expect(error.localizedDescription.contains("the attempt failed"), "\(error.localizedDescription)")
        #expect(server.receivedRequests.count == 1)
    }

    @Test(
        "NonReplayableBodyError says what needed the body again, itself and inside a MoyaError",
        arguments: [
            NonReplayableBodyError.Reason.redirect(statusCode: 307, location: URL(string: "https://api.example.com/v2")!), .retry, .alreadySent,
        ])
    func errorText(reason: NonReplayableBodyError.Reason) {
        let error = NonReplayableBodyError(reason: reason)
        let wrapped = MoyaError.underlying(error, nil)
        for text in [error.localizedDescription, error.description, wrapped.localizedDescription, wrapped.description] {
            #expect(text.contains("one-shot stream that cannot be rewound"), "\(text)")
        }
        if case .redirect = reason {
            #expect(error.localizedDescription.contains("307 redirect to https://api.example.com/v2"))
        }
    }
}

/// Sets a new stream of ``BodyStreamUploadTests/payload`` as the request's `httpBodyStream`.
private struct StreamSettingPlugin: PluginType {
    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        var request = request
        request.httpBodyStream = InputStream(data: BodyStreamUploadTests.payload)
        return request
    }
}
