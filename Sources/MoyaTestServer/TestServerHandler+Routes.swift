import Foundation
import NIOCore
import NIOHTTP1

extension TestServerHandler {
    /// Dispatches a fully read request (body buffered) to its route.
    func handle(_ request: BufferedRequest, context: ChannelHandlerContext) {
        let head = request.head
        let target = request.target
        switch request.route {
        case .echo:
            self.send(self.echo(request), for: head, context: context)
        case .status(let code):
            self.send(self.status(code: code, target: target), for: head, context: context)
        case .delay(let milliseconds):
            guard let milliseconds, milliseconds >= 0 else {
                self.send(.badRequest("invalid delay"), for: head, context: context)
                return
            }
            self.schedule(in: .milliseconds(Int64(milliseconds)), context: context) { [self] in
                self.send(.text("delayed"), for: head, context: context)
            }
        case .bytes(let count):
            self.startByteStream(count: count, target: target, head: head, context: context)
        case .upload, .echoParts, .answerAtOnce, .answerEndsFirst:
            // Uploads and echoed parts are streamed and never reach this point.
            self.send(.notFound, for: head, context: context)
        case .multipart:
            self.send(self.multipart(request), for: head, context: context)
        case .redirect(let remaining):
            guard let remaining, remaining >= 0 else {
                self.send(.badRequest("invalid redirect count"), for: head, context: context)
                return
            }
            let location = remaining == 0 ? "/echo" : "/redirect/\(remaining - 1)"
            self.send(self.redirect(to: location, status: .found), for: head, context: context)
        case .redirectTo:
            self.send(self.redirectTo(target), for: head, context: context)
        case .redirectLoop:
            self.send(self.redirect(to: "/redirect-loop", status: .found), for: head, context: context)
        case .gzip:
            self.send(self.compressed(format: .gzip, name: "gzip"), for: head, context: context)
        case .deflate:
            self.send(self.compressed(format: .zlib, name: "deflate"), for: head, context: context)
        case .json:
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            self.send(TestResponse(status: .ok, headers: headers, body: Array(Self.slideshowJSON.utf8)), for: head, context: context)
        case .responseHeaders:
            var headers = HTTPHeaders()
            for (name, value) in target.queryItems {
                headers.add(name: name, value: value)
            }
            if !headers.contains(name: "Content-Type") {
                headers.add(name: "Content-Type", value: "application/octet-stream")
            }
            self.send(TestResponse(status: .ok, headers: headers, body: Array("response-headers".utf8)), for: head, context: context)
        case .basicAuth(let user, let password):
            self.send(self.basicAuth(head: head, user: user, password: password), for: head, context: context)
        case .bearer:
            self.send(self.bearer(head: head), for: head, context: context)
        case .truncate(let count):
            guard let count, count >= 0 else {
                self.send(.badRequest("invalid byte count"), for: head, context: context)
                return
            }
            self.truncate(count: count, head: head, context: context)
        case .headersOnlyThenHang:
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/octet-stream")
            headers.add(name: "Content-Length", value: "100")
            let responseHead = HTTPResponseHead(version: head.version, status: .ok, headers: headers)
            context.writeAndFlush(self.wrapOutboundOut(.head(responseHead)), promise: nil)
        // Nothing more is ever sent; the client has to time out or cancel.
        case .drop, .malformed, .stopReading:
            // Handled when the head arrives.
            break
        case .flaky(let key):
            let attempt = self.log.increment(key)
            let failures = target.value("failures").flatMap(Int.init) ?? 1
            guard attempt > failures else {
                if target.value("failWith") == "drop" {
                    context.close(promise: nil)
                    return
                }
                self.send(self.status(code: target.value("status").flatMap(Int.init) ?? 503, target: target), for: head, context: context)
                return
            }
            self.send(.json(["attempt": attempt]), for: head, context: context)
        case .token(let expected):
            if let authorization = head.headers.first(name: "authorization"),
                Self.credentials(authorization, scheme: "bearer") == expected
            {
                self.send(.json(["authenticated": true, "token": expected]), for: head, context: context)
            } else {
                var headers = HTTPHeaders()
                headers.add(name: "WWW-Authenticate", value: "Bearer")
                self.send(.json(["authenticated": false], status: .unauthorized, headers: headers), for: head, context: context)
            }
        case .informational(let code):
            guard let code, (100...199).contains(code) else {
                self.send(.badRequest("informational status must be between 100 and 199"), for: head, context: context)
                return
            }
            // Written by hand: NIO's encoder treats a 1xx head as interim and waits for the
            // final response, which this route never sends.
            let reason = code == 101 ? "Switching Protocols" : "Informational"
            var text = "HTTP/1.1 \(code) \(reason)\r\n"
            if code == 101 {
                text += "Connection: Upgrade\r\nUpgrade: moya-test\r\n"
            }
            self.writeRawAndClose(Array((text + "\r\n").utf8), context: context)
        case .replay:
            self.startReplay(request, context: context)
        case .endless:
            self.startEndless(target: target, head: head, context: context)
        case .events(let total):
            self.startEvents(total: total, target: target, head: head, context: context)
        case .notFound:
            self.send(.notFound, for: head, context: context)
        }
    }

    // MARK: - Simple routes

    private func echo(_ request: BufferedRequest) -> TestResponse {
        let head = request.head
        var headerMap: [String: String] = [:]
        var headerOrder: [String] = []
        for (name, value) in head.headers {
            let key = name.lowercased()
            if let existing = headerMap[key] {
                headerMap[key] = existing + ", " + value
            } else {
                headerMap[key] = value
                headerOrder.append(key)
            }
        }
        let bodyData = Data(request.body.readableBytesView)
        let bodyText = TestResponse.nullable(bodyData.isEmpty ? nil : String(data: bodyData, encoding: .utf8))
        let object: [String: Any] = [
            "method": head.method.rawValue,
            "uri": head.uri,
            "path": request.target.path,
            "query": TestResponse.nullable(request.target.query),
            "headers": headerMap,
            "headerList": head.headers.map { [$0.name, $0.value] },
            "body": bodyText,
            "bodyBase64": bodyData.base64EncodedString(),
            "bodyLength": request.length,
        ]
        return .json(object)
    }

    private func status(code: Int?, target: RequestTarget) -> TestResponse {
        guard let code, (200...599).contains(code) else {
            return .badRequest("status code must be between 200 and 599")
        }
        var headers = HTTPHeaders()
        if let retryAfter = target.value("retryAfter") {
            headers.add(name: "Retry-After", value: retryAfter)
        }
        return .json(["status": code], status: HTTPResponseStatus(statusCode: code), headers: headers)
    }

    /// A redirect to `location`, with a short text body as many servers send.
    private func redirect(to location: String, status: HTTPResponseStatus) -> TestResponse {
        var response = TestResponse.text("Redirecting to \(location)", status: status)
        response.headers.add(name: "Location", value: location)
        return response
    }

    private func redirectTo(_ target: RequestTarget) -> TestResponse {
        guard let url = target.value("url"), !url.isEmpty else {
            return .badRequest("missing url parameter")
        }
        let code = target.value("status").map { Int($0) ?? -1 } ?? 302
        guard (300...399).contains(code) else {
            return .badRequest("redirect status must be between 300 and 399")
        }
        return self.redirect(to: url, status: HTTPResponseStatus(statusCode: code))
    }

    private func compressed(format: BodyCompressor.Format, name: String) -> TestResponse {
        let json = TestResponse.json(["compressed": true, "method": name])
        var headers = json.headers
        headers.add(name: "Content-Encoding", value: name)
        return TestResponse(status: .ok, headers: headers, body: BodyCompressor.compress(json.body, format: format))
    }

    private func basicAuth(head: HTTPRequestHead, user: String, password: String) -> TestResponse {
        if let authorization = head.headers.first(name: "authorization"),
            let credentials = Self.credentials(authorization, scheme: "basic"),
            let decoded = Data(base64Encoded: credentials).flatMap({ String(data: $0, encoding: .utf8) }),
            decoded == "\(user):\(password)"
        {
            return .json(["authenticated": true, "user": user])
        }
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: #"Basic realm="Fake Realm""#)
        return .json(["authenticated": false], status: .unauthorized, headers: headers)
    }

    private func bearer(head: HTTPRequestHead) -> TestResponse {
        if let authorization = head.headers.first(name: "authorization"),
            let token = Self.credentials(authorization, scheme: "bearer"),
            !token.isEmpty
        {
            return .json(["authenticated": true, "token": token])
        }
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: "Bearer")
        return .json(["authenticated": false], status: .unauthorized, headers: headers)
    }

    /// The credentials part of an `Authorization` header if it uses `scheme` (case-insensitive).
    private static func credentials(_ header: String, scheme: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == scheme else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    private func multipart(_ request: BufferedRequest) -> TestResponse {
        do {
            let boundary = try MultipartFormData.boundary(fromContentType: request.head.headers.first(name: "content-type"))
            let form = try MultipartFormData(body: Array(request.body.readableBytesView), boundary: boundary)
            let parts: [[String: Any]] = form.parts.map { part in
                var headers: [String: String] = [:]
                for (name, value) in part.headers {
                    headers[name] = headers[name].map { $0 + ", " + value } ?? value
                }
                return [
                    "headers": headers,
                    "name": TestResponse.nullable(part.dispositionParameter("name")),
                    "filename": TestResponse.nullable(part.dispositionParameter("filename")),
                    "length": part.body.count,
                    "sha256": HexDigest.sha256(part.body),
                    "body": TestResponse.nullable(String(bytes: part.body, encoding: .utf8)),
                ]
            }
            return .json(["boundary": boundary, "parts": parts])
        } catch let error as MultipartFormData.ParseError {
            return .badRequest("malformed multipart body: \(error.description)")
        } catch {
            return .badRequest("malformed multipart body: \(error)")
        }
    }

    // MARK: - Streaming and broken responses

    private func startByteStream(count: Int?, target: RequestTarget, head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard let count, count >= 0 else {
            self.send(.badRequest("invalid byte count"), for: head, context: context)
            return
        }
        let chunkSize = target.intValue("chunk") ?? 16_384
        let interval = target.intValue("interval_ms") ?? 0
        guard (1...(16 * 1024 * 1024)).contains(chunkSize), interval >= 0 else {
            self.send(.badRequest("chunk must be 1...16777216 and interval_ms >= 0"), for: head, context: context)
            return
        }
        let lengthValue = target.value("length")?.lowercased()
        let sendLength = !(lengthValue == "false" || lengthValue == "0" || lengthValue == "no")
        let isHTTP10 = head.version.major == 1 && head.version.minor == 0
        // Without Content-Length an HTTP/1.0 body can only be delimited by closing the connection.
        let keepAlive = head.isKeepAlive && (sendLength || !isHTTP10)

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        if sendLength {
            headers.add(name: "Content-Length", value: String(count))
        }
        if let cacheControl = target.value("cache_control") {
            headers.add(name: "Cache-Control", value: cacheControl)
        }
        self.applyConnectionHeaders(&headers, for: head, keepAlive: keepAlive)
        let responseHead = HTTPResponseHead(version: head.version, status: .ok, headers: headers)
        context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)

        if head.method == .HEAD || count == 0 {
            self.finishResponse(keepAlive: keepAlive, context: context)
            return
        }
        self.byteStream = ByteStream(
            remaining: count,
            offset: 0,
            chunkSize: chunkSize,
            intervalMilliseconds: interval,
            keepAlive: keepAlive,
            pattern: Self.patternBuffer(length: chunkSize + 251, allocator: context.channel.allocator),
            waitingForTimer: false
        )
        self.pumpByteStream(context: context)
    }

    private func truncate(count: Int, head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "Content-Length", value: String(count))
        let responseHead = HTTPResponseHead(version: head.version, status: .ok, headers: headers)
        context.write(self.wrapOutboundOut(.head(responseHead)), promise: nil)
        let half = Self.patternBuffer(length: count / 2, allocator: context.channel.allocator)
        context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(half)))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// `length` bytes where byte `i` is `UInt8(i % 251)`.
    static func patternBuffer(length: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        let period = (0..<251).map { UInt8($0) }
        var buffer = allocator.buffer(capacity: length)
        var remaining = length
        while remaining > 0 {
            let take = min(remaining, period.count)
            buffer.writeBytes(period[0..<take])
            remaining -= take
        }
        return buffer
    }

    /// The fixed document served at `/json`.
    static let slideshowJSON = #"""
        {"slideshow": {"author": "Yours Truly", "title": "Sample Slide Show", "slides": [{"title": "Wake up to WonderWidgets!", "type": "all"}, {"title": "Overview", "type": "all", "items": ["Why WonderWidgets are great", "Who buys WonderWidgets"]}]}}
        """#
}
