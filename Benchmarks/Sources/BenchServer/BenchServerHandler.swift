import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP handler of one ``BenchServer`` connection: reads a request, answers it by its
/// route (``BenchRoute``), and streams large bodies without holding them.
///
/// A download is written in slices of one small pattern buffer, and only while the channel is
/// writable; an upload's bytes are counted and dropped as they arrive. Memory therefore stays the
/// same whatever the size of a transfer, which `MoyaMemoryBenchmark`, whose server runs in its
/// own process, relies on. Everything happens on the connection's event loop.
final class BenchServerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// At most this many body bytes are kept for `/echo`; the rest is counted only.
    private static let maximumEchoedBody = 1 << 20

    /// A `/bytes` body being written.
    private struct Download {
        var remaining: Int
        var offset = 0
        let chunkSize: Int
        let keepAlive: Bool
        /// `chunkSize + 251` pattern bytes: every chunk is a slice of it, without a copy.
        let pattern: ByteBuffer
    }

    /// The request being read.
    private var head: HTTPRequestHead?
    private var target = BenchRequestTarget(uri: "/")
    private var body = ByteBuffer()
    private var bodyLength = 0
    private var download: Download?
    /// Guards against pumping ``download`` again from inside a flush.
    private var isPumping = false
    /// A pending `/delay` answer, cancelled when the connection goes away.
    private var delayed: Scheduled<Void>?
    private var isActive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            target = BenchRequestTarget(uri: head.uri)
            body.clear()
            bodyLength = 0
            if head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
        case .body(var buffer):
            bodyLength += buffer.readableBytes
            if target.route == .echo, body.readableBytes < Self.maximumEchoedBody {
                body.writeBuffer(&buffer)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, download != nil {
            pumpDownload(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that reset its connection, or sent something that is not HTTP.
        tearDown()
        context.close(promise: nil)
    }

    private func tearDown() {
        isActive = false
        download = nil
        delayed?.cancel()
        delayed = nil
    }

    // MARK: - Routes

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        switch target.route {
        case .root:
            send(.ok, contentType: "text/plain; charset=utf-8", body: Array("ok".utf8), for: head, context: context)
        case .bytes(let count):
            startDownload(count: count, head: head, context: context)
        case .delay(let milliseconds):
            delayed = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(milliseconds))) { [self] in
                delayed = nil
                guard isActive else { return }
                send(.ok, contentType: "text/plain; charset=utf-8", body: Array("delayed".utf8), for: head, context: context)
            }
        case .echo:
            sendJSON(echo(head), for: head, context: context)
        case .upload:
            let headers = head.headers
            let report: [String: Any] = [
                "length": bodyLength,
                "contentType": headers.first(name: "content-type") ?? NSNull(),
                "contentLength": headers.first(name: "content-length") ?? NSNull(),
                "transferEncoding": headers.first(name: "transfer-encoding") ?? NSNull(),
            ]
            sendJSON(report, for: head, context: context)
        case .responseHeaders:
            var headers = HTTPHeaders()
            for (name, value) in target.queryItems {
                headers.add(name: name, value: value)
            }
            if !headers.contains(name: "content-type") {
                headers.add(name: "Content-Type", value: "application/octet-stream")
            }
            send(.ok, headers: headers, body: Array("response-headers".utf8), for: head, context: context)
        case .notFound:
            sendJSON(["error": "not found"], status: .notFound, for: head, context: context)
        }
    }

    /// What `/echo` answers: the request's method, target, headers and body.
    private func echo(_ head: HTTPRequestHead) -> [String: Any] {
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        let bodyData = Data(body.readableBytesView)
        let query = head.uri.firstIndex(of: "?").map { String(head.uri[head.uri.index(after: $0)...]) }
        return [
            "method": head.method.rawValue,
            "uri": head.uri,
            "path": String(head.uri.prefix { $0 != "?" }),
            "query": query ?? NSNull(),
            "headers": headers,
            "headerList": head.headers.map { [$0.name, $0.value] },
            "body": (bodyData.isEmpty ? nil : String(data: bodyData, encoding: .utf8)) ?? NSNull(),
            "bodyBase64": bodyData.base64EncodedString(),
            "bodyLength": bodyLength,
        ]
    }

    // MARK: - Writing

    private func sendJSON(_ object: Any, status: HTTPResponseStatus = .ok, for head: HTTPRequestHead, context: ChannelHandlerContext) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        send(status, contentType: "application/json", body: Array(data), for: head, context: context)
    }

    private func send(_ status: HTTPResponseStatus, contentType: String, body: [UInt8], for head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        send(status, headers: headers, body: body, for: head, context: context)
    }

    /// Writes a whole response with its `Content-Length`.
    private func send(_ status: HTTPResponseStatus, headers: HTTPHeaders, body: [UInt8], for head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        let keepAlive = head.isKeepAlive
        applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD, !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        finish(keepAlive: keepAlive, context: context)
    }

    private func applyConnectionHeaders(_ headers: inout HTTPHeaders, for head: HTTPRequestHead, keepAlive: Bool) {
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if head.version == .http1_0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
    }

    /// Ends the response, and the connection too unless it is kept alive.
    private func finish(keepAlive: Bool, context: ChannelHandlerContext) {
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    // MARK: - Downloads

    /// Starts `/bytes/<count>[?chunk=16384&length=true]`: with `length=false` the body is
    /// chunked instead of having a `Content-Length`.
    private func startDownload(count: Int, head: HTTPRequestHead, context: ChannelHandlerContext) {
        let chunkSize = min(max(target.value("chunk").flatMap { Int($0) } ?? 16_384, 1), 16 << 20)
        let sendsLength = !["false", "0", "no"].contains(target.value("length")?.lowercased() ?? "")
        // Without a length, an HTTP/1.0 body ends only with its connection.
        let keepAlive = head.isKeepAlive && (sendsLength || head.version != .http1_0)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        if sendsLength {
            headers.add(name: "Content-Length", value: String(count))
        }
        applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
        guard head.method != .HEAD, count > 0 else {
            finish(keepAlive: keepAlive, context: context)
            return
        }
        var pattern = context.channel.allocator.buffer(capacity: chunkSize + 251)
        while pattern.readableBytes < chunkSize + 251 {
            let take = min(251, chunkSize + 251 - pattern.readableBytes)
            pattern.writeBytes((0..<take).map { UInt8($0) })
        }
        download = Download(remaining: count, chunkSize: chunkSize, keepAlive: keepAlive, pattern: pattern)
        pumpDownload(context: context)
    }

    /// Writes the download's chunks while the channel takes them; goes on from
    /// `channelWritabilityChanged` when it stopped taking them.
    private func pumpDownload(context: ChannelHandlerContext) {
        guard !isPumping else { return }
        isPumping = true
        defer { isPumping = false }
        while var current = download {
            guard isActive, context.channel.isActive else {
                download = nil
                return
            }
            if current.remaining == 0 {
                download = nil
                finish(keepAlive: current.keepAlive, context: context)
                return
            }
            if !context.channel.isWritable {
                context.flush()
                if context.channel.isWritable { continue }
                return
            }
            let length = min(current.chunkSize, current.remaining)
            let chunk = current.pattern.getSlice(at: current.pattern.readerIndex + current.offset % 251, length: length)!
            current.offset += length
            current.remaining -= length
            download = current
            context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
        }
    }
}

@available(*, unavailable)
extension BenchServerHandler: Sendable {}
