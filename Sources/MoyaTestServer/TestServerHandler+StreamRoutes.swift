import Foundation
import NIOCore
import NIOHTTP1

extension TestServerHandler {
    /// A query parameter that is present but not acceptable; answered with `400`.
    struct InvalidParameter: Error {
        /// What is wrong, for the response body.
        var message: String
    }

    /// The largest `chunk` the streaming routes accept.
    static let maximumChunkSize = 16 * 1024 * 1024

    /// The largest `interval_ms` the streaming routes accept: one minute.
    static let maximumIntervalMilliseconds = 60_000

    // MARK: - /replay

    /// `/replay`: the request's body, sent back in flushed writes of `chunk` bytes, `interval_ms`
    /// apart, chunked or with a `Content-Length`; with `close_after` only that many bytes, then
    /// the connection closes with the response unfinished.
    func startReplay(_ request: BufferedRequest, context: ChannelHandlerContext) {
        let head = request.head
        let target = request.target
        let chunkSize: Int?
        let interval: Int
        let closeAfter: Int?
        let statusCode: Int
        let useLength: Bool
        do throws(InvalidParameter) {
            chunkSize = try Self.integer("chunk", in: target, range: 1...Self.maximumChunkSize)
            interval = try Self.integer("interval_ms", in: target, range: 0...Self.maximumIntervalMilliseconds) ?? 0
            closeAfter = try Self.integer("close_after", in: target, range: 0...Int.max)
            statusCode = try Self.integer("status", in: target, range: 200...599) ?? 200
            switch target.value("framing") ?? "chunked" {
            case "chunked": useLength = false
            case "length": useLength = true
            default: throw InvalidParameter(message: "framing must be chunked or length")
            }
        } catch {
            self.send(.badRequest(error.message), for: head, context: context)
            return
        }
        let status = HTTPResponseStatus(statusCode: statusCode)
        let hasBody = status.mayHaveResponseBody && head.method != .HEAD
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        // Without Content-Length an HTTP/1.0 body can only be delimited by closing the connection.
        let keepAlive = head.isKeepAlive && (useLength || !isHTTP10)

        var headers = HTTPHeaders()
        if status.mayHaveResponseBody {
            headers.add(name: "Content-Type", value: target.value("content_type") ?? "text/event-stream")
            if useLength {
                headers.add(name: "Content-Length", value: String(request.body.readableBytes))
            }
        }
        self.applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        var parts: [HTTPServerResponsePart] = [.head(HTTPResponseHead(version: head.version, status: status, headers: headers))]
        var delays = [0]
        if hasBody {
            let length = min(closeAfter ?? Int.max, request.body.readableBytes)
            let step = chunkSize ?? max(length, 1)
            for start in stride(from: 0, to: length, by: step) {
                let slice = request.body.getSlice(at: request.body.readerIndex + start, length: min(step, length - start))!
                delays.append(start == 0 ? 0 : interval)
                parts.append(.body(.byteBuffer(slice)))
            }
        }
        let ending: ScriptedResponse.Ending = closeAfter == nil ? .end(keepAlive: keepAlive) : .close
        self.scriptedResponse = ScriptedResponse(parts: parts, delays: delays, ending: ending)
        self.pumpScriptedResponse(context: context)
    }

    // MARK: - /events

    /// `/events/<total>`: the events after the request's `Last-Event-ID`, at most
    /// `per_connection` of them, or `204` when none is left.
    func startEvents(total: Int?, target: RequestTarget, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let total, total >= 0 else {
            self.send(.badRequest("invalid event count"), for: head, context: context)
            return
        }
        let perConnection: Int
        let retry: Int?
        let interval: Int
        do throws(InvalidParameter) {
            perConnection = try Self.integer("per_connection", in: target, range: 1...Int.max) ?? 2
            retry = try Self.integer("retry_ms", in: target, range: 0...Int.max)
            interval = try Self.integer("interval_ms", in: target, range: 0...Self.maximumIntervalMilliseconds) ?? 0
        } catch {
            self.send(.badRequest(error.message), for: head, context: context)
            return
        }
        let lastEventID = head.headers.first(name: "last-event-id").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let last = max(lastEventID, 0)
        guard last < total else {
            // The standard's way of telling a client to stop reconnecting.
            self.send(TestResponse(status: .noContent), for: head, context: context)
            return
        }
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        let keepAlive = head.isKeepAlive && !isHTTP10

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream")
        headers.add(name: "Cache-Control", value: "no-cache")
        self.applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        var parts: [HTTPServerResponsePart] = [.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))]
        var delays = [0]
        if head.method != .HEAD {
            let allocator = context.channel.allocator
            if let retry {
                parts.append(.body(.byteBuffer(allocator.buffer(string: "retry: \(retry)\n\n"))))
                delays.append(0)
            }
            let first = last + 1
            // `last < total`, so this cannot overflow, whatever `per_connection` is.
            for id in first...(last + min(perConnection, total - last)) {
                parts.append(.body(.byteBuffer(allocator.buffer(string: "id: \(id)\nevent: tick\ndata: event \(id)\n\n"))))
                delays.append(id == first ? 0 : interval)
            }
        }
        self.scriptedResponse = ScriptedResponse(parts: parts, delays: delays, ending: .end(keepAlive: keepAlive))
        self.pumpScriptedResponse(context: context)
    }

    /// Writes the parts of ``scriptedResponse`` one at a time, each flushed, waiting for each
    /// write to complete and for the next part's delay; then ends the response or closes the
    /// connection.
    func pumpScriptedResponse(context: ChannelHandlerContext) {
        guard !self.isPumpingScriptedResponse else { return }
        self.isPumpingScriptedResponse = true
        defer { self.isPumpingScriptedResponse = false }

        // Each pass reads the state afresh: a write may complete inside the flush that started
        // it, and its callback (which returns at once while pumping) updates the state.
        while var response = self.scriptedResponse {
            guard self.isActive, context.channel.isActive else {
                self.scriptedResponse = nil
                return
            }
            if response.writeInFlight || response.waitingForTimer {
                return  // the write's completion or the timer resumes us
            }
            if response.isExhausted {
                self.scriptedResponse = nil
                switch response.ending {
                case .end(let keepAlive):
                    self.finishResponse(keepAlive: keepAlive, context: context)
                case .close:
                    context.close(promise: nil)
                }
                return
            }
            let delay = response.pendingDelay
            if delay > 0 {
                self.scriptedResponse?.waitingForTimer = true
                self.schedule(in: .milliseconds(Int64(delay)), context: context) { [self] in
                    self.scriptedResponse?.waitingForTimer = false
                    self.scriptedResponse?.delayElapsed = true
                    self.pumpScriptedResponse(context: context)
                }
                return
            }
            let part = response.takeNextPart()
            self.scriptedResponse = response
            context.writeAndFlush(self.wrapOutboundOut(part)).assumeIsolated().whenComplete { [self] result in
                guard self.scriptedResponse != nil else { return }
                switch result {
                case .success:
                    self.scriptedResponse?.writeInFlight = false
                    self.pumpScriptedResponse(context: context)
                case .failure:
                    self.scriptedResponse = nil
                    context.close(promise: nil)
                }
            }
        }
    }

    // MARK: - /endless

    /// `/endless`: pattern bytes without end, written only as fast as the client reads them.
    func startEndless(target: RequestTarget, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        let chunkSize: Int
        do throws(InvalidParameter) {
            chunkSize = try Self.integer("chunk", in: target, range: 1...Self.maximumChunkSize) ?? 16_384
        } catch {
            self.send(.badRequest(error.message), for: head, context: context)
            return
        }
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        // The body never ends; an HTTP/1.0 client can only be told so by `Connection: close`.
        let keepAlive = head.isKeepAlive && !isHTTP10

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        self.applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        let responseHead = HTTPResponseHead(version: head.version, status: .ok, headers: headers)
        context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)
        if head.method == .HEAD {
            self.finishResponse(keepAlive: keepAlive, context: context)
            return
        }
        self.countsAsOpenEndlessResponse = true
        self.endlessCounters.responseStarted()
        self.endlessBody = EndlessBody(chunkSize: chunkSize, allocator: context.channel.allocator)
        self.pumpEndlessBody(context: context)
    }

    /// Writes the next chunk of ``endlessBody`` once the previous write completed and the
    /// channel is writable; resumes from the write's completion or `channelWritabilityChanged`.
    func pumpEndlessBody(context: ChannelHandlerContext) {
        guard !self.isPumpingEndlessBody else { return }
        self.isPumpingEndlessBody = true
        defer { self.isPumpingEndlessBody = false }

        // Each pass reads the state afresh, as in `pumpScriptedResponse(context:)`.
        while var body = self.endlessBody {
            guard self.isActive, context.channel.isActive else {
                self.endlessBody = nil
                return
            }
            guard !body.writeInFlight, context.channel.isWritable else {
                return
            }
            let chunk = body.takeNextChunk()
            self.endlessBody = body
            let count = chunk.readableBytes
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success:
                    self.endlessCounters.addWrittenBytes(count)
                    guard self.endlessBody != nil else { return }
                    self.endlessBody?.writeInFlight = false
                    self.pumpEndlessBody(context: context)
                case .failure:
                    // The connection is going away; `tearDown()` updates the counters.
                    self.endlessBody = nil
                }
            }
        }
    }

    // MARK: - Parameters

    /// The query parameter `name` as an integer, `nil` when absent.
    ///
    /// - Throws: ``InvalidParameter`` when it is present but not an integer in `range`.
    static func integer(_ name: String, in target: RequestTarget, range: ClosedRange<Int>) throws(InvalidParameter) -> Int? {
        guard let text = target.value(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            let bounds = range.upperBound == Int.max ? ">= \(range.lowerBound)" : "in \(range.lowerBound)...\(range.upperBound)"
            throw InvalidParameter(message: "\(name) must be an integer \(bounds)")
        }
        return value
    }
}
