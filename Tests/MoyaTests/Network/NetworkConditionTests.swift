import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The network-condition suite: real TCP (and TLS, HTTP/2, Server-Sent Events) over a link whose
// conditions the tests set, built by `.ci/netem.sh` (its header says how, and what each condition
// does to packets). One condition at a time, for the whole link, so the suite is serialized.
// "h1" is nginx over plain HTTP/1.1, "h2" nginx over TLS with HTTP/2; the event server is the
// project's sse-starlette server, over h1.
//
// Every request goes through a completion handler, which must run once. "Within L + margin"
// means the elapsed time is below the limit L that should end it plus `Netem.margin` (10 s): the
// link is user space, CI machines are slow and the suite also runs under AddressSanitizer, so
// nothing asserts that something is fast, only that it ends, with the right outcome, in bounds.
// Every failure test also checks that no file is left in the session's temporary directory, nor
// at the destination.
//
// | condition                       | sent                                                  | asserted                                                                 |
// |---------------------------------|-------------------------------------------------------|--------------------------------------------------------------------------|
// | delay 200 ms ± 50 ms            | h1 and h2 requests, a 1 MiB download                  | all succeed; an h1 round trip takes ≥ 300 ms                             |
// | loss 5 %, 20 %                  | 10 h1 requests, a 1 MiB h2 body                       | all succeed, the body whole                                              |
// | delay 20 ms, reorder 25 %       | a 1 MiB h1 body                                       | whole                                                                    |
// | MTU 576                         | 1 MiB over h1 and h2                                  | whole                                                                    |
// | rate 3 Mbit/s                   | a 1 MiB download (h1, h2), 2 s timeout                | succeeds in ≥ 2.5 s: not cut by the timeout, which is between body parts |
// | link down for good              | a 1 MiB download (h1, h2), 2 s timeout                | timedOut within 1 s + 2 s + margin, with resume data (nginx sends an     |
// |                                 |                                                       | ETag); no file at the destination, none left after the shutdown          |
// | link down for good, then back   | a 1 MiB download (h1, h2), 2 s timeout, then resumed  | timedOut with resume data; resumed once the link is back: a 206, and the |
// |                                 |                                                       | file is nginx's, byte for byte                                           |
// | link down 3 s during a download | a 1 MiB download (h1), 2 s timeout, `RetryPolicy`     | the retry after the outage asks for the rest: a 206, the file whole      |
// | link down 3 s, then back        | a 1 MiB download (h1), 15 s timeout                   | succeeds, in ≥ 4 s: it waited out the outage                             |
// | rate 4 Mbit/s, then down        | a 1 MiB stream, idle timeout 1.5 s                    | slow: ends whole; down: timedOut within 1 s + 1.5 s + margin             |
// | delay 50 ms, loss 5%, 16 Mbit/s | 2 MiB `.uploadFile` and `.requestData` (h1, h2)       | nginx read every byte (it answers with the count); at 16 Mbit/s ≥ 0.8 s  |
// | link down during an upload      | 16 MiB `.uploadFile` (h1, h2), write timeout 1 s      | timedOut within 1 s + 1 s + margin (the 60 s request timeout is not what |
// |                                 |                                                       | ends it); the file is closed; over h2, with the link still down,         |
// |                                 |                                                       | `shutdown()` returns within `Session.connectionCloseLimit` + margin      |
// | link down during an upload      | 16 MiB `.requestData` (h1), 2 s timeout, resource 5 s | timedOut within 1 s + 2 s + margin, by the write timeout (not the        |
// |                                 |                                                       | resource limit)                                                          |
// | delay 100 ms ± 25 ms, loss 10 % | `events(_:)` of /sse/count/6 (3 events a connection)  | every event once, in order; reconnections send Last-Event-ID 3, then 6   |
// |                                 | and /sse/ticks/6 (one every 200 ms), idle timeout 5 s | under delay the idle timeout never fires (one connection, then the 204)  |
// | link down 3 s during events     | `events(_:)` of /sse/ticks/12, idle timeout 1.5 s,    | every event once, in order; the idle timeout ends the silent connection, |
// |                                 | reconnection every 0.5 s                              | a reconnection after the link is back resumes after the last event       |
// |                                 |                                                       | received; within 2.4 s of events + 3 s + margin                          |
// | link down 3 s, then back        | a GET, 2 s timeout, `RetryPolicy(retryLimit: 5)`      | succeeds after ≥ 1 retry, each failed attempt timedOut; within the       |
// |                                 | (h1, h2)                                              | policy's worst case (23.5 s) + margin                                    |
// | rate 32 Mbit/s                  | an 8 MiB download to a file                           | resident memory (the live heap under AddressSanitizer) grows < 4 MiB     |

/// The network that `.ci/netem.sh` builds: nginx in a network namespace, behind a link whose
/// delay, loss, reordering, bandwidth, MTU and state the tests set.
///
/// - `MOYA_NETEM_URL`, `MOYA_NETEM_TLS_URL`: nginx over HTTP/1.1, and over TLS with HTTP/2.
/// - `MOYA_NETEM_CERT`: the certificate nginx presents (self-signed).
/// - `MOYA_NETEM_SCRIPT`: the script that changes the conditions.
/// - `MOYA_NETEM_SSE_URL`: the sse-starlette server in the namespace (only when `.ci/netem.sh`
///   found its venv; the event tests are skipped without it unless the network is required).
/// - `MOYA_REQUIRE_NETEM=1`: fail instead of skipping when they are not set (CI sets it).
enum Netem {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["MOYA_NETEM_URL"].flatMap(URL.init(string:))
    static let tlsURL = environment["MOYA_NETEM_TLS_URL"].flatMap(URL.init(string:))
    static let sseURL = environment["MOYA_NETEM_SSE_URL"].flatMap(URL.init(string:))
    static let certificatePath = environment["MOYA_NETEM_CERT"]
    static let script = environment["MOYA_NETEM_SCRIPT"]

    static var isRequired: Bool { environment["MOYA_REQUIRE_NETEM"] == "1" }
    static var isAvailable: Bool { isRequired || url != nil }
    static var hasEvents: Bool { isRequired || sseURL != nil }

    /// How much longer than its limit an outcome may take: the link is user space, the CI
    /// machine slow, and the suite also runs under AddressSanitizer.
    static let margin: Duration = .seconds(10)

    static let skipMessage = Comment(
        rawValue: """
            No test network is set up (MOYA_NETEM_URL), so the network-condition suite is skipped. \
            Start one (as root) with `eval "$(bash .ci/netem.sh start)"`; set MOYA_REQUIRE_NETEM=1 to fail instead (CI does).
            """)

    static let noEventsMessage = Comment(
        rawValue: """
            The test network has no event server (MOYA_NETEM_SSE_URL): .ci/netem.sh starts one when the sse-starlette venv \
            that .ci/run makes exists (MOYA_SSE_VENV, default .build/sse-venv).
            """)

    /// Runs the script with `arguments` (`set delay 200ms`, `down`, ...).
    static func run(_ arguments: String...) throws {
        try run(arguments)
    }

    /// Runs the script with `arguments`.
    static func run(_ arguments: [String]) throws {
        let script = try #require(script, "MOYA_NETEM_SCRIPT is not set")
        // What the script prints goes to the test log, as its failures should.
        let process = try ChildProcess(executable: "/bin/bash", arguments: [script] + arguments, standardOutput: 1, standardError: 2)
        let termination = process.waitUntilExitBlocking()
        try #require(termination == .exited(0), "netem.sh \(arguments.joined(separator: " ")) failed (\(termination))")
    }

    /// Once per run, before the first test: the state `start` leaves, whatever a run that was
    /// killed in the middle of a test left (each test restores it when it ends).
    static let resetOnce: Void = { try? run("reset") }()

    /// Takes the link down after `after` seconds and, unless `for` is `nil`, brings it back
    /// `for` seconds later.
    static func outage(after: Double, for duration: Double? = nil) -> _Concurrency.Task<Void, any Error> {
        _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(after))
            try run("down")
            if let duration {
                try await _Concurrency.Task.sleep(for: .seconds(duration))
                try run("up")
            }
        }
    }

    /// A session that trusts nginx's certificate. `timeout` is the connect and request timeout;
    /// downloads are written in `temporaryDirectory` while they arrive.
    static func session(
        timeout: TimeInterval, resource: TimeInterval? = nil, write: TimeInterval? = nil, temporaryDirectory: URL? = nil
    ) throws -> Session {
        let path = try #require(certificatePath, "MOYA_NETEM_CERT is not set")
        let certificate = try TLSCertificate(pem: Data(contentsOf: URL(fileURLWithPath: path)))
        var configuration = Session.Configuration(
            timeoutIntervalForConnect: timeout, timeoutIntervalForRequest: timeout, timeoutIntervalForResource: resource,
            timeoutIntervalForWrite: write, tls: TLSSettings(trustRoots: .certificates([certificate])))
        if let temporaryDirectory {
            configuration.temporaryDirectory = temporaryDirectory
        }
        return Session(configuration: configuration)
    }
}

/// A file nginx serves in the test network, an upload to it, or an event stream, as a target.
struct NetemTarget: TargetType {
    var baseURL: URL
    var path: String
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }

    static func file(_ name: String, tls: Bool = false) throws -> NetemTarget {
        NetemTarget(baseURL: try #require(tls ? Netem.tlsURL : Netem.url), path: "/" + name)
    }

    static func download(_ name: String, to destination: URL, tls: Bool = false) throws -> NetemTarget {
        var target = try file(name, tls: tls)
        target.task = .downloadDestination { _, _ in (destination, [.removePreviousFile, .createIntermediateDirectories]) }
        return target
    }

    /// A `POST /upload`: nginx reads the whole body, then answers with its length.
    static func upload(_ task: Task, tls: Bool) throws -> NetemTarget {
        NetemTarget(baseURL: try #require(tls ? Netem.tlsURL : Netem.url), path: "/upload", method: .post, task: task)
    }

    /// A route of the event server, with its query.
    static func events(_ path: String, query: [String: String] = [:]) throws -> NetemTarget {
        NetemTarget(
            baseURL: try #require(Netem.sseURL, "MOYA_NETEM_SSE_URL is not set"), path: path,
            task: query.isEmpty ? .requestPlain : .requestParameters(parameters: query, encoding: URLEncoding.queryString))
    }
}

/// Real network conditions, one at a time (they apply to the whole link): every request ends
/// once, with success or the expected error, within its limits plus a margin. The table at the
/// top of this file says what each test asserts.
@Suite(
    "Network conditions (delay, loss, bandwidth, a link that goes down)", .serialized, .enabled(Netem.skipMessage, { Netem.isAvailable }),
    // A hang is a failure, not the end of CI's time.
    .timeLimit(.minutes(3)))
struct NetworkConditionTests {
    /// This test's folder (removed at the end): downloads, and the session's partial files in
    /// `partial`.
    let directory: TemporaryDirectory

    init() throws {
        Netem.resetOnce
        directory = try TemporaryDirectory()
    }

    var folder: URL { directory.url }

    /// Where the test's sessions write downloads while they arrive.
    var partialFiles: URL { directory.file("partial") }

    func clock<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }

    /// Sends `target` through the completion handler (which must run once: a second call would
    /// resume a continuation twice), and times it.
    func timedSend(_ provider: MoyaProvider<NetemTarget>, _ target: NetemTarget) async -> (Result<Moya.Response, MoyaError>, Duration) {
        await clock { await send(provider, target) }
    }

    /// Sends `target`, takes the link down for `seconds` once its first bytes have arrived, and
    /// times it. The cut follows the transfer, not a timer: a loaded machine may start the
    /// request late or run the script late, and a cut planned for a second in could come after
    /// a short transfer had ended. The outage's task is returned, to wait on.
    func timedSend(_ provider: MoyaProvider<NetemTarget>, _ target: NetemTarget, cutFor seconds: Double) async -> (
        Result<Moya.Response, MoyaError>, Duration, outage: _Concurrency.Task<Void, any Error>?
    ) {
        let outage = Protected<_Concurrency.Task<Void, any Error>?>(nil)
        let (result, elapsed) = await clock {
            await send(provider, target) { progress in
                guard (progress.progressObject?.completedUnitCount ?? 0) > 0 else { return }
                outage.withLock { cut in
                    if cut == nil { cut = Netem.outage(after: 0, for: seconds) }
                }
            }
        }
        return (result, elapsed, outage.withLock { $0 })
    }

    /// The files left in the session's temporary directory.
    func leftovers() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: partialFiles.path)) ?? []
    }

    /// Expects `result` to be a failure with `URLError(.timedOut)`.
    func expectTimedOut(_ result: Result<Moya.Response, MoyaError>, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .failure(let error) = result else {
            Issue.record("expected URLError(.timedOut), the request succeeded", sourceLocation: sourceLocation)
            return
        }
        #expect((error.underlyingError as? URLError)?.code == .timedOut, "\(error)", sourceLocation: sourceLocation)
    }

    @Test("200 ms ± 50 ms of delay: plain, HTTP/2 over TLS and a download all succeed, none faster than the delay")
    func delay() async throws {
        try Netem.run("set", "delay", "200ms", "50ms")
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 10, temporaryDirectory: partialFiles)
        let provider = MoyaProvider<NetemTarget>(session: session)
        let (plain, plainTime) = try await clock { try await provider.request(.file("hello.txt")) }
        #expect(plain.statusCode == 200)
        #expect(plainTime >= .milliseconds(300), "a request and its answer cross the link twice")
        let (secure, _) = try await clock { try await provider.request(.file("hello.txt", tls: true)) }
        #expect(secure.statusCode == 200)
        let destination = folder.appendingPathComponent("1m.bin")
        let (download, _) = try await clock { try await provider.request(.download("1m.bin", to: destination)) }
        #expect(download.statusCode == 200)
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 1 << 20)
        try await session.shutdown()
    }

    @Test("5 % and 20 % packet loss: requests and a 1 MiB download succeed through TCP's retransmissions", arguments: ["5%", "20%"])
    func loss(_ rate: String) async throws {
        try Netem.run("set", "loss", rate)
        defer { try? Netem.run("clear") }
        // The wire drops packets both ways, the handshakes' too, and each loss of the same packet
        // doubles TCP's wait before it is sent again (1, 2, 4, 8 s for a SYN): at 20 %, a
        // connection and its TLS handshake now and then needed more than 20 s. A minute holds
        // for five losses of one packet in a row; a run that passes waits no longer for it.
        let session = try Netem.session(timeout: 60)
        let provider = MoyaProvider<NetemTarget>(session: session)
        for _ in 0..<10 {
            #expect(try await provider.request(.file("hello.txt")).statusCode == 200)
        }
        let body = try await provider.request(.file("1m.bin", tls: true)).data
        #expect(body.count == 1 << 20)
        try await session.shutdown()
    }

    @Test("Reordered packets: the body arrives whole")
    func reordering() async throws {
        try Netem.run("set", "delay", "20ms", "reorder", "25%")
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 20)
        let body = try await MoyaProvider<NetemTarget>(session: session).request(.file("1m.bin")).data
        #expect(body.count == 1 << 20)
        try await session.shutdown()
    }

    @Test("A small MTU (576 bytes): plain and TLS bodies arrive whole")
    func smallMTU() async throws {
        try Netem.run("mtu", "576")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 20)
        let provider = MoyaProvider<NetemTarget>(session: session)
        #expect(try await provider.request(.file("1m.bin")).data.count == 1 << 20)
        #expect(try await provider.request(.file("1m.bin", tls: true)).data.count == 1 << 20)
        try await session.shutdown()
    }

    @Test(
        "3 Mbit/s: a 1 MiB download takes the time the bandwidth says, and is not cut by the request timeout",
        arguments: [false, true])
    func bandwidth(tls: Bool) async throws {
        try Netem.run("set", "rate", "3mbit")
        defer { try? Netem.run("clear") }
        // The request timeout is between body parts: a slow but moving download is not cut.
        let session = try Netem.session(timeout: 2, temporaryDirectory: partialFiles)
        let destination = folder.appendingPathComponent("slow.bin")
        let (result, elapsed) = await timedSend(MoyaProvider<NetemTarget>(session: session), try .download("1m.bin", to: destination, tls: tls))
        #expect(try result.get().statusCode == 200)
        #expect(elapsed >= .seconds(2.5), "1 MiB at 3 Mbit/s takes 2.8 s, longer than the timeout")
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 1 << 20)
        #expect(leftovers().isEmpty)
        try await session.shutdown()
    }

    @Test(
        "A link that goes down and stays down: the download fails with timedOut after the request timeout, carries resume data, and leaves no file once the session shuts down",
        arguments: [false, true])
    func linkStaysDown(tls: Bool) async throws {
        try Netem.run("set", "rate", "2mbit")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 2, temporaryDirectory: partialFiles)
        let destination = folder.appendingPathComponent("cut.bin")
        let provider = MoyaProvider<NetemTarget>(session: session)
        let target = try NetemTarget.download("1m.bin", to: destination, tls: tls)
        let cut = Netem.outage(after: 1)
        let (result, elapsed) = await timedSend(provider, target)
        try await cut.value
        expectTimedOut(result)
        #expect(elapsed < .seconds(1 + 2) + Netem.margin, "the request timeout (2 s) ends it, plus a margin")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // nginx sends an ETag: the partial file is kept for a resumption, and the failure says
        // how to resume; the session deletes it when it shuts down, as no one resumed it.
        #expect(result.error?.resumeData != nil, "no resume data")
        // Back before the shutdown, which then need not leave an HTTP/2 connection to close by
        // itself.
        try Netem.run("up")
        try await session.shutdown()
        #expect(leftovers().isEmpty, "a partial file was left in \(partialFiles.path)")
    }

    @Test("A link that goes down for 3 s and comes back: a request whose timeout outlasts the outage completes")
    func linkComesBack() async throws {
        try Netem.run("set", "rate", "4mbit")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 15, temporaryDirectory: partialFiles)
        let destination = folder.appendingPathComponent("back.bin")
        // Down for 3 s once the first bytes have arrived; 1 MiB takes about 2 s at this rate.
        let (result, elapsed, outage) = await timedSend(MoyaProvider<NetemTarget>(session: session), try .download("1m.bin", to: destination), cutFor: 3)
        try await #require(outage, "no bytes arrived before the end").value
        #expect(try result.get().statusCode == 200)
        #expect(elapsed >= .seconds(3), "the download waited out the outage")
        #expect(elapsed < .seconds(3 + 15) + Netem.margin)
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 1 << 20)
        #expect(leftovers().isEmpty)
        try await session.shutdown()
    }

    @Test("A stream's idle timeout fires when the link is down, not while it is merely slow")
    func streamIdleTimeout() async throws {
        try Netem.run("set", "rate", "4mbit")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 30)
        let provider = MoyaProvider<NetemTarget>(session: session)
        var options = StreamOptions()
        options.idleTimeout = 1.5

        // Slow (about 2 s for 1 MiB) but moving: the stream ends normally.
        var total = 0
        for try await chunk in try await provider.stream(.file("1m.bin"), options: options).body {
            total += chunk.count
        }
        #expect(total == 1 << 20)

        // The link goes down once the stream's first bytes have been read (as `eventsLinkDown`
        // does on an event), rather than after a timer: the whole of the rest, about 2 s at this
        // rate, is left for the script to take the link down on a loaded machine. The idle
        // timeout then ends the stream, about 1.5 s later.
        let stream = try await provider.stream(.file("1m.bin"), options: options)
        var cut: _Concurrency.Task<Void, any Error>?
        let start = ContinuousClock.now
        var received = 0
        do {
            for try await chunk in stream.body {
                received += chunk.count
                if cut == nil {
                    cut = Netem.outage(after: 0)
                }
            }
            Issue.record("the stream ended normally over a link that went down")
        } catch {
            #expect((error.underlyingError as? URLError)?.code == .timedOut, "\(error)")
        }
        try await cut?.value
        #expect(received < 1 << 20)
        #expect(ContinuousClock.now - start < .seconds(1 + 1.5) + Netem.margin)
        try Netem.run("up")
        try await session.shutdown()
    }

    // Last, so that the suites that run beside this one at the start of a full run have ended.
    @Test("An 8 MiB download at 32 Mbit/s goes to its file: memory stays flat while it runs")
    func downloadMemoryStaysFlat() async throws {
        try Netem.run("set", "rate", "32mbit")
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 20, temporaryDirectory: partialFiles)
        let provider = MoyaProvider<NetemTarget>(session: session)
        // A first download loads the code and the connection that the measured one uses.
        let warmUp = folder.appendingPathComponent("warm-up.bin")
        #expect(try await send(provider, .download("1m.bin", to: warmUp)).get().statusCode == 200)
        let destination = folder.appendingPathComponent("8m.bin")
        let before = MemoryProbe.current()
        let sampler = PeakMemorySampler()
        let (result, elapsed) = await timedSend(provider, try .download("8m.bin", to: destination))
        let peak = await sampler.stop()
        #expect(try result.get().statusCode == 200)
        #expect(elapsed >= .seconds(1.5), "8 MiB at 32 Mbit/s take over 2 s")
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 8 << 20)
        let growth = peak - before
        #expect(growth < 4 << 20, "\(MemoryProbe.measure) grew by \(growth >> 10) KiB during an 8 MiB download")
        #expect(leftovers().isEmpty)
        try await session.shutdown()
    }
}
