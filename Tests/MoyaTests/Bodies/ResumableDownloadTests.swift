import Crypto
import Foundation
import MoyaTestServer
import MoyaTesting
import Synchronization
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A file server that serves byte ranges as the HTTP specification says, and can cut the
/// connection part-way or change the file between requests.
private final class RangeServer: Sendable {
    struct State {
        var body: Data
        var etag: String?
        var lastModified: String?
        /// Stall the next full response after this many bytes (the client's timeout then ends
        /// it, as on a link that went down).
        var cutAfter: Int?
        /// Answer the next ranged request with this status instead (416, or 206 at the wrong
        /// place).
        var rangeAnswer: Int?
    }

    let state: Mutex<State>

    init(body: Data, etag: String? = "\"v1\"", lastModified: String? = nil, cutAfter: Int? = nil) {
        state = Mutex(State(body: body, etag: etag, lastModified: lastModified, cutAfter: cutAfter))
    }

    func respond(_ request: MockRequest) -> MockResponse {
        state.withLock { state in
            var headers: [(name: String, value: String)] = [("Accept-Ranges", "bytes")]
            if let etag = state.etag { headers.append(("ETag", etag)) }
            if let lastModified = state.lastModified { headers.append(("Last-Modified", lastModified)) }
            let validator = state.etag ?? state.lastModified
            if let range = request.header("Range"), range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()),
                request.header("If-Range") == validator
            {
                if let answer = state.rangeAnswer {
                    state.rangeAnswer = nil
                    if answer == 416 {
                        return MockResponse(status: 416, headers: [("Content-Range", "bytes */\(state.body.count)")])
                    }
                    let wrongStart = max(0, start - 10)
                    return MockResponse(
                        status: 206, headers: headers + [("Content-Range", "bytes \(wrongStart)-\(state.body.count - 1)/\(state.body.count)")],
                        body: state.body.subdata(in: wrongStart..<state.body.count))
                }
                guard start < state.body.count else {
                    return MockResponse(status: 416, headers: [("Content-Range", "bytes */\(state.body.count)")])
                }
                return MockResponse(
                    status: 206, headers: headers + [("Content-Range", "bytes \(start)-\(state.body.count - 1)/\(state.body.count)")],
                    body: state.body.subdata(in: start..<state.body.count))
            }
            var response = MockResponse(status: 200, headers: headers, body: state.body)
            if let cut = state.cutAfter {
                state.cutAfter = nil
                response.fault = .stall(afterBytes: cut)
            }
            return response
        }
    }
}

/// A download of the mock server's `/file` to `destination` (replacing what is there).
struct FileTarget: TargetType {
    let baseURL: URL
    let destination: URL
    var path: String { "/file" }
    var method: Moya.Method { .get }
    var task: Task { .downloadDestination { _, _ in (destination, [.removePreviousFile, .createIntermediateDirectories]) } }
    var headers: [String: String]? { nil }
}

/// One test's client: a session whose temporary files go to the test's own folder, a provider
/// on it, and the target that saves the server's `/file` as `file.bin` in that folder.
private struct Client {
    let folder: URL
    let session: Session
    let provider: MoyaProvider<FileTarget>
    let target: FileTarget

    /// The session's request timeout ends a stalled response. It is generous for a 2-core
    /// machine running other suites at the same time: a response that times out before its
    /// first byte reached the file has nothing to resume, which is not what these tests are about.
    init(folder: URL, baseURL: URL, interceptors: [RequestInterceptor] = []) {
        self.folder = folder
        session = Session(configuration: .init(timeoutIntervalForRequest: 12, temporaryDirectory: folder.appendingPathComponent("tmp")))
        provider = MoyaProvider<FileTarget>(session: session, interceptors: interceptors)
        target = FileTarget(baseURL: baseURL, destination: folder.appendingPathComponent("file.bin"))
    }

    func partialFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: session.configuration.temporaryDirectory.path)) ?? []).filter {
            $0.hasPrefix("moya-download-")
        }
    }

    /// Sends the target, which the server cuts part-way, and returns the failure's resume data.
    /// Records an issue, naming the failure, when there is no resume data and `expectsResumeData`.
    func interrupted(expectsResumeData: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async -> Data? {
        do throws(MoyaError) {
            _ = try await provider.request(target)
            Issue.record("the cut download succeeded", sourceLocation: sourceLocation)
            return nil
        } catch {
            if expectsResumeData, error.resumeData == nil {
                Issue.record("the cut download failed without resume data: \(error)", sourceLocation: sourceLocation)
            }
            return error.resumeData
        }
    }

    /// Ends a test: shuts the session and the server down and removes the test's folder.
    func tearDown(_ mock: MockServer?) async throws {
        try await session.shutdown()
        await mock?.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}

@Suite("Downloads that resume")
struct ResumableDownloadTests {
    private let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moya-resume-\(UUID().uuidString)")

    private static func body(_ count: Int) -> Data {
        PatternBytes.make(count) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    /// Starts a mock server whose `/file` is `server`'s, and a client of it.
    private func start(_ server: RangeServer, interceptors: [RequestInterceptor] = []) async throws -> (MockServer, Client) {
        let mock = try await MockServer.start()
        mock.route("GET", "/file") { request in server.respond(request) }
        return (mock, Client(folder: folder, baseURL: mock.baseURL, interceptors: interceptors))
    }

    @Test("A download that stalls part-way carries resume data; resuming asks for the rest with Range and If-Range and appends it")
    func resumesWithRange() async throws {
        let content = Self.body(300_000)
        let (mock, client) = try await start(RangeServer(body: content, cutAfter: 120_000))

        let data = try #require(await client.interrupted(), "no resume data")
        #expect(client.partialFiles().count == 1, "the partial file is kept")

        let response = try await client.provider.request(client.target, resumingWith: data)
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: client.target.destination) == content)
        let ranged = try #require(mock.requests.last)
        let range = try #require(ranged.header("Range"))
        #expect(range.hasPrefix("bytes=") && range != "bytes=0-")
        #expect(ranged.header("If-Range") == "\"v1\"")
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test("A file that changed meanwhile is sent whole (If-Range does not match): the result is the new version alone")
    func changedEntityStartsOver() async throws {
        let server = RangeServer(body: Self.body(200_000), cutAfter: 80_000)
        let (mock, client) = try await start(server)
        let data = try #require(await client.interrupted())
        let second = Data(Self.body(150_000).reversed())
        server.state.withLock {
            $0.body = second
            $0.etag = "\"v2\""
        }
        let response = try await client.provider.request(client.target, resumingWith: data)
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: client.target.destination) == second)
        #expect(client.partialFiles().isEmpty, "the old partial file is deleted")
        try await client.tearDown(mock)
    }

    @Test("A 416 to the range starts over without one")
    func rangeNotSatisfiableStartsOver() async throws {
        let content = Self.body(200_000)
        let server = RangeServer(body: content, cutAfter: 50_000)
        let (mock, client) = try await start(server)
        let data = try #require(await client.interrupted())
        server.state.withLock { $0.rangeAnswer = 416 }
        let response = try await client.provider.request(client.target, resumingWith: data)
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: client.target.destination) == content)
        let requests = mock.requests
        #expect(requests.count == 3)
        #expect(requests.last?.header("Range") == nil)
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test("A 206 that does not start where the partial file ends is an error, and leaves no file")
    func wrongRangeFails() async throws {
        let server = RangeServer(body: Self.body(200_000), cutAfter: 50_000)
        let (mock, client) = try await start(server)
        let data = try #require(await client.interrupted())
        server.state.withLock { $0.rangeAnswer = 206 }
        do throws(MoyaError) {
            _ = try await client.provider.request(client.target, resumingWith: data)
            Issue.record("a misplaced range was accepted")
        } catch {
            guard case .underlying(let underlying, _) = error, case .unexpectedRange = underlying as? DownloadResumeError else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
        #expect(!FileManager.default.fileExists(atPath: client.target.destination.path))
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test("Without an entity tag or a date there is nothing to resume: no resume data, and no file left")
    func noValidatorNoResume() async throws {
        let (mock, client) = try await start(RangeServer(body: Self.body(200_000), etag: nil, cutAfter: 50_000))
        #expect(await client.interrupted(expectsResumeData: false) == nil)
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test("Resume data that names a file the session did not keep is refused, and that file is not touched")
    func foreignResumeDataRefused() async throws {
        let client = Client(folder: folder, baseURL: URL(string: "http://127.0.0.1:9")!)
        let directory = client.session.configuration.temporaryDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let bystander = directory.appendingPathComponent("moya-download-bystander.tmp")
        try Data("keep me".utf8).write(to: bystander)
        for fileName in ["moya-download-bystander.tmp", "../../etc/passwd", "moya-download-/../x.tmp"] {
            let forged = DownloadResume(url: "http://127.0.0.1:9/file", fileName: fileName, offset: 7, validator: "\"v1\"", totalLength: nil).encoded()
            do throws(MoyaError) {
                _ = try await client.provider.request(client.target, resumingWith: forged)
                Issue.record("forged resume data was accepted")
            } catch {
                #expect((error.underlyingError as? DownloadResumeError) == .invalidResumeData)
            }
        }
        do throws(MoyaError) {
            _ = try await client.provider.request(client.target, resumingWith: Data("not resume data".utf8))
            Issue.record("garbage was accepted")
        } catch {
            #expect((error.underlyingError as? DownloadResumeError) == .invalidResumeData)
        }
        #expect(try Data(contentsOf: bystander) == Data("keep me".utf8))
        try await client.tearDown(nil)
    }

    @Test("A RetryPolicy resumes by itself: the retry asks for the rest, and the file is whole")
    func retryPolicyResumes() async throws {
        let content = Self.body(300_000)
        let (mock, client) = try await start(
            RangeServer(body: content, cutAfter: 100_000),
            interceptors: [RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01, jitter: 0)])
        let response = try await client.provider.request(client.target)
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: client.target.destination) == content)
        let requests = mock.requests
        #expect(requests.count == 2)
        #expect(requests.last?.header("Range") != nil)
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test(
        "A SHA-256 digest the server announces is checked: a matching file is delivered, another fails with digestMismatch and leaves nothing",
        arguments: [true, false])
    func digestChecked(matching: Bool) async throws {
        let content = Self.body(100_000)
        let digest = Data(SHA256.hash(data: matching ? content : Data("other".utf8))).base64EncodedString()
        let mock = try await MockServer.start()
        mock.route("GET", "/file", response: MockResponse(status: 200, headers: [("Repr-Digest", "sha-256=:\(digest):")], body: content))
        let client = Client(folder: folder, baseURL: mock.baseURL)
        var failure: MoyaError?
        do throws(MoyaError) {
            _ = try await client.provider.request(client.target)
        } catch {
            failure = error
        }
        if matching {
            #expect(failure == nil, "\(String(describing: failure))")
            #expect(try Data(contentsOf: client.target.destination) == content)
        } else {
            #expect((failure?.underlyingError as? DownloadResumeError) == .digestMismatch, "\(String(describing: failure))")
            #expect(!FileManager.default.fileExists(atPath: client.target.destination.path))
        }
        #expect(client.partialFiles().isEmpty)
        try await client.tearDown(mock)
    }

    @Test("A partial file no one resumes is deleted when the session shuts down")
    func shutdownDeletesPartials() async throws {
        let (mock, client) = try await start(RangeServer(body: Self.body(200_000), cutAfter: 50_000))
        #expect(await client.interrupted() != nil)
        #expect(client.partialFiles().count == 1)
        try await client.session.shutdown()
        #expect(client.partialFiles().isEmpty)
        await mock.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }
}
