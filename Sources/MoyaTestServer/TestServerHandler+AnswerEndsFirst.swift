import NIOCore
import NIOHTTP1

extension TestServerHandler {
    /// `/answer-ends-first`: a `200` (or the `status` asked for) whose body and end are written while the request's body is
    /// still arriving, as a server that answers from the request's head (or its first part) does.
    /// The end comes in a write of its own (`end=apart`, the default) or with the body's last
    /// part (`end=with-last`), 100 ms after the head, so that the client reads it apart from the
    /// head. The chunked framing lets the client learn of the end only from the final chunk.
    func answerEndingFirst(_ head: HTTPRequestHead, target: RequestTarget, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "Transfer-Encoding", value: "chunked")
        self.applyConnectionHeaders(&headers, for: head, keepAlive: head.isKeepAlive)
        let withLast = target.value("end") == "with-last"
        let status = target.value("status").flatMap { Int($0) }.map { HTTPResponseStatus(statusCode: $0) } ?? .ok
        let body = context.channel.allocator.buffer(string: "early")
        context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if !withLast {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.flush()
        self.schedule(in: .milliseconds(100), context: context) { [self] in
            if withLast {
                context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            }
            self.finishResponse(keepAlive: head.isKeepAlive, context: context)
        }
    }
}
