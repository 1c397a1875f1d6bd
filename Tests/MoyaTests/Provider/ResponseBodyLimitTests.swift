import Foundation
import MoyaTestServer
import NIOCore
import NIOHTTP1
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session.Configuration.maximumResponseBodySize`: a response body over the limit fails the
/// request with one clear error, early, and is never held in memory.
@Suite("The maximum response body size")
struct ResponseBodyLimitTests {
    let server: TestServer
    var base: URL { server.baseURL }
    static let mebibyte = 1 << 20

    init() async throws {
        server = try await TestServer.start()
    }

    /// A provider on `session`, with nothing else taking part, or with a plugin (whose `process`
    /// and `didReceive` then see the failure too).
    private func provider(_ session: Session, general: Bool) -> MoyaProvider<Remote> {
        MoyaProvider<Remote>(session: session, plugins: general ? [RecordingPlugin()] : [])
    }

    private func limitedSession(_ limit: Int64?) -> Session {
        Session(configuration: .init(timeoutIntervalForRequest: 20, maximumResponseBodySize: limit))
    }

    private func bodyTooLarge(_ result: Result<Moya.Response, MoyaError>) -> (limit: Int64, announced: Int64?)? {
        guard case .underlying(let error as SessionError, nil)? = result.error,
            case .responseBodyTooLarge(let limit, let announced) = error
        else {
            return nil
        }
        return (limit, announced)
    }

    @Test("The default limit is 100 MiB; nil means no limit")
    func defaultLimit() {
        #expect(Session.Configuration().maximumResponseBodySize == Int64(100 * 1024 * 1024))
        #expect(Session.Configuration.default.maximumResponseBodySize == Session.Configuration.defaultMaximumResponseBodySize)
        #expect(Session.Configuration(maximumResponseBodySize: nil).maximumResponseBodySize == nil)
        #expect(Session.Configuration(URLSessionConfiguration.default).maximumResponseBodySize == Int64(100 * 1024 * 1024))
    }

    @Test(
        "A body streamed without Content-Length past the limit stops the transfer at once, keeping no more than the limit",
        arguments: [false, true])
    func streamedOverLimit(general: Bool) async throws {
        let session = limitedSession(Int64(Self.mebibyte))
        // 64 MiB in 64 KiB chunks, one every 10 ms: the whole body would take over 10 seconds.
        let url = try #require(URL(string: "\(base.absoluteString)/bytes/\(64 * Self.mebibyte)?length=false&chunk=65536&interval_ms=10"))
        let slowTarget = Remote(url, "")
        let progress = Recorder<Int64>()
        let result: Result<Moya.Response, MoyaError>
        if general {
            // The progress block sees every byte the transport kept.
            result = await send(provider(session, general: true), slowTarget, progress: { progress.append($0.progressObject?.completedUnitCount ?? 0) })
        } else {
            result = await send(provider(session, general: false), slowTarget)
        }
        let failure = try #require(bodyTooLarge(result), "expected responseBodyTooLarge, got \(result)")
        #expect(failure.limit == Int64(Self.mebibyte))
        #expect(failure.announced == nil)
        // No time bound: the failure itself shows the transfer stopped at the limit, since the
        // whole body would have been a success; a time bound would only measure the machine's load.
        #expect((progress.values.max() ?? 0) <= Int64(Self.mebibyte))
        #expect(result.error?.localizedDescription.contains("\(Self.mebibyte) bytes") == true)
        try await session.shutdown()
    }

    @Test("A Content-Length over the limit fails when the head arrives, before any of the body", arguments: [false, true])
    func announcedOverLimit(general: Bool) async throws {
        let session = limitedSession(99)
        // The route announces 100 bytes and never sends them: only the head can end the request.
        let result = await send(provider(session, general: general), Remote(base, "/headers-only-then-hang"))
        let failure = try #require(bodyTooLarge(result), "expected responseBodyTooLarge, got \(result)")
        #expect(failure.limit == 99)
        #expect(failure.announced == 100)

        let large = await send(provider(session, general: general), Remote(base, "/bytes/\(2 * Self.mebibyte)"))
        #expect(bodyTooLarge(large)?.announced == Int64(2 * Self.mebibyte))
        try await session.shutdown()
    }

    @Test("A body exactly at the limit is delivered whole, with or without Content-Length", arguments: [false, true])
    func exactlyAtLimit(general: Bool) async throws {
        let session = limitedSession(Int64(Self.mebibyte))
        let provider = provider(session, general: general)
        for length in ["true", "false"] {
            let url = URL(string: "\(base.absoluteString)/bytes/\(Self.mebibyte)?length=\(length)&chunk=100000")!
            let result = await send(provider, Remote(url, ""))
            let response = try result.get()
            #expect(response.data.count == Self.mebibyte)
            #expect(response.data.prefix(300) == Data((0..<300).map { UInt8($0 % 251) }))
            let over = URL(string: "\(base.absoluteString)/bytes/\(Self.mebibyte + 1)?length=\(length)&chunk=100000")!
            #expect(bodyTooLarge(await send(provider, Remote(over, ""))) != nil, "one byte over, length=\(length)")
        }
        try await session.shutdown()
    }

    @Test("No limit, HEAD requests and downloads to file are not limited")
    func notLimited() async throws {
        let unlimited = limitedSession(nil)
        let big = Remote(base, "/bytes/\(2 * Self.mebibyte)")
        #expect(try await send(MoyaProvider<Remote>(session: unlimited), big).get().data.count == 2 * Self.mebibyte)

        let limited = limitedSession(Int64(Self.mebibyte))
        let provider = MoyaProvider<Remote>(session: limited)
        // A HEAD response announces the body it does not send.
        let head = try await send(provider, Remote(base, "/bytes/\(2 * Self.mebibyte)", method: .head)).get()
        #expect(head.statusCode == 200)

        let directory = try TemporaryDirectory()
        let file = directory.file("big.bin")
        let download = Remote(base, "/bytes/\(2 * Self.mebibyte)", task: .downloadDestination { _, _ in (file, []) })
        #expect(try await send(provider, download).get().statusCode == 200)
        #expect(try Data(contentsOf: file).count == 2 * Self.mebibyte)
        try await unlimited.shutdown()
        try await limited.shutdown()
    }

    @Test("The collector keeps a body larger than one buffer in several, whole and in order, and fails past its limit")
    func collectorSegments() throws {
        var collector = ResponseCollector(limit: nil, segmentSize: 2500)
        collector.visited(URL(string: "http://example.com")!, method: .GET)
        #expect(collector.receivedHead(HTTPResponseHead(version: .http1_1, status: .ok)) == nil)
        for index in 0..<10 {
            let part = ByteBufferAllocator().buffer(bytes: [UInt8](repeating: UInt8(index), count: 1000))
            #expect(collector.receivedBodyPart(part) == nil)
        }
        #expect(collector.received == 10_000)
        let data = try collector.response().data
        #expect(data == Data((0..<10).flatMap { [UInt8](repeating: UInt8($0), count: 1000) }))

        var limited = ResponseCollector(limit: 1500)
        limited.visited(URL(string: "http://example.com")!, method: .GET)
        let part = ByteBufferAllocator().buffer(bytes: [UInt8](repeating: 7, count: 1000))
        #expect(limited.receivedBodyPart(part) == nil)
        #expect(limited.receivedBodyPart(part) == .responseBodyTooLarge(limit: 1500, announcedLength: nil))
        #expect(limited.received == 1000)

        // An announced length is checked without arithmetic that could overflow.
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "Content-Length", value: "\(Int64.max)")
        var unlimited = ResponseCollector(limit: nil)
        unlimited.visited(URL(string: "http://example.com")!, method: .GET)
        #expect(unlimited.receivedHead(head) == nil)
        var capped = ResponseCollector(limit: 10)
        capped.visited(URL(string: "http://example.com")!, method: .GET)
        #expect(capped.receivedHead(head) == .responseBodyTooLarge(limit: 10, announcedLength: Int64.max))
        capped.visited(URL(string: "http://example.com")!, method: .HEAD)
        #expect(capped.receivedHead(head) == nil)
    }

    @Test("A truncating collector (the error body of a download or a stream) keeps the first bytes up to its limit and never fails")
    func collectorTruncates() throws {
        var collector = ResponseCollector(limit: 1500, overflow: .truncates)
        collector.visited(URL(string: "http://example.com")!, method: .GET)
        var head = HTTPResponseHead(version: .http1_1, status: .notFound)
        head.headers.add(name: "Content-Length", value: "4000")
        #expect(collector.receivedHead(head) == nil)
        for index in 0..<4 {
            let part = ByteBufferAllocator().buffer(bytes: [UInt8](repeating: UInt8(index), count: 1000))
            #expect(collector.receivedBodyPart(part) == nil)
        }
        #expect(collector.received == 1500)
        let response = try collector.response()
        #expect(response.statusCode == 404)
        #expect(response.data == Data([UInt8](repeating: 0, count: 1000) + [UInt8](repeating: 1, count: 500)))
    }
}
