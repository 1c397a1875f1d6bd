import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The process's memory, for the test that a download stays out of it.
enum MemoryProbe {
    /// The process's resident memory (`VmRSS`), in bytes.
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    /// Under AddressSanitizer, the bytes allocated and not yet freed: freed memory stays in the
    /// sanitizer's quarantine, resident, so there the resident size grows with everything a
    /// download allocates and frees, however little it holds at once. `nil` without it.
    static func sanitizerLiveBytes() -> Int? {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "__sanitizer_get_current_allocated_bytes") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)()
    }

    /// What the test measures: the live heap under AddressSanitizer, else the resident size.
    static func current() -> Int { sanitizerLiveBytes() ?? residentBytes() }

    static var measure: String { isAddressSanitizer ? "the live heap (AddressSanitizer)" : "resident memory" }

    /// Whether this process runs under AddressSanitizer.
    static var isAddressSanitizer: Bool { sanitizerLiveBytes() != nil }
}

/// The highest ``MemoryProbe/current()`` seen while it runs, sampled every 10 ms on a thread of
/// its own.
final class PeakMemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init() {
        peak = MemoryProbe.current()
        Thread.detachNewThread { [self] in
            while true {
                let sample = MemoryProbe.current()
                let stop = lock.withLock {
                    peak = max(peak, sample)
                    return stopped
                }
                if stop { break }
                usleep(10_000)
            }
            done.signal()
        }
    }

    /// Stops sampling and returns the peak.
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { peak }
    }
}

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
