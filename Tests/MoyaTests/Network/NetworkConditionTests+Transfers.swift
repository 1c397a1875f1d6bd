import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkConditionTests {
    /// Two MiB: a body of the uploads.
    static let uploadLength = 2 << 20

    @Test(
        "Uploads under delay, loss and a bandwidth limit: a file and in-memory data arrive whole, over HTTP/1.1 and HTTP/2",
        arguments: [["delay", "50ms", "10ms"], ["loss", "5%"], ["rate", "16mbit"]])
    func uploads(_ condition: [String]) async throws {
        try Netem.run(["set"] + condition)
        defer { try? Netem.run("clear") }
        let file = try directory.makeFile("upload.bin", length: Self.uploadLength)
        let data = try Data(contentsOf: file)
        // A moving upload is not cut by the write timeout, which is between chunks.
        let session = try Netem.session(timeout: 20, write: 2)
        let provider = MoyaProvider<NetemTarget>(session: session)
        for tls in [false, true] {
            for task in [Task.uploadFile(file), .requestData(data)] {
                let (result, elapsed) = await timedSend(provider, try .upload(task, tls: tls))
                let response = try result.get()
                #expect(response.statusCode == 200)
                // nginx answers once it has read the whole body, with its length.
                #expect(String(decoding: response.data, as: UTF8.self) == "\(Self.uploadLength)", "\(task), tls: \(tls)")
                if condition.first == "rate" {
                    #expect(elapsed >= .seconds(0.8), "2 MiB at 16 Mbit/s take over 1 s")
                }
                #expect(elapsed < .seconds(20) + Netem.margin)
            }
        }
        #expect(await eventually { openDescriptors(of: file) == 0 }, "an upload left its file open")
        try await session.shutdown()
    }

    @Test(
        "A file upload whose link goes down fails with timedOut after timeoutIntervalForWrite, closes the file and leaves nothing behind",
        arguments: [false, true])
    func stalledFileUpload(tls: Bool) async throws {
        try Netem.run("set", "rate", "16mbit")
        defer { try? Netem.run("reset") }
        // Far more than the socket buffers hold: the upload has to stall. Sparse: made at once.
        let file = directory.file("stalled.bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 16 << 20)
        try handle.close()
        // The request timeout is far away: only the write timeout can end it within the bound.
        let session = try Netem.session(timeout: 60, write: 1, temporaryDirectory: partialFiles)
        let cut = Netem.outage(after: 1)
        let (result, elapsed) = await timedSend(MoyaProvider<NetemTarget>(session: session), try .upload(.uploadFile(file), tls: tls))
        try await cut.value
        expectTimedOut(result)
        #expect(elapsed < .seconds(1 + 1) + Netem.margin, "the write timeout (1 s) ends it, plus a margin")
        #expect(await eventually { openDescriptors(of: file) == 0 }, "the upload left its file open")
        #expect(leftovers().isEmpty)
        guard tls else {
            try await session.shutdown()
            return
        }
        // Over HTTP/2 the connection outlives the failed stream, and its socket may be full of
        // the upload: the stream's RST_STREAM cannot be written until the link is back, so
        // AsyncHTTPClient cannot close the connection. The session's shutdown does not wait for
        // it longer than its limit, with the link still down.
        let (_, shutdownTime) = try await clock { try await session.shutdown() }
        #expect(
            shutdownTime < .seconds(Session.connectionCloseLimit) + Netem.margin,
            "the session did not shut down within its limit while the link was down")
        try Netem.run("up")
    }

    @Test("An in-memory upload whose link goes down ends with timedOut after the write timeout, leaving nothing behind")
    func stalledDataUpload() async throws {
        try Netem.run("set", "rate", "16mbit")
        defer { try? Netem.run("reset") }
        let data = Data(count: 16 << 20)
        let session = try Netem.session(timeout: 2, resource: 5, temporaryDirectory: partialFiles)
        let cut = Netem.outage(after: 1)
        let (result, elapsed) = await timedSend(MoyaProvider<NetemTarget>(session: session), try .upload(.requestData(data), tls: false))
        try await cut.value
        expectTimedOut(result)
        #expect(elapsed < .seconds(1 + 2) + Netem.margin, "the write timeout (2 s, the request timeout's) ends it, plus a margin")
        #expect(leftovers().isEmpty)
        // The write timeout ends it, not the resource limit (5 s).
        let cause = (result.error?.underlyingError as? URLError).flatMap { $0.userInfo[NSUnderlyingErrorKey] }.map { "\($0)" }
        #expect(cause?.contains("writeTimeout") == true, "ended by: \(cause ?? "?")")
        try Netem.run("up")
        try await session.shutdown()
    }
}
