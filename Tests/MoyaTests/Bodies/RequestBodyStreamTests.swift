import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same chunks each time it is iterated, then, when given, an error.
struct ChunkSequence: AsyncSequence, Sendable {
    let chunks: [[UInt8]]
    var failure: TestFailure?

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: [[UInt8]]
        let failure: TestFailure?
        var index = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard index < chunks.count else {
                if let failure { throw failure }
                return nil
            }
            defer { index += 1 }
            return chunks[index][...]
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks, failure: failure)
    }

    /// All the chunks, joined (copied chunk by chunk: joining them byte by byte took seconds
    /// for a megabyte in a debug build under ThreadSanitizer).
    var bytes: Data {
        var bytes = Data(capacity: chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks {
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }
}

/// The error a ``ChunkSequence`` throws.
struct TestFailure: Error, Equatable {
    let code: Int
}

/// Chunks of 64 KiB without end, counted: `running` fires at the fifth, and `released` when the
/// iterator goes.
struct EndlessChunks: AsyncSequence, Sendable {
    let produced = Locked(0)
    let running = Signal()
    let released = Signal()

    /// Fires `released` when the iterator that holds it goes.
    final class Release: Sendable {
        let released: Signal
        init(_ released: Signal) { self.released = released }
        deinit { released.fire() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: EndlessChunks
        let release: Release

        mutating func next() async throws -> Data? {
            try _Concurrency.Task.checkCancellation()
            chunks.produced.update { $0 += 1 }
            if chunks.produced.value == 5 { chunks.running.fire() }
            return Data(count: 64 << 10)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: self, release: Release(released))
    }
}

@Suite("A RequestBodyStream is sent while it is produced, at the network's pace, and fails clearly")
struct RequestBodyStreamTests {
    let server: TestServer
    let provider = MoyaProvider<Remote>()
    var base: URL { server.baseURL }

    /// Chunks of uneven sizes, over a megabyte in all.
    static let chunks: [[UInt8]] = (0..<40).map { index in
        (0..<(index * 1337 + 29_000)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
    }
    static let body = ChunkSequence(chunks: chunks)

    init() async throws {
        server = try await TestServer.start()
    }

    func result(_ target: Remote, body: RequestBodyStream, provider: MoyaProvider<Remote>? = nil) async -> Result<Moya.Response, MoyaError> {
        do throws(MoyaError) {
            return .success(try await (provider ?? self.provider).request(target, body: body))
        } catch {
            return .failure(error)
        }
    }

    @Test("With a length the body arrives whole with that Content-Length, without one chunked; a task's body is replaced")
    func framing() async throws {
        let length = Int64(Self.body.bytes.count)
        let target = Remote(base, "/upload", method: .post, task: .requestData(Data("replaced".utf8)))
        let known = try JSONDecoder().decode(
            UploadReport.self, from: try await provider.request(target, body: RequestBodyStream(Self.body, length: length)).data)
        #expect(known.length == Int(length))
        #expect(known.sha256 == HexDigest.sha256(Self.body.bytes))
        #expect(known.contentLength == String(length))
        #expect(known.transferEncoding == nil)

        let unknown = try JSONDecoder().decode(UploadReport.self, from: try await provider.request(target, body: RequestBodyStream(Self.body)).data)
        #expect(unknown.length == Int(length))
        #expect(unknown.sha256 == HexDigest.sha256(Self.body.bytes))
        #expect(unknown.contentLength == nil)
        #expect(unknown.transferEncoding == "chunked")
    }

    @Test("Over HTTP/2 a body of unknown length, an httpBodyStream or a sequence, goes in frames as it comes and arrives whole")
    func http2() async throws {
        let server = try await MockServer.start(.https)
        server.route("/upload", response: .text("ok"))
        let session = Session(configuration: .init(timeoutIntervalForRequest: 60, tls: .mockServer))
        let streaming = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                do {
                    var request = try endpoint.urlRequest()
                    request.httpBodyStream = InputStream(data: Self.body.bytes)
                    done(.success(request))
                } catch {
                    done(.failure(error as? MoyaError ?? .underlying(error, nil)))
                }
            }, session: session)
        #expect(try await streaming.request(Remote(server.baseURL, "/upload", method: .post)).statusCode == 200)
        let provider = MoyaProvider<Remote>(session: session)
        #expect(try await provider.request(Remote(server.baseURL, "/upload", method: .post), body: RequestBodyStream(Self.body)).statusCode == 200)
        #expect(server.requests.count == 2)
        for request in server.requests {
            #expect(request.httpVersion == "HTTP/2")
            #expect(request.body == Self.body.bytes)
            // No length was sent (the server's HTTP/2-to-HTTP/1 codec adds a chunked framing of
            // its own for such a body).
            #expect(request.header("content-length") == nil)
        }
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("Chunks of [UInt8], ArraySlice<UInt8> and Data all make a body")
    func elementTypes() async throws {
        let parts = [Array("one,".utf8), Array("two,".utf8), Array("three".utf8)]
        let arrays = AsyncStream<[UInt8]> { continuation in
            for part in parts { continuation.yield(part) }
            continuation.finish()
        }
        let datas = AsyncStream<Data> { continuation in
            for part in parts { continuation.yield(Data(part)) }
            continuation.finish()
        }
        let target = Remote(base, "/echo", method: .post)
        for body in [RequestBodyStream(arrays), RequestBodyStream(datas), RequestBodyStream(ChunkSequence(chunks: parts))] {
            let echo = try JSONDecoder().decode(Echo.self, from: try await provider.request(target, body: body).data)
            #expect(echo.body == "one,two,three")
        }
    }

    @Test("A sequence that throws part-way fails the request once, with the sequence's error")
    func failingSequence() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let failing = ChunkSequence(chunks: Self.chunks, failure: TestFailure(code: 7))
        let result = await result(Remote(base, "/upload", method: .post), body: RequestBodyStream(failing), provider: provider)
        guard case .readFailed(let url, let underlying)? = result.error?.underlyingError as? FileTransferError else {
            Issue.record("expected FileTransferError.readFailed, got \(result)")
            return
        }
        #expect(url == nil)
        #expect(underlying as? TestFailure == TestFailure(code: 7))
        #expect(plugin.events.filter { $0.hasSuffix("didReceive") }.count == 1)
    }

    @Test("A sequence shorter or longer than its length fails the request with lengthMismatch")
    func lengthMismatch() async throws {
        let count = Int64(Self.body.bytes.count)
        for declared in [count + 1, count - 1] {
            let result = await result(Remote(base, "/upload", method: .post), body: RequestBodyStream(Self.body, length: declared))
            guard case .lengthMismatch(let expected, let actual)? = result.error?.underlyingError as? FileTransferError else {
                Issue.record("expected lengthMismatch for \(declared), got \(result)")
                continue
            }
            #expect(expected == UInt64(declared))
            #expect(declared > count ? actual == UInt64(count) : actual > expected)
        }
    }

    @Test("A 307 redirect sends a replayable body again, and fails for a one-shot one")
    func redirect() async throws {
        let target = Remote(
            base, "/redirect-to", method: .post, task: .requestParameters(parameters: ["url": "/upload", "status": 307], encoding: URLEncoding.queryString))
        let replayable = RequestBodyStream(Self.body, iteration: .multiple)
        let report = try JSONDecoder().decode(UploadReport.self, from: try await provider.request(target, body: replayable).data)
        #expect(report.sha256 == HexDigest.sha256(Self.body.bytes))
        #expect(server.receivedRequests.map(\.bodyLength) == [Self.body.bytes.count, Self.body.bytes.count])

        server.resetRecordedRequests()
        let oneShot = await result(target, body: RequestBodyStream(Self.body))
        let location = try #require(URL(string: "/upload", relativeTo: base)?.absoluteURL)
        #expect(isNotReplayable(oneShot.error, .redirect(statusCode: 307, location: location)), "\(oneShot)")
        #expect(server.receivedRequests.map(\.path) == ["/redirect-to"])
    }

    @Test("A retry sends a replayable body again, and fails for a one-shot one")
    func retry() async throws {
        let provider = MoyaProvider<Remote>(interceptors: [RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0, jitter: 0)])
        func flaky(_ key: String) -> Remote {
            Remote(base, "/flaky/\(key)", method: .put, task: .requestParameters(parameters: ["failures": 1], encoding: URLEncoding.queryString))
        }
        let replayed = try await provider.request(flaky("replayable"), body: RequestBodyStream(Self.body, iteration: .multiple))
        #expect(replayed.statusCode == 200)
        #expect(server.receivedRequests.map(\.bodyLength) == [Self.body.bytes.count, Self.body.bytes.count])

        server.resetRecordedRequests()
        let oneShot = await result(flaky("one-shot"), body: RequestBodyStream(Self.body), provider: provider)
        #expect(isNotReplayable(oneShot.error, .retry), "\(oneShot)")
        #expect(oneShot.error?.response?.statusCode == 503)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("An attempt refused before its one-shot body was read is retried as usual")
    func retryBeforeBodyWasRead() async throws {
        let closed = try RefusingPort()
        defer { withExtendedLifetime(closed) {} }
        let url = closed.baseURL
        let retries = Recorder<Int>()
        let provider = MoyaProvider<Remote>(
            plugins: [WillRetryPlugin { retries.append($0) }], interceptors: [RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, jitter: 0)])
        let result = await result(Remote(url, "/upload", method: .put), body: RequestBodyStream(Self.body), provider: provider)
        #expect(retries.values == [2])
        #expect(result.error?.underlyingTransportError?.code == .cannotConnectToHost, "\(result)")
    }

    @Test("A one-shot body sent a second time fails without reading it again")
    func reused() async throws {
        let body = RequestBodyStream(Self.body)
        _ = try await provider.request(Remote(base, "/upload", method: .post), body: body)
        let again = await result(Remote(base, "/upload", method: .post), body: body)
        #expect(isNotReplayable(again.error, .alreadySent), "\(again)")
    }

    @Test(
        "The echo of each part is read while the body is still being written: the next part is made only once the last one came back",
        .timeLimit(.minutes(15)))
    func interleaved() async throws {
        let parts = (0..<5).map { Data("part \($0) ".utf8) + Data(repeating: UInt8(65 + $0), count: 1000 * ($0 + 1)) }
        let (chunks, producer) = AsyncStream<Data>.makeStream()
        producer.yield(parts[0])
        // Were the body gathered before it is sent, the server would never see the first part,
        // and the head would never come: the time limit would end the test.
        let response = try await provider.stream(Remote(base, "/echo-parts", method: .post), body: RequestBodyStream(chunks))
        #expect(response.statusCode == 200)
        var received = Data()
        var made = 1
        for try await data in response.body {
            received.append(data)
            if received.count == parts[0..<made].reduce(0, { $0 + $1.count }) {
                if made < parts.count {
                    producer.yield(parts[made])
                    made += 1
                } else {
                    producer.finish()
                }
            }
        }
        #expect(received == parts.reduce(Data(), +))
        #expect(server.receivedRequests.last?.bodyLength == received.count)
    }

    @Test("Cancelling the calling task stops reading the sequence and releases its iterator")
    func cancellation() async throws {
        let endless = EndlessChunks()
        let upload = _Concurrency.Task {
            await result(Remote(base, "/upload", method: .post), body: RequestBodyStream(endless))
        }
        #expect(await endless.running.wait())
        upload.cancel()
        #expect(await upload.value.error?.isCancelled == true)
        #expect(await endless.released.wait())
        let count = endless.produced.value
        // Time is the behaviour under test: a "nothing more happens" window, no chunk is asked for once the iterator is gone.
        try await _Concurrency.Task.sleep(for: .milliseconds(200))
        #expect(endless.produced.value == count)
    }
}
