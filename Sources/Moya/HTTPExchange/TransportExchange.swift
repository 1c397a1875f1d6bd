import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Tracing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request/response exchange on a ``Session``, possibly in several attempts: when a Basic
/// challenge is answered, and for every redirect the session follows
/// (``FollowUp/redirectStep(after:of:bodyIsReplayable:policy:)``), so that each hop is checked, routed
/// and evaluated for its own host. It is the one adapter between a request and AsyncHTTPClient,
/// and the one response delegate of every attempt, whatever becomes of the body
/// (``Destination``): collected in memory, written to a file, or streamed to a consumer
/// (`TransportExchange+Delegate.swift`, `+Download`, `+Stream`).
///
/// The request's state lives in its ``TransportOwner``: the exchange hands it every attempt
/// (which a cancel then stops), asks it before every follow-up whether the result is still
/// wanted, and gives it the result, exactly once (``finish(_:)``). Response heads and body parts
/// stay with the exchange, on the attempt's event loop.
///
/// Its time limit (``ExchangeTimeouts/timeLimit(for:)``) is set once, when it starts, and covers every
/// attempt. An attempt that the connection pool gave up on while it waited for a connection
/// waits again (``FollowUp/Step/waitAgain``).
///
/// Each attempt is a value (``ExchangeAttempt``), the delegate's state of it another
/// (``AttemptState``, made fresh for each), and what follows an attempt is one decision
/// (``FollowUp/decide(after:of:rules:isWanted:isShuttingDown:)``), and one place acts on it.
///
/// Sendable: the mutable fields are the current attempt's (``current``, touched by
/// AsyncHTTPClient's delegate calls, by the attempt's timers and by the completion of its file
/// writes, which all run on the attempt's event loop one at a time) and the idle timer's and the
/// first-connection gate's (touched on that loop too, or when an attempt has ended, before the
/// next one starts), and the ``permit`` (set when an attempt is admitted, before it is sent, and
/// read when it has ended). Attempts never overlap: the
/// next one is set up and sent from the previous one's completion, after that completion has
/// stopped the previous attempt's timers on its loop, and AsyncHTTPClient's hand-over to an
/// event loop orders those accesses.
final class TransportExchange: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = TransportResponse

    /// Where a response body goes. The sinks are kept out of line (`indirect`), as in
    /// ``TransportRequest/Mode``.
    enum Destination {
        /// Collected in memory, up to the session's
        /// ``Session/Configuration/maximumResponseBodySize``.
        case memory
        /// Written to a new temporary file, when the status is one the sink accepts.
        indirect case file(DownloadSink)
        /// Streamed to the sink's consumer, when the status is one the sink accepts.
        indirect case stream(StreamSink)
    }

    /// What the exchange needs of its session (never the session itself).
    let parts: ExchangeParts
    let request: TransportRequest
    let progress: TransportProgressHandler?
    let owner: any TransportOwner
    /// The request's client span, when the session traces: it ends with the exchange, before
    /// the owner hears of the result (``finish(_:)``).
    private let span: (any Span)?
    /// Where the response body goes.
    let destination: Destination
    /// Whether the response is read only as fast as its destination takes it (a stream, a
    /// download): such an attempt goes through ``SessionRoutes/streamingClient``, whose connections
    /// are pooled apart from the session's other requests.
    var pacesReading: Bool {
        if case .memory = destination { return false }
        return true
    }
    /// How long an attempt may wait for the network once its request is sent
    /// (`TransportExchange+IdleTimeout.swift`); `nil` for no limit.
    let idleTimeout: TimeAmount?
    /// When the whole exchange, every attempt included, must be done by.
    let timeLimit: NIODeadline?

    /// The current attempt, as its delegate sees it (see `TransportExchange+Delegate.swift`):
    /// made fresh for every attempt.
    var current: AttemptState
    /// Where an interrupted download stopped, while the exchange still asks for the rest: the
    /// sink's (``DownloadSink/resume``) when the exchange starts; `nil` for a request that is not
    /// a download, and once the exchange gave it up (``giveUpResumePoint(file:deleting:)``: a
    /// server sent the whole representation again or refused the range). Set when the exchange
    /// starts and then only on the attempt's loop, like ``current``.
    var resume: ResumePoint?
    /// The folder a download's files are created in, made or checked when the exchange starts
    /// (``DownloadFolder/prepare()``), before anything is sent.
    var fileDirectory: URL?
    /// The attempt's task while the ``IdleClock`` watches it (see ``armIdleTimer(_:)``).
    var idleTask: (any ExchangeTask)?
    /// The clock of the event loop of the attempt ``idleTask`` belongs to.
    var idleClock: IdleClock?
    /// When the network was last heard from (or waiting for it began).
    var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// The origin whose first connection this attempt opens, until its head is written or it
    /// ends (``FirstConnectionGate``).
    private var openingOrigin: FirstConnectionGate.Origin?
    /// What the request holds from the session's policy stage (``PolicyStage``): its place
    /// under its origin's concurrency limit, the breaker's verdict on the attempt in flight,
    /// what its hedge reads. Set when an attempt is admitted (``route(_:)``), before it is sent;
    /// given back once, when the exchange ends (``finish(_:)``).
    var permit = PolicyPermit()
    /// A request that may be hedged (a ``TransportRequest/hedging`` policy, read into memory,
    /// with a body that can be sent again): its first copy's attempt and hedge timer, and the
    /// race once a hedge is due (`TransportExchange+Hedging.swift`); `nil` for any other.
    let hedgeWatch: Protected<HedgeWatch>?

    /// - Parameters:
    ///   - parts:    What the exchange needs of its session.
    ///   - request:  What to send.
    ///   - progress: Reports progress, if wanted.
    ///   - owner:    Keeps the request's state, and receives the result.
    ///   - span:     The request's client span, if the session traces.
    init(parts: ExchangeParts, request: consuming TransportRequest, progress: TransportProgressHandler?, owner: any TransportOwner, span: (any Span)? = nil) {
        self.parts = parts
        self.progress = progress
        self.owner = owner
        self.span = span
        self.timeLimit = parts.timeouts.timeLimit(for: request.urlRequest)
        let requestIdleLimit = Self.idleLimit(parts.timeouts.requestInterval)
        switch request.mode {
        case .stream(let sink):
            destination = .stream(sink)
            idleTimeout = sink.idleTimeout.map { Self.idleLimit($0) } ?? requestIdleLimit
        case .download(let sink):
            destination = .file(sink)
            resume = sink.resume
            // A download is read only as fast as its file is written: its idle timer does not
            // run while the file holds the reader back (a busy thread pool is not a silent
            // server).
            idleTimeout = requestIdleLimit
        case .memory, .upgrade:
            // An upgrade never reaches an HTTP exchange (``Session/send(_:progress:owner:)``).
            destination = .memory
            idleTimeout = requestIdleLimit
        }
        if request.hedging != nil, case .memory = destination, request.body?.isReplayable ?? (request.urlRequest.httpBodyStream == nil) {
            hedgeWatch = Protected(HedgeWatch())
        } else {
            hedgeWatch = nil
        }
        // Replaced by each attempt's own before it is sent.
        self.current = AttemptState(
            request: request.urlRequest, collector: ResponseCollector(limit: nil), destination: .memory(uploadLength: nil), reportedURL: nil,
            responseLimit: ResponseStartLimit(startedAt: .uptimeNanoseconds(0), limit: parts.timeouts.request, streamsBody: false), cache: nil)
        // A hedge's copy comes with its place, which is its own from now on, whatever happens.
        permit.start(for: request)
        // Last: the exchange takes the request over (no copy of it is made).
        self.request = request
    }

    /// Starts an exchange of `request` for `owner` on `parts`, with a client span when the
    /// session traces (``ExchangeParts/traced(_:)``).
    static func start(_ request: consuming TransportRequest, parts: ExchangeParts, progress: TransportProgressHandler?, owner: any TransportOwner) {
        let (tracedRequest, span) = parts.traced(request)
        TransportExchange(parts: parts, request: tracedRequest, progress: progress, owner: owner, span: span).start()
    }

    /// Sends a request of the exchange's own (a cache's background refresh) in an exchange of
    /// its own on the same parts.
    private func sendAlone(_ request: TransportRequest, owner: any TransportOwner) {
        Self.start(request, parts: parts, progress: nil, owner: owner)
    }

    func start() {
        if let refusal = parts.inFlight.enter() {
            // Never counted as in flight: only the span and the owner hear of it.
            report(.failure(refusal))
            return
        }
        if case .file(let sink) = destination {
            // A folder that cannot be used safely fails the download before a byte is requested.
            do {
                fileDirectory = try sink.folder.prepare()
            } catch {
                finish(.failure(error))
                return
            }
            // A partial file that is gone (deleted since the download was interrupted) is no
            // longer a place to go on from.
            if let resume, !FileManager.default.fileExists(atPath: resume.file.path) {
                self.resume = nil
                owner.transportDroppedResumePoint()
            }
        }
        // A request's `httpBodyStream` is its body, when nothing replaces it (an interceptor may
        // have set it on the attempt).
        let body = request.body ?? StreamedBody.bodyStream(of: request.urlRequest)
        send(ExchangeAttempt(urlRequest: request.urlRequest, body: body, startedAt: .now()))
    }

    /// The session's HTTP cache, when this exchange may use it: data requests and streamed
    /// responses (downloads to a file bypass it). A streamed response the cache answers (a fresh
    /// hit, a `304` to its validation) is the stored response, whole; one from the network is
    /// copied while it streams (``StreamCacheTee``) and stored once it has ended.
    private var cache: CacheStage? {
        if case .file = destination { return nil }
        return parts.cache
    }

    /// Sends `attempt` through the cache's stage before it (``CacheStage/before(_:)``), which
    /// answers it from the cache or lets it go (made conditional when the cache holds a response
    /// to validate); then routes it.
    private func send(_ attempt: ExchangeAttempt) {
        // A cache whose storage is failing is passed by at once (``CacheStage/bypasses(_:)``):
        // without its state, the attempt's response is not offered to it either.
        guard let cache, !cache.bypasses(attempt) else {
            route(attempt)
            return
        }
        let streams = storedResponseStreams
        cache.withIO { [self] in
            switch await cache.before(attempt, streams: streams) {
            case .stream(let head, let reader, let refreshKey):
                guard owner.transportIsWanted else {
                    await reader.close()
                    finish(.failure(HTTPClientError.cancelled))
                    return
                }
                if let refreshKey {
                    cache.refreshInBackground(attempt.urlRequest, credential: request.credential, key: refreshKey, send: sendAlone)
                }
                await streamStored(head, reader: reader, of: attempt)
            case .answer(let stored, let refreshKey):
                guard owner.transportIsWanted else {
                    finish(.failure(HTTPClientError.cancelled))
                    return
                }
                if let refreshKey {
                    cache.refreshInBackground(attempt.urlRequest, credential: request.credential, key: refreshKey, send: sendAlone)
                }
                deliver(stored, of: attempt)
            case .send(let attempt):
                route(attempt)
            case .unavailable(let error):
                finish(.failure(error))
            }
        }
    }

    /// Routes `attempt`, once the session's policies let it go (``PolicyStage``): an open
    /// breaker or a full queue fails it before anything is sent (a stored response has answered
    /// before this, whatever they say). The request's first attempt to the network also takes
    /// its place under its origin's concurrency limit, which it keeps across its redirects
    /// until it ends or streams, refills the origin's budget, and learns its hedge's delay.
    private func route(_ attempt: ExchangeAttempt) {
        let entry: PolicyStage.Entry =
            permit.admittedBefore ? .followUp : .first(refillsBudget: request.refillsBudget, hedging: hedgeWatch != nil ? request.hedging : nil)
        switch parts.policies.admit(attempt.urlRequest.url, entry, permit: &permit, client: self) {
        case .goes:
            connect(attempt)
        case .refused(let error):
            refused(error)
        case .waits(let pending):
            parts.policies.wait(pending, client: self) { [self] answer in go(attempt, after: answer) }
        }
    }

    /// Sends `attempt` as the `answer` that ended its wait says, or ends the exchange.
    private func go(_ attempt: ExchangeAttempt, after answer: PolicyAnswer) {
        permit = answer.permit
        switch answer.stop {
        case nil:
            connect(attempt)
        case .refused(let error):
            refused(error)
        case .cancelled:
            finish(.failure(HTTPClientError.cancelled))
        }
    }

    /// Ends the exchange with the policies' refusal `error`, which its span shows.
    private func refused(_ error: any Error) {
        if let event = ResilienceEvent(refusal: error) { addSpanEvent(event) }
        finish(.failure(error))
    }

    /// Connects `attempt`, which its policies let go, along its route.
    private func connect(_ attempt: ExchangeAttempt) {
        var route: TransportRoute
        let client: HTTPClient
        do {
            route = try parts.routes.route(for: attempt.urlRequest)
            switch try parts.routes.proxyRoute(for: attempt.urlRequest, streaming: pacesReading) {
            case .client(let proxyClient):
                client = proxyClient
            case .forward(let proxy, let ownClient):
                // Only plain `http` is forwarded, and such a request is always routed direct.
                route = .forwarded(proxy)
                client = ownClient
            }
        } catch {
            finish(.failure(error))
            return
        }
        let socketPath: EventLoopFuture<String>
        let failuresBefore: Int
        switch route {
        case .bridged(let upstream):
            failuresBefore = parts.routes.bridge.failureCount(for: upstream)
            socketPath = parts.routes.bridge.socketPath(for: upstream)
        case .forwarded(let proxy):
            failuresBefore = parts.routes.bridge.failureCount(for: proxy)
            socketPath = parts.routes.bridge.socketPath(for: proxy)
        case .direct, .directWithTLS:
            send(attempt, route: route, client: client, socketPath: nil)
            return
        }
        socketPath.whenComplete { [self, attempt, route] result in
            switch result {
            case .success(let path):
                send(attempt, route: route, client: client, socketPath: path, bridgeFailuresBefore: failuresBefore)
            case .failure(let error):
                finish(.failure(error))
            }
        }
    }

    private func send(_ attempt: ExchangeAttempt, route: TransportRoute, client: HTTPClient, socketPath: String?, bridgeFailuresBefore: Int = 0) {
        // A streamed body's upload and the attempt's task share one loop (`run(_:context:client:)`
        // asks AsyncHTTPClient for it), the lone request's one when there is one. Without a body
        // the exchange lets AsyncHTTPClient choose (as its own `execute(request:)` does), which
        // avoids hopping between loops on every response part. Only ask for a loop when there is
        // a body: `any()` advances the group's round robin, and taking every other turn would
        // leave AsyncHTTPClient the same loop for every request (all connections on one thread).
        let clientRequest: HTTPClient.Request
        let streamedBody = attempt.body ?? BodyStreamer.streamedBody(for: attempt.urlRequest.httpBody)
        let streamer = streamedBody.map {
            BodyStreamer(body: $0, eventLoop: parts.placement.loneRequestLoop() ?? parts.routes.client.eventLoopGroup.any(), writeTimeout: parts.timeouts.write)
        }
        do {
            clientRequest = try parts.requests.make(
                attempt.urlRequest, authorization: attempt.authorization, body: streamer?.clientBody, route: route, socketPath: socketPath,
                crossedOrigin: attempt.crossedOrigin, additionalHeaders: attempt.cacheState?.validation?.headers ?? resumeHeaders
            )
        } catch {
            finish(.failure(parts.explainingFailure(error, of: attempt.urlRequest)))
            return
        }
        let context = AttemptContext(
            attempt: attempt, route: route, client: client, socketPath: socketPath, bridgeFailuresBefore: bridgeFailuresBefore, streamer: streamer)
        let limit = ResponseStartLimit(startedAt: attempt.startedAt, limit: parts.timeouts.request, streamsBody: streamedBody != nil)
        // A bridged request goes to a local socket; the response names the real URL.
        let reportedURL: URL? =
            switch route {
            case .bridged, .forwarded: attempt.urlRequest.url
            case .direct, .directWithTLS: nil
            }
        // The exchange is the attempt's delegate: its state for this attempt.
        let collector: ResponseCollector
        let destinationState: AttemptState.Destination
        switch destination {
        case .memory:
            collector = ResponseCollector(limit: parts.maximumResponseBodySize)
            destinationState = .memory(uploadLength: attempt.body.map { $0.length.map { Int64(clamping: $0) } ?? -1 })
        case .file:
            collector = ResponseCollector(limit: Int64(DownloadSink.errorBodyLimit), overflow: .truncates)
            destinationState = .file(DownloadAttemptState())
        case .stream:
            collector = ResponseCollector(limit: Int64(StreamSink.errorBodyLimit), overflow: .truncates)
            destinationState = .stream(StreamAttemptState())
        }
        current = AttemptState(
            request: attempt.urlRequest, collector: collector, destination: destinationState, reportedURL: reportedURL, responseLimit: limit,
            cache: attempt.cacheState, streamer: streamer)
        permit.requestWrittenAt = nil
        run(clientRequest, context: context, client: client)
    }

    /// An attempt with how it was routed.
    struct AttemptContext {
        let attempt: ExchangeAttempt
        let route: TransportRoute
        /// The client that sends the attempt: the session's, or one for a proxy.
        let client: HTTPClient
        /// For a bridged route, the bridge's socket for the host.
        let socketPath: String?
        /// The bridge's failure count for the host before this attempt (see
        /// ``TLSBridge/failure(for:after:)``).
        let bridgeFailuresBefore: Int
        /// Sends the attempt's streamed body, if it has one.
        let streamer: BodyStreamer?
    }

    /// Executes one attempt on `client`, with this exchange as its delegate. A download's
    /// response is used once its file is complete (``settleFile(_:on:)``); a failure is reported
    /// once a download's partial file is gone (``discardFile(on:)``), so that nothing is left
    /// behind when the completion runs.
    private func run(_ clientRequest: HTTPClient.Request, context: AttemptContext, client: HTTPClient) {
        // A request to an origin whose first connection is still opening waits for it (see
        // ``FirstConnectionGate``). Bridged and forwarded requests go to a local socket.
        if let gate = parts.placement.firstConnectionGate, context.socketPath == nil {
            let origin = FirstConnectionGate.Origin(client: client, request: clientRequest)
            let passage = gate.pass(origin, loop: parts.placement.soloEventLoop) {
                { [self] in runAfterGate(clientRequest, context: context, client: client) }
            }
            switch passage {
            case .proceed:
                break
            case .opens:
                openingOrigin = origin
            case .waits:
                return
            }
        }
        // A request alone in flight, made off the event loops, moves to the session's own loop
        // before AsyncHTTPClient sees it: there AsyncHTTPClient registers its callbacks, finds the
        // pooled connection and writes the request without a hand-over to the loop for each (one
        // wake-up of the loop's thread instead of three).
        //
        // A streamed body's task runs on its upload's loop. There the upload hands AsyncHTTPClient
        // the last chunk and the end in one turn, and AsyncHTTPClient's request takes the end
        // before it can hear of a response. A server may answer as soon as it has the declared
        // bytes; when that answer (with its body) reached the request first, AsyncHTTPClient
        // 1.37 succeeded the task while the connection still waited for the end, which it then
        // dropped: the connection stayed leased, and after a few such requests the pool had none
        // left.
        if let loop = context.streamer?.eventLoop ?? parts.placement.loneRequestLoop() {
            execute(clientRequest, context: context, client: client, on: loop)
        } else {
            execute(clientRequest, context: context, client: client, preference: .indifferent, pending: nil)
        }
    }

    /// Sends an attempt that waited for its origin's first connection: on the group's next
    /// event loop in turn, so that the connections the pool opens for the waiting requests are
    /// spread over the loops.
    private func runAfterGate(_ clientRequest: HTTPClient.Request, context: AttemptContext, client: HTTPClient) {
        let loop = context.streamer?.eventLoop ?? client.eventLoopGroup.next()
        execute(clientRequest, context: context, client: client, on: loop)
    }

    /// Executes the attempt on `loop`, after a hop there. The owner records the attempt before
    /// the hop (``PendingAttempt``), so that a cancel during the hop stops it before anything is
    /// sent.
    private func execute(_ clientRequest: HTTPClient.Request, context: AttemptContext, client: HTTPClient, on loop: any EventLoop) {
        let pending = PendingAttempt(loop: loop)
        guard attemptStarted(pending) else {
            notStarted(context)
            return
        }
        loop.execute { self.execute(clientRequest, context: context, client: client, preference: .delegate(on: loop), pending: pending) }
    }

    /// Records `task`, an attempt now handed to AsyncHTTPClient, with the owner (through
    /// `pending` when it hopped to its loop, already recorded), so that a cancel stops it (the
    /// owner stops it itself when the request ended meanwhile); an attempt that waited for a
    /// connection before has its response-start limit armed from the start.
    func recordStarted<Task: ExchangeTask & TransportAttempt>(_ task: Task, pending: PendingAttempt?, context: AttemptContext) {
        let isWanted: Bool
        if let pending {
            pending.started(task)
            isWanted = true
        } else {
            isWanted = attemptStarted(task)
        }
        if isWanted, context.attempt.waitedBefore {
            task.eventLoop.execute { self.armResponseLimit(for: task) }
        }
    }

    /// Ends an attempt that was cancelled before it started.
    private func notStarted(_ context: AttemptContext) {
        releaseOrigin()
        context.streamer?.stop()
        finish(.failure(HTTPClientError.cancelled))
    }

    /// The attempt opened its origin's first connection, or ended without: the requests that
    /// wait for it go (``FirstConnectionGate/opened(_:)``). Called on the attempt's event loop.
    func releaseOrigin() {
        guard let origin = openingOrigin else { return }
        openingOrigin = nil
        parts.placement.firstConnectionGate?.opened(origin)
    }

    /// Executes the attempt on `client`, asking for the event loop `preference` names. An
    /// attempt that hopped to its loop was recorded by the owner before (`pending`); any other
    /// is recorded once AsyncHTTPClient has its task.
    private func execute(
        _ clientRequest: HTTPClient.Request, context: AttemptContext, client: HTTPClient, preference: HTTPClient.EventLoopPreference,
        pending: PendingAttempt?
    ) {
        if let pending, pending.isCancelled {
            notStarted(context)
            return
        }
        // A stream whose body is streamed too is full duplex (`TransportExchange+Duplex.swift`).
        if case .stream(let sink) = destination, let streamer = context.streamer {
            executeDuplex(clientRequest, sink: sink, streamer: streamer, context: context, client: client, pending: pending)
            return
        }
        let task = client.execute(request: clientRequest, delegate: self, eventLoop: preference, deadline: timeLimit)
        recordStarted(task, pending: pending, context: context)
        task.futureResult.whenComplete { [self] result in
            attemptEnded(result, context: context, on: task.eventLoop)
        }
    }

    /// The attempt of `context` ended with `result`; call on its event loop. Whatever happened,
    /// the attempt is over: its timers stop (on its loop, where they run) and what its upload
    /// reads is closed, unless `keepsUpload` (a full-duplex stream's body goes on after its
    /// answer, `TransportExchange+Duplex.swift`). Then the exchange ends, or goes on with
    /// another attempt.
    func attemptEnded(_ result: Result<TransportResponse, any Error>, context: AttemptContext, on eventLoop: any EventLoop, keepsUpload: Bool = false) {
        releaseOrigin()
        current.responseLimit.cancel()
        current.ended = true
        cancelIdleTimer()
        if !keepsUpload {
            context.streamer?.stop()
        }
        let result = result.flatMapError { earlyAnswer(to: $0, context: context) }
        switch result {
        case .success(let response):
            permit.attemptEnded(.status(response.statusCode), response: response.response)
        case .failure(let error):
            let followUp = followUp(after: .failure(FollowUp.Failure(error)), of: context.attempt, streamedBody: context.streamer != nil)
            // An attempt sent again the same way (it reached no server) is the same request to
            // the breaker: its last attempt's outcome counts.
            if !followUp.keepsRoute {
                permit.attemptEnded(CircuitBreaker.Outcome(failure: error))
            }
            if act(on: followUp, after: context) {
                return
            }
        }
        switch result {
        case .success(let response):
            guard current.fileCreation != nil else {
                deliver(response, of: context.attempt)
                return
            }
            settleFile(response, on: eventLoop).whenComplete { settled in
                switch settled {
                case .success(let response):
                    self.deliver(response, of: context.attempt)
                case .failure(let error):
                    self.finish(.failure(self.failureError(error, of: context)))
                }
            }
        case .failure(let error):
            // A stored response may answer instead (stale-if-error); the cache is read off
            // the loop.
            if let cache, mayAnswerStale(context.attempt) {
                cache.withIO { [self] in
                    if let stale = await staleIfError(for: context.attempt) {
                        finishDelivery(stale, of: context.attempt)
                    } else {
                        finish(.failure(failureError(error, of: context)))
                    }
                }
                return
            }
            let error = failureError(error, of: context)
            guard current.fileCreation != nil else {
                finish(.failure(error))
                return
            }
            // A download that got part of a resumable response keeps it, unless the caller
            // cancelled.
            if current.download?.resumeValidator != nil, current.download?.file != nil, owner.transportIsWanted {
                keepPartialFile(on: eventLoop).whenComplete { kept in
                    if case .success(let (resume, file)?) = kept {
                        self.finish(.failure(InterruptedDownload(underlying: error, resume: resume, file: file)))
                    } else {
                        self.finish(.failure(error))
                    }
                }
                return
            }
            discardFile(on: eventLoop).whenComplete { _ in
                self.finish(.failure(error))
            }
        }
    }

    /// The response of an attempt that AsyncHTTPClient failed with `requestStreamCancelled`
    /// although the server answered it whole, after the last byte of its streamed body: `error`
    /// itself otherwise.
    ///
    /// A server may answer as soon as it has the bytes the `Content-Length` announced, before the
    /// upload has said that the body is over. When that answer is a redirect or an error status
    /// (`>= 300`), and all of it arrived before that end did, AsyncHTTPClient's connection has
    /// finished the request and refuses the end, and the task fails with that refusal instead of
    /// succeeding with the response it has. The response is used when the upload handed the whole
    /// body over ``BodyStreamer/hasSentWholeBody`` (a failed upload fails the task with its own
    /// error) and the delegate has a final head: the task only fails that way once AsyncHTTPClient
    /// has received the response's end, and the delegate every part of its body. Called on the
    /// task's event loop, as the delegate's methods are.
    private func earlyAnswer(
        to error: any Error, context: AttemptContext
    ) -> Result<TransportResponse, any Error> {
        if let clientError = error as? HTTPClientError, clientError == .requestStreamCancelled,
            let streamer = context.streamer, streamer.hasSentWholeBody,
            let response = try? finishedResponse()
        {
            return .success(response)
        }
        // A success that arrived whole while the body was still being sent (the delegate takes
        // its last part once the upload ends, `holdingForUpload(_:streams:)`), after which the
        // server closed the connection or stopped reading, so that the upload failed: the server
        // has answered, and its answer is the response. Not when the caller's own limits ended
        // the request.
        if context.streamer != nil, current.isEarlySuccessPossible, current.expected >= 0, current.received == current.expected,
            !Self.endsByCallersLimit(error), let response = try? finishedResponse()
        {
            return .success(response)
        }
        return .failure(error)
    }

    /// Whether `error` is a cancel or the exchange's time limit, which end a request whatever it
    /// received.
    private static func endsByCallersLimit(_ error: any Error) -> Bool {
        guard let clientError = error as? HTTPClientError else { return false }
        return clientError == .cancelled || clientError == .deadlineExceeded
    }

    /// Reports `response` of the attempt, or sends the attempt that follows it up (a redirect,
    /// the answer to a challenge). A response from the network first gives its cookies to the
    /// session's jar and goes through its cache (a `304` to a validation becomes the stored
    /// response).
    private func deliver(_ response: TransportResponse, of attempt: ExchangeAttempt) {
        guard response.cacheStatus == .network else {
            finishDelivery(response, of: attempt)
            return
        }
        parts.cookies.store(from: response, of: attempt.urlRequest)
        // Every attempt sent with a cache has its state (``send(_:)``).
        guard let cache, let state = attempt.cacheState else {
            finishDelivery(response, of: attempt)
            return
        }
        // The whole body, to store: a streamed response's copy (none when its consumer stopped,
        // or when it was not the whole body), or the body collected in memory, unless it was an
        // error body cut at its limit.
        let body: Data?
        var spool: CacheSpool?
        if current.isStreaming {
            guard owner.transportIsWanted else {
                finishDelivery(response, of: attempt)
                return
            }
            if let cacheTee = current.stream?.cacheTee {
                body = cacheTee.body
                spool = cacheTee.spool?.spool
                // Ended here, while the exchange still holds the spool: whatever becomes of the
                // attempt's state from now on, the copy is whole.
                spool?.end()
            } else {
                body = Data()
            }
        } else {
            body = current.collector.truncated ? nil : response.data
        }
        // After the exchange, the cache's stage: a server error may be answered with the stored
        // response (stale-if-error), only for what may answer stale. Asked (the owner's lock)
        // only for such an error, and here on the attempt's loop, where `current` is read.
        let mayAnswerStale = CacheStage.staleIfErrorStatuses.contains(response.statusCode) && mayAnswerStale(attempt)
        let spooled = spool
        cache.withIO { [self] in
            let after = await cache.after(response, of: attempt, state: state, body: body, spool: spooled, mayAnswerStale: mayAnswerStale)
            if after.replaced {
                discard(response)
            }
            finishDelivery(after.response, of: attempt)
        }
    }

    /// The stored response that answers `attempt` in place of its failure, when its
    /// `stale-if-error` allows (``CacheStage/staleIfError(for:)``): only for an attempt the cache
    /// saw, whose result is still wanted, that does not stream or download. Reads the cache (a
    /// disk cache's file too).
    private func staleIfError(for attempt: ExchangeAttempt) async -> TransportResponse? {
        guard mayAnswerStale(attempt), let cache else { return nil }
        return await cache.staleIfError(for: attempt)
    }

    /// Whether ``staleIfError(for:)`` may find a stored response for `attempt`, without reading
    /// the cache: one the cache saw, whose result is still wanted, that does not stream or
    /// download.
    private func mayAnswerStale(_ attempt: ExchangeAttempt) -> Bool {
        cache != nil && attempt.cacheState != nil && !current.isStreaming && current.fileCreation == nil && owner.transportIsWanted
    }

    /// Reports `response`, or sends the attempt that follows it up.
    func finishDelivery(_ response: TransportResponse, of attempt: ExchangeAttempt) {
        // Almost every response is the result.
        if !act(on: followUp(after: .response(response), of: attempt, streamedBody: false), after: nil, replacing: response) {
            finish(.success(response))
        }
    }

    /// The one place that acts on what follows an attempt (``FollowUp``): sends the next attempt
    /// (the way `context`'s attempt went, when that one reached no server), or fails the
    /// exchange. `response`, the outcome when it was a response, is discarded then.
    ///
    /// - Returns: `false` for ``FollowUp/end``: the outcome is the result, for the caller to
    ///   report.
    private func act(on followUp: FollowUp, after context: AttemptContext?, replacing response: TransportResponse? = nil) -> Bool {
        switch followUp {
        case .end:
            return false
        case .fail(let error):
            if let response { discard(response) }
            finish(.failure(error))
        case .send(let next, let step):
            if let response { discard(response) }
            if case .restartRange = step, let refused = resume {
                giveUpResumePoint(file: refused.file, deleting: true)
            }
            if step.keepsRoute, let context {
                send(next, like: context)
            } else {
                send(next)
            }
        }
        return true
    }

    /// What follows `attempt` after `outcome`
    /// (``FollowUp/decide(after:of:rules:isWanted:isShuttingDown:)``), with what the exchange
    /// knows now. The owner and the session are asked (each under its lock) only when the
    /// decision needs them.
    private func followUp(after outcome: FollowUp.Outcome, of attempt: ExchangeAttempt, streamedBody: Bool) -> FollowUp {
        let facts = FollowUp.Facts(
            outcome: outcome, headSent: current.responseLimit.headSent, hasResponse: current.responseLimit.hasResponse,
            limitFired: current.responseLimit.fired, streamedBody: streamedBody, resumesRange: resume != nil, now: .now())
        return FollowUp.decide(
            after: facts, of: attempt, rules: followUpRules, isWanted: { owner.transportIsWanted }, isShuttingDown: { parts.inFlight.isShutDown })
    }

    /// What the exchange's follow-ups obey.
    private var followUpRules: FollowUp.Rules {
        FollowUp.Rules(
            redirectPolicy: parts.redirectPolicy, requestTimeout: parts.timeouts.request, timeLimit: timeLimit,
            credential: request.credential, firstURL: request.urlRequest.url, errors: .asyncHTTPClient)
    }

    /// Ends the exchange with `result`: the session counts it as no longer in flight, its span
    /// ends, and the owner hears of it. Every end goes through here, exactly once.
    func finish(_ result: Result<TransportResponse, any Error>) {
        // A request that may be hedged: its timer stops, or its race takes the result; a
        // response's latency is kept for a percentile delay.
        let hedge = hedgeWatch.map { endHedge($0, result: result) }
        // The last attempt's outcome (an admitted attempt that ended before it had one, its
        // request could not be made or its route failed, is forgotten), the place and the
        // latency go back to the policies.
        parts.policies.end(&permit, hedgeLatency: hedge?.latency, client: self)
        parts.inFlight.ended()
        report(result, race: hedge?.race)
    }

    /// Ends the span with `result`, then gives it to the owner (or to the `race` of the
    /// request's copies, which decides): the span has ended when the caller hears of the result.
    private func report(_ result: Result<TransportResponse, any Error>, race: HedgedExchange? = nil) {
        if let span { TracePropagation.endSpan(span, with: result) }
        if let race {
            race.copyFinished(0, result: result, request: request.urlRequest)
            return
        }
        owner.transportFinished(result, request: request.urlRequest)
    }

    /// Puts `event` on the request's span, under its name (``ResilienceEvent/spanEventName``),
    /// with `attributes`, by default its origin.
    func addSpanEvent(_ event: ResilienceEvent) {
        let attributes: SpanAttributes =
            if case .queued(_, let seconds) = event { ["moya.wait_seconds": .double(seconds)] } else { ["moya.origin": .string(event.origin)] }
        span?.addEvent(SpanEvent(name: event.spanEventName, attributes: attributes))
    }

    /// Returns the request's place under its origin's concurrency limit, once, with `outcome`
    /// (or the last attempt's): its streamed head is handed over, and a stream does not hold a
    /// place while it is read.
    func releasePlace(outcome: CircuitBreaker.Outcome? = nil, response: DeferredHTTPURLResponse? = nil) {
        parts.policies.releasePlace(of: &permit, outcome: outcome, response: response)
    }

    /// Sends `attempt` again the way `context`'s attempt went: same route, client and socket.
    private func send(_ attempt: ExchangeAttempt, like context: AttemptContext) {
        send(attempt, route: context.route, client: context.client, socketPath: context.socketPath, bridgeFailuresBefore: context.bridgeFailuresBefore)
    }

    /// The error to report for a failed attempt: for a bridged one, why the bridge dropped the
    /// connection (a rejected key or certificate, a refused connection), when it did.
    private func failureError(_ error: any Error, of context: AttemptContext) -> any Error {
        if case .bridged(let upstream) = context.route,
            owner.transportIsWanted,
            let bridgeFailure = parts.routes.bridge.failure(for: upstream, after: context.bridgeFailuresBefore)
        {
            let server = TransportError.Endpoint(host: upstream.host, port: upstream.port, isProxy: false)
            return TransportError.connectionFailure(bridgeFailure, endpoint: server) ?? bridgeFailure
        }
        if case .forwarded(let proxy) = context.route,
            owner.transportIsWanted,
            let proxyFailure = parts.routes.bridge.failure(for: proxy, after: context.bridgeFailuresBefore)
        {
            let endpoint = TransportError.Endpoint(host: proxy.host, port: proxy.port, isProxy: true)
            if let connectionFailure = TransportError.connectionFailure(proxyFailure, endpoint: endpoint) {
                return connectionFailure
            }
            return URLError(
                .cannotConnectToHost,
                userInfo: [
                    NSLocalizedDescriptionKey: "Could not connect to the HTTP proxy \(proxy.host):\(proxy.port): \(proxyFailure)",
                    NSUnderlyingErrorKey: proxyFailure as NSError,
                ])
        }
        return parts.explainingFailure(error, of: context.attempt.urlRequest)
    }

    private func discard(_ response: TransportResponse) {
        PartialFile.discard(response.fileURL)
    }
}
