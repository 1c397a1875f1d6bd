import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One WebSocket handshake: the sibling of ``TransportExchange`` for a connection that is not
/// an AsyncHTTPClient request. It starts from the same ``ExchangeParts``: the session admits it,
/// ``SessionRoutes`` decides its route, proxy and TLS and opens the connection, the request
/// factory adds the session's headers and the jar's cookies, the answer's cookies go to the jar,
/// and the session's request timeout bounds the wait for the answer.
///
/// The handshake is an HTTP/1.1 `GET` with NIO's WebSocket upgrader's key and its check
/// (``WebSocketHandshakeHandler``), the permessage-deflate offer and the subprotocols of the
/// request's ``WebSocketSink``. A `101`
/// whose headers are valid starts a ``WebSocketConversation`` on the channel and puts its
/// ``WebSocketConnection`` in the sink; the owner then hears of the `101` as the response. Any
/// other answer is the response as it is (its body kept up to 1 MiB), and the connection
/// closes. A cancel (``TransportAttempt/cancel()``) closes the connection.
final class WebSocketExchange: TransportAttempt {
    private let parts: ExchangeParts
    private let request: TransportRequest
    /// The request with its `ws` or `wss` URL as `http` or `https`, for the cookie jar, the
    /// header checks and the error translation.
    private let httpRequest: URLRequest
    private let sink: WebSocketSink
    private let owner: any TransportOwner
    private let span: (any Span)?
    private let loop: any EventLoop
    /// What a cancel and the policies share, behind one lock.
    private struct State {
        /// The channel, once opened.
        var channel: (any Channel)?
        /// Whether the exchange was cancelled: the channel closes as soon as it exists.
        var cancelled = false
        /// The handshake's wait for a place under its origin's concurrency limit, which a cancel
        /// ends at once.
        var wait: PermitWait?
        /// What the handshake holds from the session's policies (``PolicyStage``) until its
        /// answer.
        var permit = PolicyPermit()
    }

    private let state: Protected<State>

    init(parts: ExchangeParts, request: TransportRequest, sink: WebSocketSink, owner: any TransportOwner, span: (any Span)?) {
        self.parts = parts
        self.request = request
        var httpRequest = request.urlRequest
        if let url = httpRequest.url, let httpURL = SessionRoutes.httpEquivalent(of: url) {
            httpRequest.url = httpURL
        }
        self.httpRequest = httpRequest
        self.sink = sink
        self.owner = owner
        self.span = span
        self.loop = MultiThreadedEventLoopGroup.singleton.next()
        var state = State()
        state.permit.start(for: request)
        self.state = Protected(state)
    }

    func cancel() {
        let (channel, wait) = state.withLock { state -> ((any Channel)?, PermitWait?) in
            state.cancelled = true
            return (state.channel, state.wait)
        }
        channel?.close(promise: nil)
        wait?.cancel()
    }

    /// Starts the handshake; the owner hears of its end once.
    func start() {
        if let refusal = parts.inFlight.enter() {
            finish(.failure(refusal), admitted: false)
            return
        }
        guard owner.transportStarted(self) else {
            finish(.failure(HTTPClientError.cancelled), admitted: true)
            return
        }
        let urlRequest = request.urlRequest
        let plan: (route: ConnectionRoute, head: HTTPRequestHead)
        do {
            plan = try handshakePlan(for: urlRequest)
        } catch {
            finish(.failure(error), admitted: true)
            return
        }
        // The session's policies: the handshake holds a place under its origin's concurrency
        // limit until its answer.
        // The stage is asked with a copy of the permit, outside the lock its client's calls take.
        var permit = state.current.permit
        let admission = parts.policies.admit(urlRequest.url, .first(refillsBudget: request.refillsBudget, hedging: nil), permit: &permit, client: self)
        switch admission {
        case .goes:
            go(plan, after: PolicyAnswer(permit: permit))
        case .refused(let error):
            go(plan, after: PolicyAnswer(permit: permit, stop: .refused(error)))
        case .waits(let pending):
            parts.policies.wait(pending, client: self) { [self] answer in go(plan, after: answer) }
        }
    }

    /// Opens the connection of `plan` as the policies' `answer` says, or ends the handshake.
    private func go(_ plan: (route: ConnectionRoute, head: HTTPRequestHead), after answer: PolicyAnswer) {
        state.withLock { state in
            state.permit = answer.permit
            state.wait = nil
        }
        switch answer.stop {
        case nil:
            connect(plan)
        case .refused(let error):
            finish(.failure(error), admitted: true)
        case .cancelled:
            finish(.failure(HTTPClientError.cancelled), admitted: true)
        }
    }

    /// Opens the connection along `plan`'s route and sends the handshake.
    private func connect(_ plan: (route: ConnectionRoute, head: HTTPRequestHead)) {
        let urlRequest = request.urlRequest
        let outcome = loop.makePromise(of: WebSocketHandshakeOutcome.self)
        parts.routes.openConnection(along: plan.route, on: loop).whenComplete { [self] opened in
            switch opened {
            case .failure(let error):
                outcome.fail(error)
            case .success(let channel):
                let cancelled = state.withLock { state -> Bool in
                    state.channel = channel
                    return state.cancelled
                }
                guard !cancelled else {
                    channel.close(promise: nil)
                    outcome.fail(HTTPClientError.cancelled)
                    return
                }
                handshake(on: channel, head: plan.head, outcome: outcome)
            }
        }
        outcome.futureResult.whenComplete { [self] result in
            let cancelled = state.current.cancelled
            switch result {
            case .failure(let error):
                finish(.failure(cancelled ? HTTPClientError.cancelled : error), admitted: true)
            case .success(.refused(let head, let body)):
                let response = TransportResponse(response: DeferredHTTPURLResponse(head: head, url: urlRequest.url!), data: body)
                parts.cookies.store(from: response, of: httpRequest)
                finish(.success(response), admitted: true)
            case .success(.upgraded(let head, let connectionParts)):
                let answer = DeferredHTTPURLResponse(head: head, url: urlRequest.url!)
                parts.cookies.store(from: TransportResponse(response: answer, data: Data()), of: httpRequest)
                guard !cancelled, let channel = state.current.channel else {
                    connectionParts.conversation.value.close(code: .goingAway, reason: "", promise: nil)
                    finish(.failure(HTTPClientError.cancelled), admitted: true)
                    return
                }
                let connection = WebSocketConnection(
                    response: Response(statusCode: Int(head.status.code), data: Data(), request: urlRequest, deferredResponse: answer),
                    parts: connectionParts, options: sink.options, channel: channel, observer: sink.observer)
                observe(channel: channel, record: connectionParts.record, route: plan.route, url: urlRequest.url!)
                // The connection is the handshake's result, with its `101`: the owner hands it
                // to the caller (``WebSocketSink``) or abandons it.
                finish(.success(TransportResponse(response: answer, data: Data(), upgraded: connection)), admitted: true)
            }
        }
    }

    /// The route, and the handshake's request head: the request's path and query, its headers
    /// with the session's and the jar's cookies, `Host`, and the offers.
    private func handshakePlan(for urlRequest: URLRequest) throws -> (route: ConnectionRoute, head: HTTPRequestHead) {
        guard let url = urlRequest.url, url.host != nil else { throw URLError(.badURL) }
        let method = urlRequest.httpMethod?.uppercased() ?? "GET"
        guard method == "GET" else {
            throw RequestValidationError.invalidMethod("\(method) (a WebSocket handshake is a GET request)")
        }
        if let body = urlRequest.httpBody, !body.isEmpty {
            throw RequestValidationError.bodyDataInGETRequest(body)
        }
        let route = try parts.routes.connectionRoute(for: url)
        // Cookies and header checks see the URL as http or https.
        if let cause = parts.requests.refusalCause(of: httpRequest) {
            throw cause
        }
        var headers = NIOHTTP1.HTTPHeaders()
        let secure = route.tls != nil
        headers.add(name: "Host", value: TLSBridge.hostHeader(host: route.host, port: route.port, defaultPort: secure ? 443 : 80))
        for (name, value) in parts.requests.headersAsSent(for: httpRequest, authorization: nil)
        where !WebSocketHandshake.reservedFields.contains(name.lowercased()) {
            headers.add(name: name, value: value)
        }
        let offers = WebSocketHandshake.offers(
            sink.options, requestNamesSubprotocol: headers.contains(name: "Sec-WebSocket-Protocol"), offersCompression: true)
        for (name, value) in offers {
            headers.add(name: name, value: value)
        }
        guard let target = ClientRequestFactory.originFormTarget(of: url) else { throw URLError(.badURL) }
        return (route, HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers))
    }

    /// Sends the handshake (``WebSocketHandshakeHandler``); `outcome` completes with the
    /// answer, or fails after the session's request timeout.
    private func handshake(on channel: any Channel, head: HTTPRequestHead, outcome: EventLoopPromise<WebSocketHandshakeOutcome>) {
        do {
            try WebSocketHandshakeHandler(options: sink.options, outcome: outcome).start(on: channel, head: head)
        } catch {
            outcome.fail(error)
            channel.close(promise: nil)
            return
        }
        let timeout = channel.eventLoop.scheduleTask(in: parts.timeouts.request) {
            outcome.fail(HTTPClientError.readTimeout)
            channel.close(promise: nil)
        }
        outcome.futureResult.whenComplete { _ in timeout.cancel() }
    }

    /// Measures the connection from now to its end: the session's WebSocket metrics, and with a
    /// tracer, a span `WebSocket` (a child of the caller's context, like the handshake's) that
    /// ends with the connection and carries the messages and bytes each way, the server's close
    /// code, and the failure, if any.
    private func observe(channel: any Channel, record: WebSocketCloseRecord, route: ConnectionRoute, url: URL) {
        let metrics = WebSocketMetrics(factory: parts.metricsFactory)
        let span = parts.tracing?.tracer.map { tracer -> any Span in
            let span = tracer.startSpan("WebSocket", context: request.traceContext?.serviceContext ?? .topLevel, ofKind: .client)
            span.updateAttributes { attributes in
                attributes["server.address"] = route.host
                attributes["server.port"] = Int64(route.port)
                attributes["url.scheme"] = url.scheme?.lowercased()
            }
            return span
        }
        guard metrics != nil || span != nil else { return }
        metrics?.opened(host: route.host, port: route.port)
        channel.closeFuture.whenComplete { _ in
            // After the conversation has recorded the end (it does so as the channel goes
            // inactive, in this turn or the one before).
            channel.eventLoop.execute {
                let state = record.current
                let closeCode = state.serverCode ?? .abnormalClosure
                metrics?.closed(
                    host: route.host, port: route.port, messagesSent: state.messagesSent, messagesReceived: state.messagesReceived,
                    bytesSent: state.bytesSent, bytesReceived: state.bytesReceived, closeCode: closeCode.rawValue,
                    errorType: state.failure?.typeName)
                guard let span else { return }
                span.updateAttributes { attributes in
                    attributes["websocket.messages.sent"] = Int64(state.messagesSent)
                    attributes["websocket.messages.received"] = Int64(state.messagesReceived)
                    attributes["websocket.bytes.sent"] = state.bytesSent
                    attributes["websocket.bytes.received"] = state.bytesReceived
                    attributes["websocket.close_code"] = Int64(closeCode.rawValue)
                }
                if let failure = state.failure {
                    span.recordError(failure)
                    span.setStatus(SpanStatus(code: .error))
                }
                span.end()
            }
        }
    }

    /// Ends the exchange: the span, the admission, then the owner.
    private func finish(_ result: Result<TransportResponse, any Error>, admitted: Bool) {
        let result = result.mapError { parts.explainingFailure($0, of: httpRequest) }
        let outcome: CircuitBreaker.Outcome? =
            switch result {
            case .success(let response): .status(response.statusCode)
            case .failure(let error): CircuitBreaker.Outcome(failure: error)
            }
        var permit = state.withLock { state in
            defer { state.permit = PolicyPermit() }
            return state.permit
        }
        permit.attemptEnded(outcome, response: try? result.get().response)
        parts.policies.end(&permit, hedgeLatency: nil, client: self)
        if let span { TracePropagation.endSpan(span, with: result) }
        if admitted { parts.inFlight.ended() }
        owner.transportFinished(result, request: request.urlRequest)
    }
}

extension WebSocketExchange: PolicyClient {
    var policyWantsRequest: Bool {
        owner.transportIsWanted && !state.withLock { $0.cancelled }
    }

    func policyQueued(_ wait: PermitWait) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.wait = wait
            return true
        }
    }

    func policyObserved(_ event: ResilienceEvent) {
        owner.transportObserved(event)
    }
}
