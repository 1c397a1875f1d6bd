import Foundation
import MoyaTestServer
import MoyaTesting
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``EarlyResponseEndHandler`` on a channel of its own: what reaches the handler after it
/// (AsyncHTTPClient's, on a real connection) and what is written, step by step; then against a
/// server that answers before the body's end and hangs up right after.
@Suite("A success that ends during the upload reaches AsyncHTTPClient after the body's end")
struct EarlyResponseEndHandlerTests {
    /// A channel with the handler, after which `reads` collects what it passes on.
    final class Pipeline {
        let channel = EmbeddedChannel()
        let reads = ReadCollector()

        init(removesFieldOnly: Bool = false) throws {
            try channel.pipeline.syncOperations.addHandler(EarlyResponseEndHandler(removesFieldOnly: removesFieldOnly))
            try channel.pipeline.syncOperations.addHandler(reads)
        }

        /// Writes `part` as the handler after this one (AsyncHTTPClient's) would.
        func write(_ part: HTTPClientRequestPart) throws {
            try channel.writeOutbound(part)
        }

        /// A part from the server.
        func read(_ part: HTTPClientResponsePart) throws {
            try channel.writeInbound(part)
        }

        /// The names of the parts passed on so far, in order (`head 200`, `body`, `end`).
        var passedOn: [String] { reads.parts }

        /// Closes the channel: an unfinished `EmbeddedChannel` and its pipeline keep each other
        /// alive (LeakSanitizer reports them).
        func finish() {
            _ = try? channel.finish(acceptAlreadyClosed: true)
        }

        /// The heads written to the connection.
        func writtenHead() throws -> HTTPRequestHead? {
            while let part = try channel.readOutbound(as: HTTPClientRequestPart.self) {
                if case .head(let head) = part { return head }
            }
            return nil
        }
    }

    /// Records the inbound parts and read-completes that reach it, and the reads it asks for.
    final class ReadCollector: ChannelDuplexHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = Never
        private(set) var parts: [String] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): parts.append("head \(head.status.code)")
            case .body: parts.append("body")
            case .end: parts.append("end")
            }
        }
    }

    static let upload = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/up", headers: ["Content-Length": "4"])

    static func head(_ status: HTTPResponseStatus, _ headers: NIOHTTP1.HTTPHeaders = ["Content-Length": "2"]) -> HTTPClientResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))
    }

    static var body: HTTPClientResponsePart { .body(ByteBuffer(string: "ok")) }

    @Test("A success's end during the upload is held until the body's end is written, then passed on")
    func holdsUntilTheBodyEnds() throws {
        let pipeline = try Pipeline()
        defer { pipeline.finish() }
        try pipeline.write(.head(Self.upload))
        try pipeline.write(.body(.byteBuffer(ByteBuffer(string: "ab"))))
        try pipeline.read(Self.head(.ok))
        try pipeline.read(Self.body)
        try pipeline.read(.end(nil))
        #expect(pipeline.passedOn == ["head 200", "body"], "the end waits for the body's")
        try pipeline.write(.body(.byteBuffer(ByteBuffer(string: "cd"))))
        try pipeline.write(.end(nil))
        #expect(pipeline.passedOn == ["head 200", "body"], "not within the end's write")
        pipeline.channel.embeddedEventLoop.run()
        #expect(pipeline.passedOn == ["head 200", "body", "end"])
    }

    @Test("A response to a request sent whole passes as it comes")
    func passesAfterTheRequest() throws {
        let pipeline = try Pipeline()
        defer { pipeline.finish() }
        try pipeline.write(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")))
        try pipeline.write(.end(nil))
        try pipeline.read(Self.head(.ok))
        try pipeline.read(Self.body)
        try pipeline.read(.end(nil))
        #expect(pipeline.passedOn == ["head 200", "body", "end"])
    }

    @Test(
        "Not held: a 3xx or more, a success that closes its connection, a full-duplex request's",
        arguments: ["303", "500", "close", "duplex"])
    func notHeld(kind: String) throws {
        let pipeline = try Pipeline()
        defer { pipeline.finish() }
        var upload = Self.upload
        if kind == "duplex" { upload.headers.add(name: EarlyResponseEndHandler.fullDuplexField, value: "1") }
        try pipeline.write(.head(upload))
        switch kind {
        case "303": try pipeline.read(Self.head(.seeOther))
        case "500": try pipeline.read(Self.head(.internalServerError))
        case "close": try pipeline.read(Self.head(.ok, ["Content-Length": "2", "Connection": "close"]))
        default: try pipeline.read(Self.head(.ok))
        }
        try pipeline.read(.end(nil))
        #expect(pipeline.passedOn.last == "end")
    }

    @Test("The full-duplex mark is never sent, on HTTP/1 and HTTP/2", arguments: [false, true])
    func removesTheMark(http2: Bool) throws {
        let pipeline = try Pipeline(removesFieldOnly: http2)
        defer { pipeline.finish() }
        var upload = Self.upload
        upload.headers.add(name: EarlyResponseEndHandler.fullDuplexField, value: "1")
        try pipeline.write(.head(upload))
        let written = try #require(try pipeline.writtenHead())
        #expect(!written.headers.contains(name: EarlyResponseEndHandler.fullDuplexField))
        #expect(written.headers["Content-Length"] == ["4"])
    }

    @Test("An HTTP/2 stream holds nothing")
    func http2HoldsNothing() throws {
        let pipeline = try Pipeline(removesFieldOnly: true)
        defer { pipeline.finish() }
        try pipeline.write(.head(Self.upload))
        try pipeline.read(Self.head(.ok))
        try pipeline.read(.end(nil))
        #expect(pipeline.passedOn == ["head 200", "end"])
    }

    @Test("A close delivers the held end first, then what was read after it, in order")
    func closeDeliversTheHeldEnd() throws {
        let pipeline = try Pipeline()
        defer { pipeline.finish() }
        try pipeline.write(.head(Self.upload))
        try pipeline.read(Self.head(.ok))
        try pipeline.read(.end(nil))
        try pipeline.read(Self.head(.ok))
        #expect(pipeline.passedOn == ["head 200"])
        pipeline.channel.pipeline.fireChannelInactive()
        #expect(pipeline.passedOn == ["head 200", "end", "head 200"])
    }

    @Test("No read is asked of the connection while an end is held; the one asked meanwhile follows its delivery")
    func readsWait() throws {
        let pipeline = try Pipeline()
        defer { pipeline.finish() }
        let reads = ReadCounter()
        try pipeline.channel.pipeline.syncOperations.addHandler(reads, position: .first)
        try pipeline.write(.head(Self.upload))
        try pipeline.read(Self.head(.ok))
        try pipeline.read(.end(nil))
        let before = reads.count
        pipeline.channel.read()
        #expect(reads.count == before, "held: no read")
        try pipeline.write(.end(nil))
        pipeline.channel.embeddedEventLoop.run()
        #expect(reads.count == before + 1)
    }

    /// Counts the reads asked of the connection.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        private(set) var count = 0

        func read(context: ChannelHandlerContext) {
            count += 1
            context.read()
        }
    }

    @Test("A full-duplex stream's mark never reaches the server, on HTTP/1.1 and HTTP/2", arguments: [false, true])
    func markNeverSent(http2: Bool) async throws {
        var configuration = MockServer.Configuration.https
        configuration.offersHTTP2 = http2
        let server = try await MockServer.start(configuration)
        server.route("/echo") { request in .text("\(request.body.count)") }
        let session = Session(configuration: .init(timeoutIntervalForRequest: 60, tls: .mockServer))
        let provider = MoyaProvider<Remote>(session: session)
        let body = RequestBodyStream(
            AsyncStream<Data> { producer in
                producer.yield(Data(repeating: UInt8(ascii: "a"), count: 1000))
                producer.finish()
            })
        let response = try await provider.stream(Remote(server.baseURL, "/echo", method: .post), body: body)
        var received = Data()
        for try await part in response.body { received.append(part) }
        try await session.shutdown()
        #expect(String(decoding: received, as: UTF8.self) == "1000")
        let request = try #require(server.requests.last)
        #expect(request.httpVersion == (http2 ? "HTTP/2" : "HTTP/1.1"))
        #expect(request.header(EarlyResponseEndHandler.fullDuplexField) == nil, "\(request.headers)")
        await server.shutdown()
    }

    /// Without the handler, AsyncHTTPClient 1.37 gave such a connection back to its pool after the
    /// pool had dropped it, and stopped the process ("A connection that we don't know was
    /// released?"): in a rehearsal without it, 400 requests stopped it in two runs of four. So
    /// the failure this guards against is a crash of the test process, not a failed expectation.
    @Test("A server that answers before the body's end and hangs up right after: 2,000 requests, each a response or a clear error")
    func answerThenClose() async throws {
        let server = try await FaultServer.start()
        let session = Session(configuration: .init(timeoutIntervalForConnect: 5, timeoutIntervalForRequest: 60))
        let provider = MoyaProvider<Remote>(session: session)
        let target = Remote(server.url(for: .answerThenClose), "", method: .post, task: .requestData(Data(count: 64 << 10)))
        var answered = 0
        for _ in 0..<500 {
            let results = await withTaskGroup(of: Result<Moya.Response, MoyaError>.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        do throws(MoyaError) {
                            return .success(try await provider.request(target))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                switch result {
                case .success(let response):
                    #expect(response.statusCode == 200 && response.data == Data("ok".utf8))
                    answered += 1
                case .failure(let error):
                    // The connection closed under the upload: reported as such.
                    #expect((error.underlyingError as? URLError)?.code == .networkConnectionLost, "\(error)")
                }
            }
        }
        #expect(answered > 0)
        try await session.shutdown()
        await server.shutdown()
    }
}
