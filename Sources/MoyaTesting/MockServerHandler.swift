import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The per-connection (or, over HTTP/2, per-stream) handler of a ``MockServer``: collects each
/// request, records it, asks the script for its answer and writes that answer, with its delays
/// and faults.
///
/// All state is confined to the channel's event loop; timers and write completions re-enter
/// through `assumeIsolated()`, so nothing here needs to be `Sendable`.
final class MockServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// What every handler of one server shares.
    struct Settings: Sendable {
        let script: ResponseScript
        let journal: RequestJournal<MockRequest>
        let maximumRecordedBodySize: Int
        /// Unscripted requests go on to the next handler instead of getting a `404`.
        let forwardsUnscripted: Bool
    }

    private struct Collecting {
        var head: HTTPRequestHead
        var arrivedAt: ContinuousClock.Instant
        var receivedAt: Date
        var body: Data
        var length: Int
    }

    private enum State {
        case idle
        case collecting(Collecting)
        /// The request goes to the next handler, part by part.
        case forwarding
        /// The request was recorded; its response is being made or written.
        case responding
    }

    private let settings: Settings
    private var state: State = .idle
    private var isActive = true
    private var timers: [Scheduled<Void>] = []

    init(settings: Settings) {
        self.settings = settings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        switch (self.state, part) {
        case (.forwarding, .end):
            self.state = .idle
            context.fireChannelRead(data)
        case (.forwarding, _):
            context.fireChannelRead(data)
        case (_, .head(let head)):
            if self.settings.forwardsUnscripted && !self.settings.script.hasAnswer(method: head.method.rawValue, path: Self.path(of: head.uri)) {
                self.state = .forwarding
                context.fireChannelRead(data)
                return
            }
            self.state = .collecting(Collecting(head: head, arrivedAt: .now, receivedAt: Date(), body: Data(), length: 0))
        case (.collecting(var request), .body(let buffer)):
            request.length += buffer.readableBytes
            let room = self.settings.maximumRecordedBodySize - request.body.count
            if room > 0 {
                request.body.append(contentsOf: buffer.readableBytesView.prefix(room))
            }
            self.state = .collecting(request)
        case (.collecting(let request), .end):
            self.state = .responding
            self.respond(to: request, context: context)
        default:
            // Body or end without a head: the HTTP decoder never delivers that.
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    private func stop() {
        self.isActive = false
        for timer in self.timers { timer.cancel() }
        self.timers.removeAll()
    }

    /// The request's path, without its query.
    static func path(of uri: String) -> String {
        uri.firstIndex(of: "?").map { String(uri[..<$0]) } ?? uri
    }

    private static func versionName(_ version: HTTPVersion) -> String {
        version.major == 2 ? "HTTP/2" : "HTTP/\(version.major).\(version.minor)"
    }

    // MARK: Answering

    private func respond(to collected: Collecting, context: ChannelHandlerContext) {
        let head = collected.head
        let request = MockRequest(
            number: self.settings.journal.nextNumber(),
            method: head.method.rawValue,
            uri: head.uri,
            headers: head.headers.map { ($0.name, $0.value) },
            body: collected.body,
            bodyLength: collected.length,
            httpVersion: Self.versionName(head.version),
            arrivedAt: collected.arrivedAt,
            receivedAt: collected.receivedAt
        )
        let decision = self.settings.script.decide(method: request.method, path: request.path)
        guard case .respond(let responder) = decision else {
            self.settings.journal.record(request, answered: false)
            let text =
                "MockServer: nothing was scripted for \(request.method) \(request.path) (no route matched, the queue is empty and there is no default response)\n"
            self.write(.text(text, status: 404), for: head, context: context)
            return
        }
        self.settings.journal.record(request, answered: true)
        switch responder {
        case .fixed(let response):
            self.write(response, for: head, context: context)
        case .handler(let handler):
            let promise = context.eventLoop.makePromise(of: MockResponse.self)
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                // On the server's own loop: tests that keep the cooperative pool busy do not
                // delay the answer (see `EventLoopTaskExecutor`).
                let executor = EventLoopTaskExecutor(context.eventLoop)
                Task(executorPreference: executor) {
                    do {
                        promise.succeed(try await handler(request))
                    } catch {
                        promise.fail(error)
                    }
                    // The task holds the executor until the handler has returned, whether or not
                    // the runtime retains a preference.
                    withExtendedLifetime(executor) {}
                }
            } else {
                promise.completeWithTask { try await handler(request) }
            }
            promise.futureResult.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let response):
                    self.write(response, for: head, context: context)
                case .failure(let error):
                    self.write(.text("MockServer: the route's handler threw: \(error)\n", status: 500), for: head, context: context)
                }
            }
        }
    }

    /// Runs `body` after `delay` on the event loop, unless the connection has gone.
    private func after(_ delay: Duration, context: ChannelHandlerContext, _ body: @escaping () -> Void) {
        guard self.isActive else { return }
        if delay <= .zero {
            body()
            return
        }
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
            guard self.isActive else { return }
            body()
        }
        self.timers.append(timer)
    }

    private func write(_ response: MockResponse, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        if response.fault == .closeBeforeResponse {
            context.close(promise: nil)
            return
        }
        if response.fault == .stall(afterBytes: nil) {
            return
        }
        self.after(response.delayBeforeHead, context: context) {
            self.writeHead(response, for: request, context: context)
        }
    }

    private func writeHead(_ response: MockResponse, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        let isHEAD = request.method == .HEAD
        let body = response.bodyBytes
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        var pieces = response.chunks ?? [response.body]
        let isHTTP2 = request.version.major == 2
        switch response.fault {
        case .resetMidBody(let afterBytes), .stall(.some(let afterBytes)):
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            pieces = [body.prefix(max(0, afterBytes))]
        case .wrongContentLength(let declared):
            headers.replaceOrAdd(name: "Content-Length", value: String(declared))
            pieces = [body]
        case .closeBeforeResponse, .stall(nil), nil:
            if !headers.contains(name: "Content-Length") && !headers.contains(name: "Transfer-Encoding") {
                if response.chunks == nil || isHTTP2 {
                    if response.chunks == nil || isHEAD { headers.add(name: "Content-Length", value: String(body.count)) }
                } else {
                    headers.add(name: "Transfer-Encoding", value: "chunked")
                }
            }
        }
        let keepAlive = request.isKeepAlive && response.fault == nil
        if !isHTTP2 && !keepAlive && request.version.major == 1 {
            headers.replaceOrAdd(name: "Connection", value: "close")
        }
        let head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if isHEAD { pieces = [] }
        self.writePieces(pieces[...], first: true, response: response, keepAlive: keepAlive, context: context)
    }

    private func writePieces(_ pieces: ArraySlice<Data>, first: Bool, response: MockResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        guard let piece = pieces.first else {
            self.finish(response, keepAlive: keepAlive, context: context)
            return
        }
        let send = {
            guard self.isActive else { return }
            let written: EventLoopFuture<Void>
            if piece.isEmpty {
                // An empty chunk would end a chunked body early.
                context.flush()
                written = context.eventLoop.makeSucceededVoidFuture()
            } else {
                written = context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: piece)))))
            }
            written.assumeIsolated().whenComplete { result in
                guard case .success = result else { return }
                self.writePieces(pieces.dropFirst(), first: false, response: response, keepAlive: keepAlive, context: context)
            }
        }
        if first {
            send()
        } else {
            self.after(response.delayBetweenChunks, context: context, send)
        }
    }

    private func finish(_ response: MockResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        switch response.fault {
        case .stall:
            context.flush()
        case .resetMidBody:
            context.flush()
            let socket = context.channel.parent?.parent != nil ? context.channel.parent! : context.channel
            // SO_LINGER with a zero timeout makes close() send a reset instead of a FIN.
            if let options = socket as? any SocketOptionProvider {
                options.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
                    socket.close(promise: nil)
                }
            } else {
                socket.close(promise: nil)
            }
        case .wrongContentLength:
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .closeBeforeResponse, nil:
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                self.state = .idle
                if !keepAlive && context.channel.parent?.parent == nil {
                    context.close(promise: nil)
                }
            }
        }
    }
}
