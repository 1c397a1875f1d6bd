import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkConditionTests {
    /// The file nginx serves as `name`, from the test network's folder (beside its certificate).
    func servedFile(_ name: String) throws -> Data {
        let certificate = try #require(Netem.certificatePath)
        return try Data(contentsOf: URL(fileURLWithPath: certificate).deletingLastPathComponent().appendingPathComponent("www/\(name)"))
    }

    @Test(
        "A download cut by a link that went down resumes from nginx with a 206 once the link is back, and the file is whole",
        arguments: [false, true])
    func resumeAfterOutage(tls: Bool) async throws {
        try Netem.run("set", "rate", "2mbit")
        defer { try? Netem.run("reset") }
        // Over HTTP/2 the resumption must not go on the cut download's connection: its TCP
        // retransmissions backed off during the outage, and the first one after the link is back
        // can be more than the timeout away. The session retires that connection (it was silent
        // when the download was abandoned), so the resumption opens one of its own.
        let session = try Netem.session(timeout: 5, temporaryDirectory: partialFiles)
        let provider = MoyaProvider<NetemTarget>(session: session)
        let destination = folder.appendingPathComponent("1m.bin")
        let target = try NetemTarget.download("1m.bin", to: destination, tls: tls)

        // The connection downloads go on (the session's client for downloads), as nginx numbers it.
        let warmUp = try await provider.request(try .download("hello.txt", to: folder.appendingPathComponent("hello.txt"), tls: tls))
        let firstConnection = try #require(warmUp.response?.value(forHTTPHeaderField: "X-Connection"))

        // 1 MiB at 2 Mbit/s takes 4 s: the link goes down 1 s in, and stays down.
        let cut = Netem.outage(after: 1)
        let (result, elapsed) = await timedSend(provider, target)
        try await cut.value
        expectTimedOut(result)
        #expect(elapsed < .seconds(1 + 5) + Netem.margin, "the request timeout (5 s) ends it, plus a margin")
        let resumeData = try #require(result.error?.resumeData, "nginx sends an ETag: the cut download can be resumed")
        #expect(!FileManager.default.fileExists(atPath: destination.path))

        try Netem.run("up")
        let (resumed, _) = try await clock { try await provider.request(target, resumingWith: resumeData) }
        #expect(resumed.statusCode == 206, "the rest was asked for, and sent")
        #expect(
            resumed.response?.value(forHTTPHeaderField: "X-Connection") != firstConnection,
            "the resumption went on a connection of its own, not the one that went silent")
        #expect(try Data(contentsOf: destination) == servedFile("1m.bin"))
        #expect(leftovers().isEmpty, "the partial file became the download")
        try await session.shutdown()
    }

    @Test("RetryPolicy resumes a download cut by a link that goes down for 3 s: the retry after the outage asks for the rest, and the file is whole")
    func retryResumesAfterOutage() async throws {
        try Netem.run("set", "rate", "2mbit")
        defer { try? Netem.run("reset") }
        let session = try Netem.session(timeout: 2, temporaryDirectory: partialFiles)
        // Waits of 0.5, 1, 2 and 4 s: the attempts that fail while the link is down are retried
        // until one outlasts the outage.
        let policy = RetryPolicy(retryLimit: 5, exponentialBackoffBase: 2, exponentialBackoffScale: 0.5, jitter: 0, maximumDelay: 4)
        let recorder = RecordingRetryPolicy(policy: policy)
        let provider = MoyaProvider<NetemTarget>(session: session, interceptors: [recorder])
        let destination = folder.appendingPathComponent("1m.bin")

        // Down for 3 s once the first bytes have arrived; 1 MiB takes about 4 s at this rate.
        let (result, elapsed, outage) = await timedSend(provider, try .download("1m.bin", to: destination), cutFor: 3)
        try await #require(outage, "no bytes arrived before the end").value
        let response = try result.get()
        #expect(response.statusCode == 206, "the last attempt asked for the rest of the file")
        #expect(try Data(contentsOf: destination) == servedFile("1m.bin"))
        #expect(recorder.attempts.values.count >= 2, "the download was not retried")
        // Cut at the first bytes, attempts idle for at most 2 s, waits of up to 4 s: the second
        // retry outlasts the outage, and the rest takes about 4 s.
        let bound: Duration = .seconds(16)
        #expect(elapsed < bound + Netem.margin)
        #expect(leftovers().isEmpty)
        try await session.shutdown()
    }
}
