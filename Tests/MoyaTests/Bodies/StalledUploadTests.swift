import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How many of this process's file descriptors are open on `file` (Linux only; 0 elsewhere).
func openDescriptors(of file: URL) -> Int {
    #if os(Linux)
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { descriptor in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) == file.path
    }.count
    #else
    return 0
    #endif
}

@Suite("Uploads to a server that stops reading time out and close their files")
struct StalledUploadTests {
    let server: TestServer
    let directory: TemporaryDirectory
    var base: URL { server.baseURL }

    /// Larger than the socket buffers on both sides, so the upload stalls.
    static let bodyLength = 64 << 20

    /// A sparse file of `length` zero bytes: made at once, without writing them (the test suite
    /// runs in parallel on small machines).
    func makeSparseFile(_ name: String, length: Int) throws -> URL {
        let url = directory.file(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
        return url
    }

    init() async throws {
        server = try await TestServer.start()
        directory = try TemporaryDirectory()
    }

    /// Sends `target`; cancels it after `seconds`, so that an upload that never
    /// times out fails the test instead of hanging it.
    func timedUpload<T: TargetType>(_ provider: MoyaProvider<T>, _ target: T, cancelAfter seconds: TimeInterval = 300) async -> TimedResult {
        let start = Date()
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            let cancellable = provider.request(target, callbackQueue: .global(), progress: nil) { result in
                continuation.resume(returning: UncheckedResult(result))
            }
            let token = UncheckedSendable(cancellable)
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { token.value.cancel() }
        }.result
        return TimedResult(result: result, elapsed: Date().timeIntervalSince(start))
    }

    /// How long a stalled upload with a 1 s limit may take to fail. Far above the limit: under
    /// the sanitizers, with the CPU-heavy suites running beside these tests, the event loops
    /// were seen up to 25 s late. What tells a working limit from a broken one is the error:
    /// an upload that never times out is cancelled after 300 s (`timedUpload`), which fails
    /// with the cancellation error, not `timedOut`.
    static let timeOutBound: TimeInterval = 150

    func expectTimedOut(_ timed: TimedResult, within seconds: TimeInterval, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .underlying(let error as URLError, nil)? = timed.result.error else {
            Issue.record("expected URLError(.timedOut), got \(timed.result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == .timedOut, sourceLocation: sourceLocation)
        #expect(timed.elapsed < seconds, sourceLocation: sourceLocation)
    }

    @Test("A stalled file upload fails with timedOut after timeoutIntervalForWrite and closes the file; a steady one is not cut")
    func stalledFileUpload() async throws {
        // The steady upload's session allows 60 s for a chunk to be taken: under ThreadSanitizer, with the CPU-heavy suites
        // beside it, the server hashing the steady upload on its event loop was seen to stop
        // reading for over a second (and the event loops are sometimes 25 s late, see
        // `timeOutBound`). The stalled upload gets 1 s on a session of its own: its time out is
        // what is tested, and a busy machine only makes it later. (That a chunk's limit does not
        // cut an upload that lasts longer than it is the timing suites' business:
        // `TransferIdleTimeoutTests`.)
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForWrite: 60))
        let provider = MoyaProvider<Remote>(session: session)
        let steady = try makeSparseFile("steady.bin", length: 8 << 20)
        let report = try JSONDecoder().decode(
            UploadReport.self, from: try await send(provider, Remote(base, "/upload", method: .post, task: .uploadFile(steady))).get().data)
        #expect(report.length == 8 << 20)

        let stallingSession = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForWrite: 1))
        let file = try makeSparseFile("stalled.bin", length: Self.bodyLength)
        let result = await timedUpload(
            MoyaProvider<Remote>(session: stallingSession), Remote(base, "/stop-reading", method: .post, task: .uploadFile(file)))
        expectTimedOut(result, within: Self.timeOutBound)
        #expect(server.receivedRequests.map(\.path) == ["/upload", "/stop-reading"])
        #expect(await eventually { openDescriptors(of: file) == 0 && openDescriptors(of: steady) == 0 })
        try await session.shutdown()
        try await stallingSession.shutdown()
    }

    @Test("Without timeoutIntervalForWrite, a stalled upload fails after timeoutIntervalForRequest")
    func writeTimeoutFollowsRequestTimeout() async throws {
        let file = try makeSparseFile("stalled.bin", length: Self.bodyLength)
        let session = Session(configuration: .init(timeoutIntervalForRequest: 1))
        #expect(session.configuration.timeoutIntervalForWrite == nil)
        let provider = MoyaProvider<Remote>(session: session)
        let result = await timedUpload(provider, Remote(base, "/stop-reading", method: .put, task: .uploadFile(file)))
        expectTimedOut(result, within: Self.timeOutBound)
        #expect(await eventually { openDescriptors(of: file) == 0 })
        try await session.shutdown()
    }

    @Test("A stalled in-memory upload (requestData) times out too, rather than waiting for TCP to give up")
    func stalledDataUpload() async throws {
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForWrite: 1))
        let provider = MoyaProvider<Remote>(session: session)
        let start = Date()
        let result: Result<Moya.Response, MoyaError>
        do throws(MoyaError) {
            result = .success(try await provider.request(Remote(base, "/stop-reading", method: .post, task: .requestData(Data(count: Self.bodyLength)))))
        } catch {
            result = .failure(error)
        }
        expectTimedOut(TimedResult(result: result, elapsed: Date().timeIntervalSince(start)), within: Self.timeOutBound)
        try await session.shutdown()
    }

    @Test("A stalled multipart upload with a stream part times out too")
    func stalledMultipartStream() async throws {
        let file = try makeSparseFile("stream.bin", length: Self.bodyLength)
        let stream = try #require(InputStream(url: file))
        let form = [
            MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
            MultipartFormData(provider: .stream(stream, UInt64(Self.bodyLength)), name: "stream", fileName: "stream.bin", mimeType: "application/octet-stream"),
        ]
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForWrite: 1))
        let provider = MoyaProvider<Remote>(session: session)
        let result = await timedUpload(provider, Remote(base, "/stop-reading", method: .post, task: .uploadMultipart(form)))
        expectTimedOut(result, within: Self.timeOutBound)
        #expect(await eventually { openDescriptors(of: file) == 0 })
        try await session.shutdown()
    }

    @Test("A request's own limit ends a stalled upload and closes its file")
    func ownLimitEndsStalledUpload() async throws {
        let file = try makeSparseFile("stalled.bin", length: Self.bodyLength)
        // The session's write and read timeouts are far away: the request's 1 s limit ends it.
        let session = Session(configuration: .init(timeoutIntervalForRequest: 600, timeoutIntervalForWrite: 600))
        let provider = MoyaProvider<Remote>(session: session, plugins: [TimeoutPlugin(interval: 1)])
        let result = await timedUpload(provider, Remote(base, "/stop-reading", method: .post, task: .uploadFile(file)))
        expectTimedOut(result, within: Self.timeOutBound)
        #expect(await eventually { openDescriptors(of: file) == 0 })
        try await session.shutdown()
    }

    @Test("Cancelling a stalled upload closes its file")
    func cancelStalledUpload() async throws {
        let file = try makeSparseFile("stalled.bin", length: Self.bodyLength)
        let provider = MoyaProvider<Remote>()
        let result = await timedUpload(provider, Remote(base, "/stop-reading", method: .post, task: .uploadFile(file)), cancelAfter: 1)
        #expect(result.result.error?.isCancelled == true)
        #expect(await eventually { openDescriptors(of: file) == 0 })
    }
}
