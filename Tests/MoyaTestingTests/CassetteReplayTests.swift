import Foundation
import Moya
import MoyaTestServer
import MoyaTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Cassettes: recording real exchanges and replaying them without the network")
struct CassetteReplayTests {
    @Test("Replaying with the server shut down gives the recorded status, headers and body, through plugins and validation")
    func recordThenReplay() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let base = server.baseURL
        let targets = [
            CassetteTarget(base, "/json"),
            CassetteTarget.query(base, "/response-headers", ["X-Custom": "abc", "Content-Type": "text/plain"]),
            CassetteTarget.post(base, "/echo", body: #"{"name":"Ann"}"#),
            CassetteTarget(base, "/status/404", validation: .successCodes),
        ]

        let recordingHooks = HookCounter()
        let recording = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record, plugins: [recordingHooks])
        var live: [Result<Moya.Response, MoyaError>] = []
        for target in targets {
            live.append(await outcome(recording, target))
        }
        await server.shutdown()
        #expect(recordingHooks["didReceive"] == 4)
        let recorder = try #require(recording.plugins.last as? CassetteRecorder)
        #expect(recorder.lastError == nil)
        #expect(recorder.cassette.interactions.count == 4)

        let hooks = HookCounter()
        let replaying = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay, plugins: [hooks])
        let player = try #require(replaying.plugins.last as? CassettePlayer)
        var replayed: [Result<Moya.Response, MoyaError>] = []
        for target in targets {
            replayed.append(await outcome(replaying, target))
        }

        for (real, stub) in zip(live, replayed) {
            let realResponse = try #require(real.response)
            let stubResponse = try #require(stub.response)
            #expect(stubResponse.statusCode == realResponse.statusCode)
            #expect(stubResponse.data == realResponse.data)
        }
        let json = try replayed[0].get()
        #expect(json.statusCode == 200)
        #expect(try JSONSerialization.jsonObject(with: json.data) is [String: Any])
        let headers = try #require(try replayed[1].get().response)
        #expect(headers.value(forHTTPHeaderField: "X-Custom") == "abc")
        #expect(headers.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(try replayed[1].get().mapString() == "response-headers")
        let echo = try #require(try replayed[2].get().mapJSON() as? [String: Any])
        #expect(echo["method"] as? String == "POST")
        #expect(echo["body"] as? String == #"{"name":"Ann"}"#)
        // Validation ran on the replayed 404, as it did on the real one.
        guard case .failure(.statusCode(let rejected)) = replayed[3] else {
            Issue.record("expected a status code error, got \(replayed[3])")
            return
        }
        #expect(rejected.statusCode == 404)
        #expect(String(decoding: rejected.data, as: UTF8.self).contains("404"))

        #expect(hooks["prepare"] == 4)
        #expect(hooks["willSend"] == 4)
        #expect(hooks["didReceive"] == 4)
        #expect(hooks["process"] == 4)
        #expect(player.unusedInteractions.isEmpty)
        // The request the completion sees is the one sent, without the player's bookkeeping.
        let request = try #require(try replayed[0].get().request)
        #expect(request.allHTTPHeaderFields?.keys.contains { $0.lowercased().contains("cassette") } == false)
    }

    @Test("recordIfMissing records when there is no file, and replays once there is")
    func recordIfMissing() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await MockServer.start()
        server.enqueue(.json(#"{"first": true}"#))
        let target = CassetteTarget(server.baseURL, "/thing")

        let first = try MoyaProvider<CassetteTarget>(cassette: url, mode: .recordIfMissing)
        #expect(first.plugins.last is CassetteRecorder)
        #expect(try await first.request(target).mapString() == #"{"first": true}"#)
        await server.shutdown()
        #expect(server.requests.count == 1)

        let second = try MoyaProvider<CassetteTarget>(cassette: url, mode: .recordIfMissing)
        #expect(second.plugins.last is CassettePlayer)
        #expect(try await second.request(target).mapString() == #"{"first": true}"#)
    }

    @Test("Identical requests get the recorded responses in order; one more fails, unless interactions may be reused")
    func repeatedRequestsInOrder() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await MockServer.start()
        server.enqueue(.json(#"{"state": "pending"}"#), .json(#"{"state": "done"}"#))
        let target = CassetteTarget(server.baseURL, "/job/7")
        let recording = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        _ = try await recording.request(target)
        _ = try await recording.request(target)
        await server.shutdown()

        let once = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay)
        #expect(try await once.request(target).mapString() == #"{"state": "pending"}"#)
        #expect(try await once.request(target).mapString() == #"{"state": "done"}"#)
        let third = await outcome(once, target)
        let error = try #require(cassetteError(third))
        #expect(error.description.contains("All 2 interactions recorded for it (#1 and later) already answered"))

        let reusing = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay, matching: CassetteMatching(reusesInteractions: true))
        #expect(try await reusing.request(target).mapString() == #"{"state": "pending"}"#)
        #expect(try await reusing.request(target).mapString() == #"{"state": "done"}"#)
        #expect(try await reusing.request(target).mapString() == #"{"state": "done"}"#)
    }

    @Test("An unmatched request fails with a CassetteError naming the request, the closest interaction and the difference")
    func unmatchedRequest() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let base = server.baseURL
        let recording = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        _ = try await recording.request(CassetteTarget(base, "/json"))
        _ = try await recording.request(CassetteTarget.query(base, "/echo/users", ["page": 1]))
        await server.shutdown()

        let hooks = HookCounter()
        let replaying = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay, plugins: [hooks])
        let result = await outcome(replaying, CassetteTarget.query(base, "/echo/users", ["page": 2]))
        let error = try #require(cassetteError(result))
        guard case .noMatch(let request, let reason) = error else {
            Issue.record("expected noMatch, got \(error)")
            return
        }
        #expect(request == "GET \(base.absoluteString)/echo/users?page=2")
        #expect(reason.contains("The closest is #2 of 2, GET \(base.absoluteString)/echo/users?page=1"))
        #expect(reason.contains("query items differ: sent page=2, recorded page=1"))
        // What `print(error)` shows names all of it.
        let moyaError = try #require(result.failure)
        #expect("\(moyaError)".contains("no recorded interaction matches GET \(base.absoluteString)/echo/users?page=2"))
        // The other plugins were told of the failure, with the same words.
        #expect(hooks["didReceive"] == 1)
        #expect(hooks.failures.first?.contains("The closest is #2 of 2") == true)

        let other = await outcome(replaying, CassetteTarget(base, "/jsn", method: .post))
        let otherReason = try #require(cassetteError(other)).description
        #expect(otherReason.contains("The closest is #1 of 2, GET \(base.absoluteString)/json"))
        #expect(otherReason.contains("method POST instead of GET"))
        #expect(otherReason.contains("path /jsn instead of /json"))
    }

    @Test("Replaying a missing cassette fails clearly, before any request")
    func missingCassette() throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        #expect(throws: CassetteError.missingFile(url.path)) {
            try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay)
        }
        #expect(CassetteError.missingFile(url.path).description.contains("MOYA_CASSETTE_MODE=record"))
    }

    @Test("A player built by hand works with the provider's own plugins, which may add headers")
    func playerByHand() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let target = CassetteTarget(server.baseURL, "/echo")
        let token = HeaderPlugin(name: "Authorization", value: "Bearer first-token-123456")
        let recorder = CassetteRecorder(fileURL: url)
        let recording = MoyaProvider<CassetteTarget>(plugins: [token, recorder])
        _ = try await recording.request(target)
        await server.shutdown()
        #expect(recorder.cassette.interactions.first?.request.headers["Authorization"] == "Bearer ***")

        let player = try CassettePlayer(contentsOf: url, matching: CassetteMatching(headers: ["Authorization"]))
        let replaying = MoyaProvider<CassetteTarget>(
            endpointClosure: player.endpointClosure(),
            stubClosure: player.stubClosure(),
            plugins: [HeaderPlugin(name: "Authorization", value: "Bearer another-token-654321"), player]
        )
        let response = try await replaying.request(target)
        #expect(response.statusCode == 200)
        #expect(response.request?.value(forHTTPHeaderField: "Authorization") == "Bearer another-token-654321")
    }
}

extension Result {
    /// The error of a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
