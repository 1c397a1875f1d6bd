import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one request against a misbehaving server came to.
struct FaultOutcome {
    let result: Result<Moya.Response, MoyaError>
    /// Seconds from the request to its completion.
    let elapsed: TimeInterval
    /// How many times the completion ran so far: counted again behind a barrier by
    /// ``FaultInjectionTests/expectOneCompletion(_:session:sourceLocation:)``.
    let count: Protected<Int>
    /// The serial queue the completions run on.
    let callbackQueue: DispatchQueue
}

/// Sends `target` and waits for its completion; later completions are counted on.
func outcome<T: TargetType>(_ provider: MoyaProvider<T>, _ target: T) async -> FaultOutcome {
    let count = Protected(0)
    let callbackQueue = DispatchQueue(label: "fault-outcome")
    let started = Date()
    let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
        provider.request(target, callbackQueue: callbackQueue) { result in
            let first = count.withLock { count in
                count += 1
                return count == 1
            }
            if first { continuation.resume(returning: UncheckedResult(result)) }
        }
    }.result
    let elapsed = Date().timeIntervalSince(started)
    return FaultOutcome(result: result, elapsed: elapsed, count: count, callbackQueue: callbackQueue)
}

/// The entries of a directory, recursively, relative to it.
func contents(of directory: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: directory.path)
    var names: [String] = []
    while let name = enumerator?.nextObject() as? String {
        names.append(name)
    }
    return names.sorted()
}

/// Each misbehaviour of `FaultServer` ends a request in exactly one completion with a clear
/// error, on time, without a crash and without files left behind.
@Suite("Fault injection: servers that misbehave on purpose")
struct FaultInjectionTests {
    let server: FaultServer
    let session: Session
    let provider: MoyaProvider<Remote>
    let downloads: TemporaryDirectory

    /// The limits of the tests that are about a limit (`limitedProvider()`): 1 s without bytes,
    /// 3 s for a whole request.
    static let readTimeout: TimeInterval = 1
    static let resourceTimeout: TimeInterval = 3
    /// The limits of the suite's own session, for the faults that must end in an error of their
    /// own: long, so that a loaded machine (a sanitizer run, with every suite in parallel) cannot
    /// end such a request by a timeout first. They were 1 s and 3 s, and under ThreadSanitizer
    /// every one of those tests then saw `timedOut`.
    static let generousReadTimeout: TimeInterval = 120
    static let generousResourceTimeout: TimeInterval = 240

    init() async throws {
        server = try await FaultServer.start()
        downloads = try TemporaryDirectory()
        session = Session(
            configuration: .init(
                timeoutIntervalForConnect: 2,
                timeoutIntervalForRequest: Self.generousReadTimeout,
                timeoutIntervalForResource: Self.generousResourceTimeout,
                redirectPolicy: .follow(max: 5, allowCycles: false),
                temporaryDirectory: downloads.url.appendingPathComponent("partial", isDirectory: true)
            ))
        provider = MoyaProvider<Remote>(session: session)
    }

    /// A session with the short limits, for a test about a limit; pass it to
    /// `expectOneCompletion(_:session:)`.
    func limitedSession() -> Session {
        Session(
            configuration: .init(
                timeoutIntervalForConnect: 2,
                timeoutIntervalForRequest: Self.readTimeout,
                timeoutIntervalForResource: Self.resourceTimeout,
                temporaryDirectory: downloads.url.appendingPathComponent("partial", isDirectory: true)
            ))
    }

    func target(_ fault: Fault, task: Task = .requestPlain, method: Moya.Method = .get) -> Remote {
        Remote(server.baseURL, "/\(fault.rawValue)", method: method, task: task)
    }

    /// Checks that each request completed exactly once: shuts `session` (the suite's by default)
    /// down, which ends all its work, then lets each callback queue run what it was handed, so
    /// that a second completion would have come by then. Called at the end of a test, after its
    /// other checks, which the shutdown must not help (files closed, partial files removed).
    func expectOneCompletion(_ outcome: FaultOutcome, session: Session? = nil, sourceLocation: SourceLocation = #_sourceLocation) async {
        await expectOneCompletion([outcome], session: session, sourceLocation: sourceLocation)
    }

    /// Checks that each of `outcomes`' requests completed exactly once, as
    /// ``expectOneCompletion(_:session:sourceLocation:)`` does for one.
    func expectOneCompletion(_ outcomes: [FaultOutcome], session: Session? = nil, sourceLocation: SourceLocation = #_sourceLocation) async {
        await #expect(throws: Never.self, sourceLocation: sourceLocation) { try await (session ?? self.session).shutdown() }
        for outcome in outcomes {
            await drain(outcome.callbackQueue)
            let completions = outcome.count.current
            #expect(completions == 1, "completion ran \(completions) times", sourceLocation: sourceLocation)
        }
    }

    /// Checks the promises common to the failures (but the one completion: see
    /// ``expectOneCompletion(_:session:sourceLocation:)``) and returns the error.
    @discardableResult
    func expectFailure(_ outcome: FaultOutcome, within limit: TimeInterval = resourceTimeout, sourceLocation: SourceLocation = #_sourceLocation) -> MoyaError? {
        // The limit plus a wide margin for a loaded or sanitized build: the point is that it
        // ends, where without a limit it would wait forever.
        #expect(outcome.elapsed < limit + 120, "took \(outcome.elapsed) s", sourceLocation: sourceLocation)
        guard case .failure(let error) = outcome.result else {
            Issue.record("expected a failure, got \(outcome.result)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }

    func urlErrorCode(_ error: MoyaError?) -> URLError.Code? {
        (error?.underlyingError as? URLError)?.code
    }

    @Test("A reset in the middle of the body fails the request")
    func resetMidBody() async {
        let outcome = await outcome(provider, target(.resetMidBody))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .networkConnectionLost)
        await expectOneCompletion(outcome)
    }

    @Test("A connection closed before the response fails the request")
    func closeBeforeResponse() async {
        let outcome = await outcome(provider, target(.closeBeforeResponse))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .networkConnectionLost)
        await expectOneCompletion(outcome)
    }

    /// A connection closed before any answer is the request's failure, whatever its method: the
    /// transport sends nothing twice for it (a `RetryPolicy` may).
    @Test("A connection closed before the answer is not sent again, GET or POST")
    func closeBeforeResponseNotResent() async throws {
        let connectionsBefore = server.acceptedConnections
        let get = await outcome(provider, target(.closeBeforeResponse))
        expectFailure(get)
        let post = await outcome(provider, target(.closeBeforeResponse, task: .requestData(Data("once".utf8)), method: .post))
        expectFailure(post)
        #expect(server.acceptedConnections - connectionsBefore == 2, "each went once")
        await expectOneCompletion([get, post])
    }

    @Test("A body that drips one byte at a time ends at the resource limit")
    func slowDrip() async {
        let limited = limitedSession()
        let outcome = await outcome(MoyaProvider<Remote>(session: limited), target(.slowDrip))
        let error = expectFailure(outcome, within: Self.resourceTimeout)
        #expect(urlErrorCode(error) == .timedOut)
        await expectOneCompletion(outcome, session: limited)
    }

    @Test("A server that never answers ends at the read limit")
    func silence() async {
        let limited = limitedSession()
        let outcome = await outcome(MoyaProvider<Remote>(session: limited), target(.silence))
        let error = expectFailure(outcome, within: Self.readTimeout)
        #expect(urlErrorCode(error) == .timedOut)
        await expectOneCompletion(outcome, session: limited)
    }

    @Test("A body shorter than its Content-Length fails the request")
    func shortContentLength() async {
        let outcome = await outcome(provider, target(.shortContentLength))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .networkConnectionLost)
        await expectOneCompletion(outcome)
    }

    @Test("Bytes past the Content-Length are not part of the body")
    func longContentLength() async throws {
        let outcome = await outcome(provider, target(.longContentLength))
        #expect(try outcome.result.get().data == Data("xxxxx".utf8))
        await expectOneCompletion(outcome)
    }

    /// The extra bytes stay on the connection, where the next request's answer would be: that
    /// request fails to parse them before anything of its own answer arrived, and is sent once
    /// more, on a new connection.
    @Test(
        "Bytes past the Content-Length on a connection kept open do not fail the next request",
        arguments: [Fault.longContentLengthKeptOpen, .lateBytesPastContentLength])
    func longContentLengthKeptOpen(_ fault: Fault) async throws {
        var outcomes: [FaultOutcome] = []
        for round in 0..<3 {
            let outcome = await outcome(provider, target(fault))
            #expect(try outcome.result.get().data == Data("xxxxx".utf8), "round \(round)")
            outcomes.append(outcome)
        }
        await expectOneCompletion(outcomes)
    }

    @Test("A status line that is not HTTP fails the request")
    func malformedStatusLine() async {
        let outcome = await outcome(provider, target(.malformedStatusLine))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .badServerResponse)
        await expectOneCompletion(outcome)
    }

    @Test("A chunk size that is not hexadecimal fails the request")
    func badChunking() async {
        let outcome = await outcome(provider, target(.badChunking))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .badServerResponse)
        await expectOneCompletion(outcome)
    }

    @Test("A gzip bomb stops at the decompression limit")
    func gzipBomb() async {
        let outcome = await outcome(provider, target(.gzipBomb))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .cannotDecodeContentData)
        await expectOneCompletion(outcome)
    }

    @Test("A flood of response headers ends in one completion")
    func headerFlood() async {
        let outcome = await outcome(provider, target(.headerFlood))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .badServerResponse)
        await expectOneCompletion(outcome)
    }

    @Test("A redirect loop stops at the redirect limit")
    func redirectLoop() async {
        let outcome = await outcome(provider, target(.redirectLoop))
        let error = expectFailure(outcome)
        #expect(urlErrorCode(error) == .httpTooManyRedirects)
        #expect(server.acceptedConnections >= 1)
        await expectOneCompletion(outcome)
    }

    @Test("An upload to a server that stops reading fails at the write limit and closes its file")
    func stalledUpload() async throws {
        let file = try downloads.makeFile("upload.bin", length: 32 << 20)
        let limited = limitedSession()
        let outcome = await outcome(MoyaProvider<Remote>(session: limited), target(.stalledUpload, task: .uploadFile(file), method: .post))
        let error = expectFailure(outcome, within: Self.resourceTimeout)
        #expect(urlErrorCode(error) == .timedOut)
        // No descriptor of the process still points at the file.
        #expect(await eventually { !Self.openFiles().contains(file.resolvingSymlinksInPath().path) })
        await expectOneCompletion(outcome, session: limited)
    }

    /// The paths of the files this process has open.
    static func openFiles() -> [String] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }

    @Test("An endless body stops at the body limit, with bounded memory")
    func endlessBody() async throws {
        let limited = Session(
            // The read timeout is not what this test is about: a long one, so that a loaded
            // machine pausing the server (a sanitizer run) cannot end the body first.
            configuration: .init(timeoutIntervalForRequest: 30, timeoutIntervalForResource: 60, maximumResponseBodySize: 8 << 20))
        let before = MemoryProbe.residentBytes()
        let outcome = await outcome(MoyaProvider<Remote>(session: limited), target(.endlessBody))
        let error = expectFailure(outcome, within: 60)
        #expect(error?.underlyingError as? SessionError == .responseBodyTooLarge(limit: 8 << 20, announcedLength: nil), "\(String(describing: error))")
        // The limit is 8 MiB; an unbounded body would have grown by tens of gigabytes before the
        // 60 s limit. The bound is wide because the figure is the whole process's (the other
        // suites run meanwhile) and AddressSanitizer keeps freed memory in quarantine, which
        // counts as resident: 1.1 GiB was seen there.
        let growth = MemoryProbe.residentBytes() - before
        #expect(growth < 2 << 30, "resident memory grew by \(growth >> 20) MiB")
        await expectOneCompletion(outcome, session: limited)
    }

    @Test(
        "Hostile file names from the server stay in the destination directory",
        arguments: [
            "..", "../../escaped.txt", "/etc/passwd-copy", "a%00b.txt", "C:\\x\\y.txt", "", ".", "./..", "%2E%2E",
        ])
    func hostileFileName(name: String) async throws {
        let directory = downloads.url.appendingPathComponent("inbox-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let sibling = downloads.url.appendingPathComponent("sibling.txt")
        try Data("keep".utf8).write(to: sibling)
        let destination = DownloadRequest.suggestedDownloadDestination(in: directory, options: [.removePreviousFile, .createIntermediateDirectories])
        var components = URLComponents(url: server.url(for: .hostileFileName), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "name=" + name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let outcome = await outcome(provider, Remote(try #require(components.url), "", task: .downloadDestination(destination)))
        _ = try outcome.result.get()
        let files = contents(of: directory)
        #expect(files.count == 1, "\(files)")
        #expect(files.allSatisfy { !$0.contains("/") && $0 != "." && $0 != ".." })
        #expect(try Data(contentsOf: directory.appendingPathComponent(files[0])) == Data("hostile-download".utf8))
        // Nothing outside the directory changed, and no partial file is left.
        #expect(try Data(contentsOf: sibling) == Data("keep".utf8))
        #expect(!FileManager.default.fileExists(atPath: downloads.url.appendingPathComponent("escaped.txt").path))
        #expect(contents(of: downloads.url.appendingPathComponent("partial")).isEmpty)
        await expectOneCompletion(outcome)
    }

    @Test("Failed downloads leave no file behind")
    func failedDownloadLeavesNothing() async throws {
        let directory = downloads.url.appendingPathComponent("failed-\(UUID().uuidString)", isDirectory: true)
        let destination: DownloadDestination = { _, _ in (directory.appendingPathComponent("file.bin"), [.createIntermediateDirectories]) }
        var outcomes: [FaultOutcome] = []
        // The short limits: the slow drip must end by one; any failure counts for the others.
        let limited = limitedSession()
        for fault in [Fault.resetMidBody, .shortContentLength, .badChunking, .slowDrip] {
            let outcome = await outcome(MoyaProvider<Remote>(session: limited), target(fault, task: .downloadDestination(destination)))
            expectFailure(outcome)
            outcomes.append(outcome)
        }
        #expect(contents(of: directory).isEmpty)
        #expect(contents(of: downloads.url.appendingPathComponent("partial")).isEmpty)
        await expectOneCompletion(outcomes, session: limited)
    }
}
