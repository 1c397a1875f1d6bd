import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server may answer as soon as it has the body's declared bytes, before the client's upload
/// has said that the body is over. ``MockServer`` does just that: it reads the whole body and
/// answers at once. Such an answer (a redirect, a success, an error) is the response, whatever
/// the body: a ``RequestBodyStream``, an `httpBodyStream`, a file. Each case runs
/// ``EarlyAnswerUploadTests/rounds`` times, since the answer and the end of the upload race.
@Suite("A response that comes right after the last byte of a streamed body is the response")
struct EarlyAnswerUploadTests {
    /// How many times each case runs.
    static let rounds = 20

    /// A 22-byte body, in two chunks.
    static let small = ChunkSequence(chunks: [Array("a small request".utf8), Array(" body!!".utf8)])
    /// 64 KiB in 16 chunks.
    static let large = ChunkSequence(chunks: (0..<16).map { [UInt8](repeating: UInt8(ascii: "a") + UInt8($0), count: 4096) })

    let server: MockServer
    /// The suite's own session, whose short timeout makes a hang fail quickly.
    let session = Session(configuration: .init(timeoutIntervalForRequest: 10))
    var base: URL { server.baseURL }

    init() async throws {
        server = try await MockServer.start()
        server.route("/redirect", response: .redirect(to: "/target", status: 307))
        server.route("/target", response: .text("target"))
        server.route("/ok", response: .text("ok"))
        server.route("/fails", response: .text("failed", status: 500))
    }

    /// The result of sending `body` to `path` with POST.
    func send(_ path: String, body: RequestBodyStream) async -> Result<Moya.Response, MoyaError> {
        do throws(MoyaError) {
            return .success(try await MoyaProvider<Remote>(session: session).request(Remote(base, path, method: .post), body: body))
        } catch {
            return .failure(error)
        }
    }

    /// The requests the server received from the `count`th last on.
    func lastRequests(_ count: Int) -> [MockRequest] {
        Array(server.requests.suffix(count))
    }

    @Test("A 307 to a RequestBodyStream that can be iterated again is followed, and the target gets the whole body", arguments: [false, true])
    func redirectMultiple(large: Bool) async throws {
        let chunks = large ? Self.large : Self.small
        for _ in 0..<Self.rounds {
            let body = RequestBodyStream(chunks, length: Int64(chunks.bytes.count), iteration: .multiple)
            let response = try await send("/redirect", body: body).get()
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.data, as: UTF8.self) == "target")
            let requests = lastRequests(2)
            #expect(requests.map(\.path) == ["/redirect", "/target"])
            #expect(requests.map(\.body) == [chunks.bytes, chunks.bytes])
        }
        await server.shutdown()
    }

    @Test("A 307 to a one-shot RequestBodyStream that was sent fails with NonReplayableBodyError, reason redirect", arguments: [false, true])
    func redirectSingle(large: Bool) async throws {
        let chunks = large ? Self.large : Self.small
        for _ in 0..<Self.rounds {
            let body = RequestBodyStream(chunks, length: Int64(chunks.bytes.count), iteration: .single)
            let error = try #require(await send("/redirect", body: body).failure)
            #expect(isNotReplayable(error, .redirect(statusCode: 307, location: base.appending(path: "target"))), "\(error)")
            #expect(server.requests.last?.path == "/redirect")
            #expect(server.requests.last?.body == chunks.bytes)
        }
        await server.shutdown()
    }

    @Test("A 200 or a 500 right after the last byte of a RequestBodyStream of known length is the response", arguments: ["/ok", "/fails"])
    func answered(path: String) async throws {
        for chunks in [Self.small, Self.large] {
            for _ in 0..<Self.rounds {
                let response = try await send(path, body: RequestBodyStream(chunks, length: Int64(chunks.bytes.count))).get()
                #expect(response.statusCode == (path == "/ok" ? 200 : 500))
                #expect(server.requests.last?.body == chunks.bytes)
            }
        }
        await server.shutdown()
    }

    @Test("An upload answered at once gives its connection back: two hundred in a row go on one connection")
    func connectionReused() async throws {
        for round in 0..<200 {
            let response = try await send("/ok", body: RequestBodyStream(Self.large, length: Int64(Self.large.bytes.count))).get()
            #expect(response.statusCode == 200)
            // AsyncHTTPClient 1.37 succeeds a task whose answer (with its body) reached it before
            // the upload's end, and its connection then waits for that end for ever: the next
            // request needs a new connection, and after eight of them the pool has none left.
            try #require(server.openConnections == 1, "round \(round): a connection was not given back to the pool")
        }
        await server.shutdown()
    }

    @Test(
        "An httpBodyStream with a Content-Length: a 307 fails as the stream cannot be sent again, a 200 or a 500 is the response",
        arguments: ["/redirect", "/ok", "/fails"])
    func httpBodyStream(path: String) async throws {
        let payload = Self.large.bytes
        let provider = MoyaProvider<Remote>(
            requestClosure: { endpoint, done in
                do {
                    var request = try endpoint.urlRequest()
                    request.httpBodyStream = InputStream(data: payload)
                    request.setValue(String(payload.count), forHTTPHeaderField: "Content-Length")
                    done(.success(request))
                } catch {
                    done(.failure(error as? MoyaError ?? .underlying(error, nil)))
                }
            }, session: session)
        for round in 0..<Self.rounds {
            let result = await MoyaTests.send(provider, Remote(base, path, method: .post))
            guard path != "/redirect" else {
                // The stream cannot be read again for the redirect.
                #expect(isNotReplayable(result.failure, .redirect(statusCode: 307, location: base.appending(path: "target"))), "round \(round)")
                continue
            }
            let response = try result.get()
            #expect(response.statusCode == (path == "/fails" ? 500 : 200))
            #expect(server.requests.last?.body == payload)
        }
        await server.shutdown()
    }

    @Test("A file upload: a 307 is followed, a 200 or a 500 is the response", arguments: ["/redirect", "/ok", "/fails"])
    func file(path: String) async throws {
        let payload = Self.large.bytes
        let file = FileManager.default.temporaryDirectory.appending(path: "early-answer-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let provider = MoyaProvider<Remote>(session: session)
        for _ in 0..<Self.rounds {
            let result = await MoyaTests.send(provider, Remote(base, path, method: .post, task: .uploadFile(file)))
            let response = try result.get()
            #expect(response.statusCode == (path == "/fails" ? 500 : 200))
            #expect(server.requests.last?.body == payload)
        }
        await server.shutdown()
    }
}

extension Result {
    /// The error of a failure; `nil` for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
