import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// The per-connection HTTP handler of ``TestServer``: reads requests, records them and dispatches
/// them to the routes (see `TestServerHandler+Routes.swift`).
///
/// All state is confined to the connection's event loop; callbacks that re-enter the handler use
/// `assumeIsolated()` futures/timers, so nothing here needs to be `Sendable`.
final class TestServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Buffered routes keep at most this many body bytes; larger bodies get `413`.
    static let maximumBufferedBodySize = 64 * 1024 * 1024

    /// A request whose body is being collected in memory.
    struct BufferedRequest {
        var head: HTTPRequestHead
        var target: RequestTarget
        var route: Route
        var body: ByteBuffer
        var length: Int
    }

    /// A request whose body is hashed while it streams in (`/upload`).
    struct StreamingUpload {
        var head: HTTPRequestHead
        var target: RequestTarget
        var hasher: SHA256
        var length: Int
    }

    /// A `/bytes` download in progress.
    struct ByteStream {
        var remaining: Int
        var offset: Int
        var chunkSize: Int
        var intervalMilliseconds: Int
        var keepAlive: Bool
        /// `chunkSize + 251` pattern bytes; chunks are zero-copy slices of it.
        var pattern: ByteBuffer
        var waitingForTimer: Bool
    }

    private enum RequestState {
        case idle
        case buffering(BufferedRequest)
        case uploading(StreamingUpload)
        /// `/echo-parts`: each body part is written back as it arrives.
        case echoingParts(head: HTTPRequestHead, target: RequestTarget, length: Int)
        /// `/answer-ends-first`: the body is counted, after the response; the request is recorded at
        /// its end.
        case countingAfterAnswer(head: HTTPRequestHead, target: RequestTarget, length: Int)
        /// The connection is being torn down on purpose (`/drop`, `/malformed`); ignore input.
        case discarding
    }

    let log: RequestLog
    /// The `/endless` counters shared by all connections of the server.
    let endlessCounters: EndlessResponseCounters
    private var requestState: RequestState = .idle
    /// The `/bytes` stream currently being written, if any.
    var byteStream: ByteStream?
    /// Guards against re-entrant pumping (flushes can trigger writability changes).
    private var isPumping = false
    /// The `/replay` or `/events` response currently being written, if any.
    var scriptedResponse: ScriptedResponse?
    /// Guards against re-entrant pumping of ``scriptedResponse`` (a write can complete inside
    /// the flush that started it).
    var isPumpingScriptedResponse = false
    /// The `/endless` body currently being written, if any.
    var endlessBody: EndlessBody?
    /// Guards against re-entrant pumping of ``endlessBody``.
    var isPumpingEndlessBody = false
    /// This connection started an `/endless` response that ``endlessCounters`` counts as open.
    var countsAsOpenEndlessResponse = false
    /// Pending timers (`/delay`, `/bytes` intervals), cancelled when the connection goes away.
    var scheduledTasks: [Scheduled<Void>] = []
    /// `false` once the channel went inactive or the handler was removed.
    var isActive = true

    init(log: RequestLog, endlessCounters: EndlessResponseCounters) {
        self.log = log
        self.endlessCounters = endlessCounters
    }

    // MARK: - Inbound events

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.receivedHead(head, context: context)
        case .body(var buffer):
            switch self.requestState {
            case .buffering(var request):
                self.requestState = .idle  // drop our reference so the buffer is not copied on write
                request.length += buffer.readableBytes
                if request.length <= Self.maximumBufferedBodySize {
                    request.body.writeBuffer(&buffer)
                }
                self.requestState = .buffering(request)
            case .uploading(var upload):
                self.requestState = .idle
                upload.length += buffer.readableBytes
                buffer.withUnsafeReadableBytes { upload.hasher.update(bufferPointer: $0) }
                self.requestState = .uploading(upload)
            case .countingAfterAnswer(let head, let target, let length):
                self.requestState = .countingAfterAnswer(head: head, target: target, length: length + buffer.readableBytes)
            case .echoingParts(let head, let target, let length):
                self.requestState = .echoingParts(head: head, target: target, length: length + buffer.readableBytes)
                if self.isActive {
                    context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                }
            case .idle, .discarding:
                break
            }
        case .end:
            switch self.requestState {
            case .buffering(let request):
                self.requestState = .idle
                self.record(head: request.head, target: request.target, bodyLength: request.length)
                if request.length > Self.maximumBufferedBodySize {
                    let response = TestResponse.json(
                        ["error": "body too large for a buffered route"],
                        status: .payloadTooLarge
                    )
                    self.send(response, for: request.head, context: context)
                } else {
                    self.handle(request, context: context)
                }
            case .uploading(let upload):
                self.requestState = .idle
                self.record(head: upload.head, target: upload.target, bodyLength: upload.length)
                let headers = upload.head.headers
                let body: [String: Any] = [
                    "length": upload.length,
                    "sha256": HexDigest.hex(upload.hasher.finalize()),
                    "contentType": TestResponse.nullable(headers.first(name: "content-type")),
                    "contentLength": TestResponse.nullable(headers.first(name: "content-length")),
                    "transferEncoding": TestResponse.nullable(headers.first(name: "transfer-encoding")),
                ]
                self.send(.json(body), for: upload.head, context: context)
            case .countingAfterAnswer(let head, let target, let length):
                self.requestState = .idle
                self.record(head: head, target: target, bodyLength: length)
            case .echoingParts(let head, let target, let length):
                self.requestState = .idle
                self.record(head: head, target: target, bodyLength: length)
                if self.isActive {
                    self.finishResponse(keepAlive: head.isKeepAlive, context: context)
                }
            case .idle, .discarding:
                break
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable && self.byteStream != nil {
            self.pumpByteStream(context: context)
        }
        if context.channel.isWritable && self.endlessBody != nil {
            self.pumpEndlessBody(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.tearDown()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.tearDown()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Connection-level errors (e.g. resets by the client): just get rid of the connection.
        self.tearDown()
        context.close(promise: nil)
    }

    private func tearDown() {
        self.isActive = false
        self.byteStream = nil
        self.scriptedResponse = nil
        self.endlessBody = nil
        if self.countsAsOpenEndlessResponse {
            self.countsAsOpenEndlessResponse = false
            self.endlessCounters.responseClosed()
        }
        for task in self.scheduledTasks {
            task.cancel()
        }
        self.scheduledTasks.removeAll()
    }

    // MARK: - Request handling

    private func receivedHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let target = RequestTarget(uri: head.uri)
        let route = Route(segments: target.pathSegments)

        switch route {
        case .drop:
            self.record(head: head, target: target, bodyLength: 0)
            self.requestState = .discarding
            context.close(promise: nil)
            return
        case .malformed:
            self.record(head: head, target: target, bodyLength: 0)
            self.requestState = .discarding
            self.writeRawAndClose(Array("this is not HTTP\r\n\r\n".utf8), context: context)
            return
        case .answerAtOnce:
            // The whole answer before any of the body; the body is read and dropped, or, with
            // `stop_reading=true`, not read at all (the connection stays open).
            self.record(head: head, target: target, bodyLength: 0)
            self.requestState = .discarding
            self.send(.text("early"), for: head, context: context)
            if target.value("stop_reading") == "true" {
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            }
            return
        case .answerEndsFirst:
            self.requestState = .countingAfterAnswer(head: head, target: target, length: 0)
            self.answerEndingFirst(head, target: target, context: context)
            return
        case .stopReading:
            // Reads nothing more from the connection and never answers: once the socket buffers
            // are full, the client cannot send another byte of its body.
            self.record(head: head, target: target, bodyLength: 0)
            self.requestState = .discarding
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            return
        default:
            break
        }

        if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            let interim = HTTPResponseHead(version: head.version, status: .continue)
            context.writeAndFlush(self.wrapOutboundOut(.head(interim)), promise: nil)
        }

        if route == .upload {
            self.requestState = .uploading(StreamingUpload(head: head, target: target, hasher: SHA256(), length: 0))
        } else if route == .echoParts {
            // The head goes at once, before any of the body has arrived: the client reads the
            // response while it is still sending its request.
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/octet-stream")
            self.applyConnectionHeaders(&headers, for: head, keepAlive: head.isKeepAlive)
            context.writeAndFlush(self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
            self.requestState = .echoingParts(head: head, target: target, length: 0)
        } else {
            let body = context.channel.allocator.buffer(capacity: 0)
            self.requestState = .buffering(BufferedRequest(head: head, target: target, route: route, body: body, length: 0))
        }
    }

    private func record(head: HTTPRequestHead, target: RequestTarget, bodyLength: Int) {
        self.log.append(
            TestServer.RecordedRequest(
                method: head.method.rawValue,
                uri: head.uri,
                path: target.path,
                query: target.query,
                headers: head.headers.map { (name: $0.name, value: $0.value) },
                bodyLength: bodyLength
            )
        )
    }

    // MARK: - Writing responses

    /// Adds `Connection` headers matching the keep-alive decision for `head`'s HTTP version.
    func applyConnectionHeaders(_ headers: inout HTTPHeaders, for head: HTTPRequestHead, keepAlive: Bool) {
        headers.remove(name: "connection")
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if head.version.major == 1 && head.version.minor == 0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
    }

    /// Writes a complete buffered response with a correct `Content-Length`.
    func send(_ response: TestResponse, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        var headers = response.headers
        let keepAlive = head.isKeepAlive
        self.applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        // 1xx/204/304 have no body (the encoder strips framing headers); 205 must be empty too.
        let hasBody = response.status.mayHaveResponseBody && response.status != .resetContent
        if !hasBody {
            headers.remove(name: "content-type")
        }
        if response.status == .resetContent {
            headers.replaceOrAdd(name: "Content-Length", value: "0")
        } else if hasBody {
            headers.replaceOrAdd(name: "Content-Length", value: String(response.body.count))
        }
        let responseHead = HTTPResponseHead(version: head.version, status: response.status, headers: headers)
        context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)
        if hasBody && head.method != .HEAD && !response.body.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: response.body)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        self.finishResponse(keepAlive: keepAlive, context: context)
    }

    /// Writes the response `.end` and closes the connection afterwards unless it is kept alive.
    func finishResponse(keepAlive: Bool, context: ChannelHandlerContext) {
        let written = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    /// Writes `bytes` straight to the socket, bypassing the HTTP encoder, then closes.
    func writeRawAndClose(_ bytes: [UInt8], context: ChannelHandlerContext) {
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        do {
            // Writing from the encoder's context sends the bytes to the handlers before it,
            // i.e. directly to the socket.
            let encoderContext = try context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
            encoderContext.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        } catch {
            context.close(promise: nil)
        }
    }

    /// Schedules `body` on the event loop after `delay`; the task is cancelled if the
    /// connection goes away first, and never runs after that.
    func schedule(in delay: TimeAmount, context: ChannelHandlerContext, _ body: @escaping () -> Void) {
        let scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            guard self.isActive else { return }
            body()
        }
        self.scheduledTasks.append(scheduled)
        // Forget the task once it ran or was cancelled, so long-lived connections don't accumulate them.
        scheduled.futureResult.assumeIsolated().whenComplete { [self] _ in
            self.scheduledTasks.removeAll { $0.futureResult === scheduled.futureResult }
        }
    }

    // MARK: - Streaming downloads

    /// Writes `/bytes` chunks while the channel is writable; resumes from
    /// `channelWritabilityChanged` or the interval timer.
    func pumpByteStream(context: ChannelHandlerContext) {
        guard !self.isPumping else { return }
        self.isPumping = true
        defer { self.isPumping = false }

        while var stream = self.byteStream {
            guard self.isActive, context.channel.isActive else {
                self.byteStream = nil
                return
            }
            if stream.waitingForTimer {
                return
            }
            if stream.remaining == 0 {
                self.byteStream = nil
                self.finishResponse(keepAlive: stream.keepAlive, context: context)
                return
            }
            if !context.channel.isWritable {
                context.flush()
                if context.channel.isWritable {
                    continue
                }
                return  // channelWritabilityChanged will resume us
            }

            let length = min(stream.chunkSize, stream.remaining)
            let start = stream.pattern.readerIndex + stream.offset % 251
            let chunk = stream.pattern.getSlice(at: start, length: length)!
            stream.offset += length
            stream.remaining -= length
            context.write(self.wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)

            if stream.intervalMilliseconds > 0 && stream.remaining > 0 {
                context.flush()
                stream.waitingForTimer = true
                self.byteStream = stream
                self.schedule(in: .milliseconds(Int64(stream.intervalMilliseconds)), context: context) { [self] in
                    self.byteStream?.waitingForTimer = false
                    self.pumpByteStream(context: context)
                }
                return
            }
            self.byteStream = stream
        }
    }
}

@available(*, unavailable)
extension TestServerHandler: Sendable {}
