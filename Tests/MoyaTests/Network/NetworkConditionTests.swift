import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network that `.ci/netem.sh` builds: nginx in a network namespace, behind a link whose
/// delay, loss, reordering, bandwidth, MTU and state the tests set.
///
/// - `MOYA_NETEM_URL`, `MOYA_NETEM_TLS_URL`: nginx over HTTP/1.1, and over TLS with HTTP/2.
/// - `MOYA_NETEM_CERT`: the certificate nginx presents (self-signed).
/// - `MOYA_NETEM_SCRIPT`: the script that changes the conditions.
/// - `MOYA_REQUIRE_NETEM=1`: fail instead of skipping when they are not set (CI sets it).
enum Netem {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["MOYA_NETEM_URL"].flatMap(URL.init(string:))
    static let tlsURL = environment["MOYA_NETEM_TLS_URL"].flatMap(URL.init(string:))
    static let certificatePath = environment["MOYA_NETEM_CERT"]
    static let script = environment["MOYA_NETEM_SCRIPT"]

    static var isAvailable: Bool { environment["MOYA_REQUIRE_NETEM"] == "1" || url != nil }

    static let skipMessage = Comment(
        rawValue: """
            No test network is set up (MOYA_NETEM_URL), so the network-condition suite is skipped. \
            Start one (as root) with `eval "$(bash .ci/netem.sh start)"`; set MOYA_REQUIRE_NETEM=1 to fail instead (CI does).
            """)

    /// Runs the script with `arguments` (`set delay 200ms`, `down`, ...).
    static func run(_ arguments: String...) throws {
        let script = try #require(script, "MOYA_NETEM_SCRIPT is not set")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "netem.sh \(arguments.joined(separator: " ")) failed")
    }

    /// A session that trusts nginx's certificate.
    static func session(timeout: TimeInterval, resource: TimeInterval? = nil) throws -> Session {
        let path = try #require(certificatePath, "MOYA_NETEM_CERT is not set")
        let certificate = try TLSCertificate(pem: Data(contentsOf: URL(fileURLWithPath: path)))
        return Session(
            configuration: .init(
                timeoutIntervalForConnect: timeout, timeoutIntervalForRequest: timeout, timeoutIntervalForResource: resource,
                tls: TLSSettings(trustRoots: .certificates([certificate]))))
    }
}

/// A file nginx serves in the test network, as a target.
private struct NetemTarget: TargetType {
    var baseURL: URL
    var path: String
    var method: Moya.Method = .get
    var task: Task = .requestPlain
    var headers: [String: String]? { nil }
    var validationType: ValidationType { .successCodes }

    static func file(_ name: String, tls: Bool = false) throws -> NetemTarget {
        NetemTarget(baseURL: try #require(tls ? Netem.tlsURL : Netem.url), path: "/" + name)
    }

    static func download(_ name: String, to destination: URL) throws -> NetemTarget {
        var target = try file(name)
        target.task = .downloadDestination { _, _ in (destination, [.removePreviousFile, .createIntermediateDirectories]) }
        return target
    }
}

/// Real network conditions, one at a time (they apply to the whole link): every request ends
/// once, with success or the expected error, within its limits plus a margin.
///
/// The margins are wide: the conditions are applied in user space (`.ci/netem-wire.py`), and CI
/// machines are slow. What each test checks is that the outcome comes, once, and is the right one.
@Suite("Network conditions (delay, loss, bandwidth, a link that goes down)", .serialized, .enabled(Netem.skipMessage, { Netem.isAvailable }))
struct NetworkConditionTests {
    /// A temporary folder for downloads, removed at the end.
    private let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moya-netem-\(UUID().uuidString)")

    private func clock<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }

    private func leftovers() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    }

    @Test("200 ms ± 50 ms of delay: plain, HTTP/2 over TLS and a download all succeed, none faster than the delay")
    func delay() async throws {
        try Netem.run("set", "delay", "200ms", "50ms")
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 10)
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
        try? FileManager.default.removeItem(at: folder)
    }

    @Test("5 % and 20 % packet loss: requests and a 1 MiB download succeed through TCP's retransmissions", arguments: ["5%", "20%"])
    func loss(_ rate: String) async throws {
        try Netem.run("set", "loss", rate)
        defer { try? Netem.run("clear") }
        let session = try Netem.session(timeout: 20)
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
        defer { try? Netem.run("mtu", "1500") }
        let session = try Netem.session(timeout: 20)
        let provider = MoyaProvider<NetemTarget>(session: session)
        #expect(try await provider.request(.file("1m.bin")).data.count == 1 << 20)
        #expect(try await provider.request(.file("1m.bin", tls: true)).data.count == 1 << 20)
        try await session.shutdown()
    }

    @Test("1 Mbit/s: a 1 MiB download takes the time the bandwidth says, and is not cut by the request timeout")
    func bandwidth() async throws {
        try Netem.run("set", "rate", "1mbit")
        defer { try? Netem.run("clear") }
        // The request timeout is between body parts: a slow but moving download is not cut.
        let session = try Netem.session(timeout: 3)
        let destination = folder.appendingPathComponent("slow.bin")
        let (response, elapsed) = try await clock {
            try await MoyaProvider<NetemTarget>(session: session).request(.download("1m.bin", to: destination))
        }
        #expect(response.statusCode == 200)
        #expect(elapsed >= .seconds(7), "1 MiB at 1 Mbit/s takes over 8 s")
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 1 << 20)
        try await session.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    @Test("A link that goes down and stays down: the download fails with timedOut after the request timeout, and leaves no file once the session shuts down")
    func linkStaysDown() async throws {
        try Netem.run("set", "rate", "2mbit")
        defer {
            try? Netem.run("up")
            try? Netem.run("clear")
        }
        let session = try Netem.session(timeout: 2)
        let temporary = session.configuration.temporaryDirectory
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [])
        let destination = folder.appendingPathComponent("cut.bin")
        let provider = MoyaProvider<NetemTarget>(session: session)
        let target = try NetemTarget.download("1m.bin", to: destination)
        let cut = _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(1))
            try Netem.run("down")
        }
        let (result, elapsed) = await clock { () -> Result<Moya.Response, MoyaError> in
            do throws(MoyaError) {
                return .success(try await provider.request(target))
            } catch {
                return .failure(error)
            }
        }
        try await cut.value
        guard case .failure(let error) = result else {
            Issue.record("the download succeeded over a link that was down")
            return
        }
        #expect((error.underlyingError as? URLError)?.code == .timedOut, "\(error)")
        #expect(elapsed < .seconds(1 + 2 + 5), "the request timeout (2 s) ends it, plus a margin")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // nginx sends an ETag: the partial file is kept for a resumption, and the failure says
        // how to resume; the session deletes it when it shuts down, as no one resumed it.
        #expect(error.resumeData != nil)
        try await session.shutdown()
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [])
        #expect(after.subtracting(before).isEmpty, "a partial file was left in \(temporary.path)")
    }

    @Test("A link that goes down for 5 s and comes back: a request whose timeout outlasts the outage completes")
    func linkComesBack() async throws {
        try Netem.run("set", "rate", "2mbit")
        defer {
            try? Netem.run("up")
            try? Netem.run("clear")
        }
        let session = try Netem.session(timeout: 15)
        let destination = folder.appendingPathComponent("back.bin")
        let outage = _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(1))
            try Netem.run("down")
            try await _Concurrency.Task.sleep(for: .seconds(5))
            try Netem.run("up")
        }
        let (response, elapsed) = try await clock {
            try await MoyaProvider<NetemTarget>(session: session).request(.download("1m.bin", to: destination))
        }
        try await outage.value
        #expect(response.statusCode == 200)
        #expect(elapsed >= .seconds(6), "the download waited out the outage")
        #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int == 1 << 20)
        try await session.shutdown()
        try? FileManager.default.removeItem(at: folder)
    }

    @Test("A stream's idle timeout fires when the link is down, not while it is merely slow")
    func streamIdleTimeout() async throws {
        try Netem.run("set", "rate", "2mbit")
        defer {
            try? Netem.run("up")
            try? Netem.run("clear")
        }
        let session = try Netem.session(timeout: 30)
        let provider = MoyaProvider<NetemTarget>(session: session)
        var options = StreamOptions()
        options.idleTimeout = 1.5

        // Slow (about 4 s for 1 MiB) but moving: the stream ends normally.
        var total = 0
        for try await chunk in try await provider.stream(.file("1m.bin"), options: options).body {
            total += chunk.count
        }
        #expect(total == 1 << 20)

        // The link goes down a second in: the idle timeout ends the stream, about 1.5 s later.
        let stream = try await provider.stream(.file("1m.bin"), options: options)
        let cut = _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(1))
            try Netem.run("down")
        }
        let start = ContinuousClock.now
        var received = 0
        do {
            for try await chunk in stream.body {
                received += chunk.count
            }
            Issue.record("the stream ended normally over a link that went down")
        } catch {
            #expect((error.underlyingError as? URLError)?.code == .timedOut, "\(error)")
        }
        try await cut.value
        #expect(received < 1 << 20)
        #expect(ContinuousClock.now - start < .seconds(1 + 1.5 + 4))
        try await session.shutdown()
    }
}
