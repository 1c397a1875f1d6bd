import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Real requests against the in-process server")
struct ProviderNetworkTests {
    let server: TestServer
    let provider = MoyaProvider<Remote>()
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("A request whose provider is released while it runs still completes, with the response", arguments: [false, true])
    func releasedProvider(withPlugin: Bool) async throws {
        weak var released: MoyaProvider<Remote>?
        let target = Remote(base, "/delay/300")
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            var provider: MoyaProvider<Remote>? = MoyaProvider<Remote>(
                callbackQueue: DispatchQueue(label: "released-provider"),
                plugins: withPlugin ? [RecordingPlugin()] : []
            )
            released = provider
            _ = provider?.request(target) { result in
                continuation.resume(returning: result)
            }
            provider = nil
        }
        #expect(try result.get().statusCode == 200)
        #expect(try result.get().data == Data("delayed".utf8))
        // Once the request is over, nothing keeps the provider.
        #expect(await eventually { released == nil })
    }

    @Test("A GET reaches the server with the target's path, query, headers and the session headers")
    func echoGet() async throws {
        let target = Remote(
            base, "/echo/users", task: .requestParameters(parameters: ["sort": "pushed", "page": 2], encoding: URLEncoding.default),
            headers: ["X-Custom": "yes"])
        let result = await send(provider, target)
        let echo = try echo(of: result)
        #expect(echo.method == "GET")
        #expect(echo.path == "/echo/users")
        #expect(echo.query == "page=2&sort=pushed")
        #expect(echo.headers["x-custom"] == "yes")
        #expect(echo.headers["user-agent"]?.hasSuffix("Moya/\(MoyaInfo.version)") == true)
        #expect(echo.headers["accept-encoding"] == "gzip;q=1.0, deflate;q=0.9")
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(response.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
        // Response.request is the prepared request, without the session headers.
        #expect(response.request?.value(forHTTPHeaderField: "X-Custom") == "yes")
        #expect(response.request?.value(forHTTPHeaderField: "User-Agent") == nil)
    }

    @Test("A request header overrides the session header of the same name, whatever its case")
    func headerOverride() async throws {
        let result = await send(provider, Remote(base, "/echo", headers: ["user-agent": "Mine/1.0"]))
        #expect(try echo(of: result).headers["user-agent"] == "Mine/1.0")
    }

    @Test("Session headers come first, each once; a request header of the same name in any case replaces it")
    func sessionHeaderMerge() async throws {
        let session = Session(configuration: .init(headers: ["X-Session": "s", "X-Shared": "session", "Accept": "text/plain"]))
        let provider = MoyaProvider<Remote>(session: session)
        let withOwn = try echo(of: await send(provider, Remote(base, "/echo", headers: ["x-SHARED": "request", "X-Own": "o"])))
        let names = withOwn.headerList.map { $0[0].lowercased() }
        #expect(names.filter { $0 == "x-shared" }.count == 1)
        #expect(withOwn.headers["x-shared"] == "request")
        #expect(withOwn.headers["x-session"] == "s")
        #expect(withOwn.headers["accept"] == "text/plain")
        #expect(withOwn.headers["x-own"] == "o")
        let sessionIndex = try #require(names.firstIndex(of: "x-session"))
        let ownIndex = try #require(names.firstIndex(of: "x-own"))
        #expect(sessionIndex < ownIndex)
        // A request without headers of its own sends the session's as they are, and the shared
        // set is not changed by the request before it.
        let plain = try echo(of: await send(provider, Remote(base, "/echo")))
        #expect(plain.headers["x-shared"] == "session")
        #expect(plain.headers["x-own"] == nil)
        #expect(plain.headerList.map { $0[0].lowercased() }.filter { $0 == "x-shared" }.count == 1)
        try await session.shutdown()
    }

    @Test(
        "Bodies of every request task arrive as sent",
        arguments: [
            (Task.requestData(Data("raw".utf8)), "raw", nil as String?),
            (.requestJSONEncodable(["a": 1]), #"{"a":1}"#, "application/json"),
            (.requestParameters(parameters: ["b": "c d"], encoding: URLEncoding.httpBody), "b=c%20d", "application/x-www-form-urlencoded; charset=utf-8"),
            (.requestCompositeData(bodyData: Data("x".utf8), urlParameters: ["q": "1"]), "x", nil),
            (
                .requestCompositeParameters(bodyParameters: ["k": "v"], bodyEncoding: JSONEncoding.default, urlParameters: ["q": "1"]), #"{"k":"v"}"#,
                "application/json"
            ),
        ])
    func bodies(task: Task, body: String, contentType: String?) async throws {
        let result = await send(provider, Remote(base, "/echo", method: .post, task: task))
        let echo = try echo(of: result)
        #expect(echo.method == "POST")
        #expect(echo.body == body)
        #expect(echo.headers["content-type"] == contentType)
        if case .requestCompositeData = task { #expect(echo.query == "q=1") }
        if case .requestCompositeParameters = task { #expect(echo.query == "q=1") }
    }

    @Test(
        "The seed's MyService targets send what the docs promise",
        arguments: [
            (
                MyService.createUser(firstName: "James", lastName: "Potter"), "POST", "/users", nil as String?,
                #"{"first_name":"James","last_name":"Potter"}"# as String?
            ),
            (.updateUser(id: 123, firstName: "Harry", lastName: "Potter"), "POST", "/users/123", "first_name=Harry&last_name=Potter", nil),
            (.showUser(id: 7), "GET", "/users/7", nil, nil),
        ])
    func myService(target: MyService, method: String, path: String, query: String?, body: String?) async throws {
        let base = self.base
        let provider = MoyaProvider<MyService>(endpointClosure: { target in
            // The seed's targets name a public host; point them at the local server instead.
            let url = URL(target: target).absoluteString.replacingOccurrences(of: "https://api.myservice.com", with: base.absoluteString + "/echo")
            return Endpoint(
                url: url, sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method, task: target.task,
                httpHeaderFields: target.headers)
        })
        let echo = try echo(of: await send(provider, target))
        #expect(echo.method == method)
        #expect(echo.path == "/echo" + path)
        #expect(echo.query == query)
        if let body = body {
            let sent = try JSONSerialization.jsonObject(with: Data((echo.body ?? "").utf8)) as? [String: String]
            let expected = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String]
            #expect(sent == expected)
        } else {
            #expect(echo.body == nil)
        }
        #expect(echo.headers["content-type"] == "application/json")
    }

    @Test("Status codes: no validation passes everything, validation fails with .statusCode and the body")
    func statusValidation() async throws {
        let plain = try await send(provider, Remote(base, "/status/500")).get()
        #expect(plain.statusCode == 500)

        let result = await send(provider, Remote(base, "/status/404", validationType: .successCodes))
        guard case .statusCode(let response)? = result.error else {
            Issue.record("expected .statusCode, got \(result)")
            return
        }
        #expect(response.statusCode == 404)
        #expect((try response.mapJSON() as? [String: Any])?["status"] as? Int == 404)
        #expect(response.response?.statusCode == 404)
        #expect(result.error?.response?.statusCode == 404)

        let custom = await send(provider, Remote(base, "/status/418", validationType: .customCodes([418])))
        #expect(custom.response?.statusCode == 418)
        let redirectOK = await send(provider, Remote(base, "/status/304", validationType: .successAndRedirectCodes))
        #expect(redirectOK.response?.statusCode == 304)
    }

    @Test("Redirects are followed and the response carries the final URL")
    func redirects() async throws {
        let response = try await send(provider, Remote(base, "/redirect/3")).get()
        #expect(response.statusCode == 200)
        #expect(response.response?.url?.path == "/echo")
        let loop = await send(provider, Remote(base, "/redirect-loop"))
        #expect((loop.error?.underlyingError as? URLError)?.code == .httpTooManyRedirects)
    }

    @Test(
        "Redirects change the method, body and credentials as browsers do, on the direct path and the general pipeline",
        arguments: [false, true])
    func redirectSemantics(general: Bool) async throws {
        let provider = MoyaProvider<Remote>(plugins: general ? [RecordingPlugin()] : [])
        func redirect(to location: String, status: Int) throws -> URL {
            var components = try #require(URLComponents(url: base.appendingPathComponent("redirect-to"), resolvingAgainstBaseURL: false))
            components.queryItems = [URLQueryItem(name: "url", value: location), URLQueryItem(name: "status", value: "\(status)")]
            return try #require(components.url)
        }
        let body = Task.requestData(Data("payload".utf8))
        let headers = ["Authorization": "Bearer secret", "Content-Type": "text/plain"]
        // 303: GET without the body.
        let seeOther = try echo(of: await send(provider, Remote(try redirect(to: "/echo", status: 303), "", method: .post, task: body, headers: headers)))
        #expect(seeOther.method == "GET")
        #expect(seeOther.bodyLength == 0)
        #expect(seeOther.headers["content-type"] == nil)
        #expect(seeOther.headers["authorization"] == "Bearer secret")
        // 307: the same method and body.
        let temporary = try echo(of: await send(provider, Remote(try redirect(to: "/echo", status: 307), "", method: .put, task: body, headers: headers)))
        #expect(temporary.method == "PUT")
        #expect(temporary.body == "payload")
        // Another origin (another host name for the same server) gets no credentials.
        let otherOrigin = "http://localhost:\(server.port)/echo"
        let crossed = try echo(of: await send(provider, Remote(try redirect(to: otherOrigin, status: 302), "", headers: headers)))
        #expect(crossed.headers["authorization"] == nil)
        // The session's own credentials stay behind too, on every later hop.
        let withCredentials = Session(configuration: .init(headers: ["Authorization": "Bearer session", "Cookie": "a=b", "X-Other": "kept"]))
        let sessionProvider = MoyaProvider<Remote>(session: withCredentials, plugins: general ? [RecordingPlugin()] : [])
        let backHome = try redirect(to: "\(base.absoluteString)/echo", status: 302).absoluteString
        let viaOther = try redirect(
            to: "http://localhost:\(server.port)/redirect-to?url=\(backHome.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", status: 302)
        let sameOrigin = try echo(of: await send(sessionProvider, Remote(try redirect(to: "/echo", status: 302), "")))
        #expect(sameOrigin.headers["authorization"] == "Bearer session")
        let leftAndBack = try echo(of: await send(sessionProvider, Remote(viaOther, "")))
        #expect(leftAndBack.headers["authorization"] == nil)
        #expect(leftAndBack.headers["cookie"] == nil)
        #expect(leftAndBack.headers["x-other"] == "kept")
        try await withCredentials.shutdown()
        // The policy's maximum is the number of redirects followed (`/redirect/n` takes n + 1).
        let session = Session(configuration: .init(redirectPolicy: .follow(max: 2, allowCycles: false)))
        let limited = MoyaProvider<Remote>(session: session, plugins: general ? [RecordingPlugin()] : [])
        #expect(await send(limited, Remote(base, "/redirect/1")).response?.statusCode == 200)
        let tooMany = await send(limited, Remote(base, "/redirect/2"))
        #expect((tooMany.error?.underlyingError as? URLError)?.code == .httpTooManyRedirects)
        try await session.shutdown()
    }

    @Test("Progress through redirects reports only the final body")
    func redirectProgress() async throws {
        let progress = Recorder<(Int64, Int64)>()
        let target = Remote(try #require(URL(string: "\(base.absoluteString)/redirect-to?url=/bytes/1000")), "")
        let result = await send(
            provider, target,
            progress: { event in
                if let object = event.progressObject { progress.append((object.completedUnitCount, object.totalUnitCount)) }
            })
        #expect(try result.get().data.count == 1000)
        #expect(progress.values.allSatisfy { $0.1 == 1000 }, "\(progress.values)")
        #expect(progress.values.last?.0 == 1000)
    }

    @Test("Redirects can be disallowed")
    func redirectsDisallowed() async throws {
        let session = Session(configuration: .init(redirectPolicy: .disallow))
        let provider = MoyaProvider<Remote>(session: session)
        let result = await send(provider, Remote(base, "/redirect/1"))
        try await session.shutdown()
        let response = try result.get()
        #expect(response.statusCode == 302)
        #expect(response.response?.value(forHTTPHeaderField: "Location") == "/redirect/0")
    }

    @Test("gzip and deflate bodies are decompressed", arguments: ["gzip", "deflate"])
    func compressed(encoding: String) async throws {
        let response = try await send(provider, Remote(base, "/" + encoding)).get()
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["compressed"] as? Bool == true)
        #expect(json["method"] as? String == encoding)
    }

    @Test("Bodies on both sides of the copy threshold (16 KiB) arrive whole", arguments: [1, 13, 16_384, 16_385, 40_000])
    func bodiesAroundCopyThreshold(count: Int) async throws {
        let response = try await send(provider, Remote(base, "/bytes/\(count)")).get()
        #expect(response.data.count == count)
        #expect(response.data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
    }

    @Test("Chunked and fixed-length bodies arrive whole", arguments: [true, false])
    func largeBodies(withLength: Bool) async throws {
        let count = 1_000_000
        let response = try await send(
            provider,
            Remote(
                base, "/bytes/\(count)",
                task: .requestParameters(parameters: ["chunk": 65536, "length": withLength], encoding: URLEncoding(boolEncoding: .literal)))
        ).get()
        #expect(response.data.count == count)
        #expect(response.data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
    }

    @Test("Progress: 4000 bytes in four chunks with a Content-Length")
    func progressKnownLength() async throws {
        let events = Recorder<ProgressResponse>()
        let target = Remote(
            base, "/bytes/4000", task: .requestParameters(parameters: ["chunk": 1000, "interval_ms": 100, "length": "true"], encoding: URLEncoding.default))
        let result = await send(provider, target, queue: DispatchQueue.global(), progress: { events.append($0) })
        #expect(result.response?.data.count == 4000)
        let values = events.values.map(\.progress)
        // Usually [0.25, 0.5, 0.75, 1.0, 1.0]; on a loaded machine TCP may merge chunks, and
        // events that wait for a busy delivery queue are merged (down to [1.0, 1.0] when the
        // queue was blocked for the whole transfer), so check the shape: partial fractions that
        // only grow, the last data event at 1.0, then the completed event.
        #expect(values.count >= 2, "\(values)")
        #expect(values.suffix(2) == [1.0, 1.0], "\(values)")
        if values.count > 2 {
            #expect(values.first.map { $0 > 0 && $0 < 1 } == true, "\(values)")
        }
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(values)")
        #expect(values.allSatisfy { ($0 * 4000).rounded() == $0 * 4000 })
        #expect(events.values.map(\.completed) == Array(repeating: false, count: values.count - 1) + [true])
        #expect(events.values.allSatisfy { $0.progressObject != nil })
        // Each event is a snapshot: the first still shows its own fraction.
        #expect(events.values.first?.progressObject?.fractionCompleted == values.first)
        #expect(events.values.last?.response?.data.count == 4000)
    }

    @Test("Progress: unknown length reports 0 until the end")
    func progressUnknownLength() async throws {
        let events = Recorder<ProgressResponse>()
        let target = Remote(
            base, "/bytes/4000", task: .requestParameters(parameters: ["chunk": 1000, "interval_ms": 100, "length": "false"], encoding: URLEncoding.default))
        _ = await send(provider, target, queue: DispatchQueue.global(), progress: { events.append($0) })
        let values = events.values.map(\.progress)
        // Usually five events; on a loaded machine, events that wait for the delivery queue are
        // merged, down to one data event and the completed one.
        #expect(values.count >= 2, "\(values)")
        #expect(values == Array(repeating: 0, count: values.count - 1) + [1.0], "\(values)")
    }

    @Test("Completions without a queue run on the main queue; with one, on that queue")
    func callbackQueues() async throws {
        MainQueueMarker.install
        let onMain: Bool = await withCheckedContinuation { continuation in
            provider.request(Remote(base, "/echo")) { _ in continuation.resume(returning: MainQueueMarker.isCurrent) }
        }
        #expect(onMain)
        let queue = MarkedQueue("callbacks", concurrent: true)
        let queued = MoyaProvider<Remote>(callbackQueue: queue.queue)
        let onQueue: Bool = await withCheckedContinuation { continuation in
            queued.request(Remote(base, "/echo")) { _ in continuation.resume(returning: queue.isCurrent) }
        }
        #expect(onQueue)
    }

    @Test("Plugins see every hook of a real request, in order, on the callback queue")
    func pluginsOnRealRequests() async throws {
        let plugin = RecordingPlugin(header: ("Authorization", "Bearer abc"))
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        let result = await send(provider, Remote(base, "/bearer"))
        #expect(result.response?.statusCode == 200)
        #expect(plugin.events == ["plugin.prepare", "plugin.willSend", "plugin.didReceive", "plugin.process"])
        #expect(server.receivedRequests.last?.header("Authorization") == "Bearer abc")
    }

    @Test("cURL description of a request about to be sent")
    func curlDescription() async throws {
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        _ = await send(provider, Remote(base, "/echo", method: .post, task: .requestData(Data(#"{"a":"$x"}"#.utf8)), headers: ["X-Q": #"say "hi""#]))
        let request = try #require(plugin.willSendRequests.first)
        var description = ""
        _ = request.cURLDescription { description = $0 }
        #expect(description.hasPrefix("$ curl -v \\\n\t-X POST \\\n\t"))
        #expect(description.contains(#"-H "X-Q: say \"hi\"""#))
        #expect(description.contains(#"-H "Accept-Language: "#))
        #expect(description.contains(#"-d "{\"a\":\"\$x\"}""#))
        #expect(description.hasSuffix("\"\(base.absoluteString)/echo\""))
    }

    @Test("A credential from willSend answers one Basic challenge")
    func basicChallenge() async throws {
        let good = MoyaProvider<Remote>(plugins: [RecordingPlugin(credential: URLCredential(user: "user", password: "passwd", persistence: .none))])
        let ok = try await send(good, Remote(base, "/basic-auth/user/passwd")).get()
        #expect(ok.statusCode == 200)
        let bad = MoyaProvider<Remote>(plugins: [RecordingPlugin(credential: URLCredential(user: "user", password: "wrong", persistence: .none))])
        let denied = try await send(bad, Remote(base, "/basic-auth/user/passwd")).get()
        #expect(denied.statusCode == 401)
        server.resetRecordedRequests()
        _ = await send(bad, Remote(base, "/basic-auth/user/passwd"))
        #expect(server.receivedRequests.count == 2)
        let none = try await send(provider, Remote(base, "/basic-auth/user/passwd")).get()
        #expect(none.statusCode == 401)
    }

    @Test("An asynchronous requestClosure can sign the request")
    func asyncRequestClosure() async throws {
        let provider = MoyaProvider<Remote>(requestClosure: { endpoint, done in
            do {
                let request = try endpoint.urlRequest()
                let box = UncheckedSendable(done)
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
                    var signed = request
                    signed.setValue("signed", forHTTPHeaderField: "X-Signature")
                    box.value(.success(signed))
                }
            } catch {
                done(.failure(MoyaError.underlying(error)))
            }
        })
        #expect(try echo(of: await send(provider, Remote(base, "/echo"))).headers["x-signature"] == "signed")
    }

    @Test("Cancelling before the request is built completes once with NSURLErrorCancelled")
    func cancelBeforeCreation() async throws {
        let plugin = RecordingPlugin()
        let pending = Recorder<MoyaProvider<Remote>.RequestResultClosure>()
        let provider = MoyaProvider<Remote>(requestClosure: { endpoint, done in pending.append(done) }, plugins: [plugin])
        defer { pending.removeAll() }
        let calls = Recorder<Int>()
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let token = provider.request(Remote(base, "/echo"), callbackQueue: .global()) { result in
                calls.append(1)
                continuation.resume(returning: UncheckedResult(result))
            }
            token.cancel()
        }
        #expect(result.result.error?.isCancelled == true)
        // The late request is ignored. Kept as a sleep: a session's shutdown, the one barrier,
        // would also stop a late request that was wrongly sent, hiding what the test looks for;
        // a slow machine can only make the wait miss it, not fail the test.
        pending.values.first?(.success(URLRequest(url: base.appendingPathComponent("echo"))))
        // Time is the behaviour under test: a window in which the late request must not be sent.
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(calls.values.count == 1)
        #expect(server.receivedRequests.isEmpty)
        #expect(plugin.events == ["plugin.didReceive", "plugin.process"])
    }

    @Test("Cancelling during a request stops it promptly with NSURLErrorCancelled")
    func cancelDuringRequest() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let queue = DispatchQueue(label: "cancel-during-request")
        let calls = Recorder<Int>()
        let start = Date()
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let token = provider.request(Remote(base, "/headers-only-then-hang"), callbackQueue: queue) { result in
                calls.append(1)
                continuation.resume(returning: UncheckedResult(result))
            }
            let box = UncheckedSendable(token)
            // Cancels once the request has reached the server.
            _Concurrency.Task { [server] in
                await #expect(throws: Never.self) { try await server.waitForRequests(count: 1) }
                box.value.cancel()
            }
        }
        // The route never finishes and the read timeout is 60 s: the cancellation error below
        // tells the cancel from that timeout, and ending before it means the cancel worked.
        #expect(Date().timeIntervalSince(start) < 58)
        let error = try #require(result.result.error)
        #expect(error.isCancelled)
        #expect((error.underlyingError as NSError?)?.code == NSURLErrorCancelled)
        // The shutdown ends all the session's work, then the queue runs what it was handed: a
        // second completion would have come by now.
        try await session.shutdown()
        await drain(queue)
        #expect(calls.values.count == 1)
    }

    @Test(
        "Transport failures become URLErrors",
        arguments: [
            ("/drop", URLError.Code.networkConnectionLost),
            ("/truncate/1000", URLError.Code.networkConnectionLost),
            ("/malformed", URLError.Code.badServerResponse),
        ])
    func transportFailures(path: String, code: URLError.Code) async throws {
        let result = await send(provider, Remote(base, path))
        let error = try #require(result.error)
        guard case .underlying(let underlying, nil) = error else {
            Issue.record("expected .underlying, got \(error)")
            return
        }
        #expect((underlying as? URLError)?.code == code, "\(underlying)")
    }

    @Test("An unreachable host fails with cannotConnectToHost")
    func unreachable() async throws {
        // A port that refuses connections, held for the whole test.
        let gone = try RefusingPort()
        defer { withExtendedLifetime(gone) {} }
        let url = gone.baseURL
        // The transport keeps retrying a refused connection until the connect timeout.
        let session = Session(configuration: .init(timeoutIntervalForConnect: 1))
        let provider = MoyaProvider<Remote>(session: session)
        let result = await send(provider, Remote(url, "/echo"))
        try await session.shutdown()
        let error = try #require(result.error)
        #expect((error.underlyingError as? URLError)?.code == .cannotConnectToHost)
        // The advice is where a user reads first, and said once where both are shown.
        let advice = "check that the server is running and that the host and port are right"
        #expect(error.localizedDescription.contains("the connection was refused"), "\(error.localizedDescription)")
        #expect(error.localizedDescription.contains(advice), "\(error.localizedDescription)")
        #expect("\(error)".components(separatedBy: advice).count == 2, "\(error)")
    }

    @Test("A read timeout fires", .timeLimit(.minutes(3)))
    func readTimeout() async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 0.3))
        let provider = MoyaProvider<Remote>(session: session)
        // The server answers only after 600 s, so however late a loaded machine fires the timer,
        // the answer cannot come first.
        let result = await send(provider, Remote(base, "/delay/600000"))
        try await session.shutdown()
        #expect((result.error?.underlyingError as? URLError)?.code == .timedOut)
    }

    @Test("A GET with a body is refused before sending")
    func getWithBody() async throws {
        let result = await send(provider, Remote(base, "/echo", task: .requestData(Data("x".utf8))))
        #expect(result.error?.underlyingError as? RequestValidationError == .bodyDataInGETRequest(Data("x".utf8)))
        #expect(server.receivedRequests.isEmpty)
    }
}
