import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Streamed downloads against the in-process server")
struct DownloadTests: DownloadSuite {
    let fixture: DownloadFixture

    init() async throws {
        fixture = try await DownloadFixture()
    }

    private func destination(_ url: URL, options: DownloadRequest.Options = []) -> DownloadDestination {
        { _, _ in (url, options) }
    }

    @Test("A 24 MiB download with Content-Length lands at the destination intact", arguments: [true, false])
    func downloadRoundTrip(withLength: Bool) async throws {
        let length = 24 << 20
        let target = directory.file("download.bin")
        let result = await send(
            provider,
            Remote(
                base, "/bytes/\(length)",
                task: .downloadParameters(
                    parameters: ["length": withLength ? "true" : "false", "chunk": 65_536], encoding: URLEncoding.queryString, destination: destination(target))
            ))
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty, "a download's body is in the file, as in Moya")
        #expect(try HexDigest.sha256(ofFileAt: target) == patternDigest(length: length))
        #expect(staging.contents.isEmpty)
        #expect(server.receivedRequests.last?.query?.contains("chunk=65536") == true)
    }

    @Test("The destination closure gets the finished temporary file and the response")
    func destinationClosureArguments() async throws {
        let target = directory.file("named.bin")
        let seen = Recorder<(String, Int, Int?)>()
        let destination: DownloadDestination = { temporaryURL, response in
            let size = (try? FileManager.default.attributesOfItem(atPath: temporaryURL.path)[.size] as? NSNumber)?.intValue
            seen.append((temporaryURL.deletingLastPathComponent().path, response.statusCode, size))
            return (target, [])
        }
        let result = await send(provider, Remote(base, "/bytes/5000", task: .downloadDestination(destination)))
        #expect(throws: Never.self) { try result.get() }
        let (folder, status, size) = try #require(seen.values.first)
        #expect(URL(fileURLWithPath: folder).standardizedFileURL == staging.url.standardizedFileURL)
        #expect(status == 200)
        #expect(size == 5000)
        #expect(FileManager.default.fileExists(atPath: target.path))
    }

    @Test("Download progress: fractions with a length, zeros without, then one completed event")
    func downloadProgress() async throws {
        for withLength in [true, false] {
            let events = Recorder<ProgressResponse>()
            let target = directory.file("progress-\(withLength).bin")
            let result = await send(
                provider,
                Remote(
                    base, "/bytes/4000",
                    task: .downloadParameters(
                        parameters: ["chunk": 1000, "interval_ms": 20, "length": withLength ? "true" : "false"], encoding: URLEncoding.queryString,
                        destination: destination(target))), progress: { events.append($0) })
            #expect(throws: Never.self) { try result.get() }
            let values = events.values
            #expect(values.last?.completed == true)
            #expect(values.last?.progress == 1.0)
            #expect(values.dropLast().allSatisfy { !$0.completed })
            let fractions = values.dropLast().map(\.progress)
            if withLength {
                #expect(fractions.last == 1.0)
                #expect(fractions == fractions.sorted())
            } else {
                #expect(fractions.allSatisfy { $0 == 0 })
            }
            #expect(values.count >= 2)
        }
    }

    @Test("createIntermediateDirectories and removePreviousFile apply; without them the move fails cleanly")
    func destinationOptions() async throws {
        let nested = directory.url.appendingPathComponent("a/b/c/file.bin")
        let missingFolder = await send(provider, Remote(base, "/bytes/100", task: .downloadDestination(destination(nested))))
        guard case .moveFailed? = missingFolder.error?.underlyingError as? FileTransferError else {
            Issue.record("expected moveFailed, got \(missingFolder)")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: nested.path))
        #expect(staging.contents.isEmpty)

        let created = await send(
            provider, Remote(base, "/bytes/100", task: .downloadDestination(destination(nested, options: .createIntermediateDirectories))))
        #expect(throws: Never.self) { try created.get() }
        #expect(try HexDigest.sha256(ofFileAt: nested) == patternDigest(length: 100))

        // A file already there stays untouched without removePreviousFile...
        let existing = directory.file("existing.bin")
        try Data("old".utf8).write(to: existing)
        let refused = await send(provider, Remote(base, "/bytes/200", task: .downloadDestination(destination(existing))))
        guard case .moveFailed? = refused.error?.underlyingError as? FileTransferError else {
            Issue.record("expected moveFailed, got \(refused)")
            return
        }
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        // ...and is replaced with it.
        let replaced = await send(provider, Remote(base, "/bytes/200", task: .downloadDestination(destination(existing, options: [.removePreviousFile]))))
        #expect(throws: Never.self) { try replaced.get() }
        #expect(try HexDigest.sha256(ofFileAt: existing) == patternDigest(length: 200))
        #expect(staging.contents.isEmpty)
    }

    @Test("A rejected status leaves nothing behind, and the error carries the server's error document")
    func validationFailure() async throws {
        let target = directory.file("rejected.bin")
        let result = await send(provider, Remote(base, "/status/404", task: .downloadDestination(destination(target)), validationType: .successCodes))
        guard case .statusCode(let response)? = result.error else {
            Issue.record("expected statusCode, got \(result)")
            return
        }
        #expect(response.statusCode == 404)
        #expect(!response.data.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(staging.contents.isEmpty)
    }

    @Test("Without validation, an error status is downloaded like any other")
    func unvalidatedErrorStatus() async throws {
        let target = directory.file("error.bin")
        let result = await send(provider, Remote(base, "/status/500", task: .downloadDestination(destination(target))))
        #expect(try result.get().statusCode == 500)
        #expect(FileManager.default.fileExists(atPath: target.path))
    }

    @Test("A body cut off mid-transfer or a dropped connection fails and leaves no partial file")
    func brokenTransfers() async throws {
        for path in ["/truncate/2000000", "/drop"] {
            let target = directory.file("broken.bin")
            let result = await send(provider, Remote(base, path, task: .downloadDestination(destination(target))))
            let error = try #require(result.error, "\(path) should fail")
            #expect((error.underlyingError as? URLError) != nil, "\(path): \(error)")
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(staging.contents.isEmpty, "\(path) left \(staging.contents)")
        }
    }

    @Test("Cancelling mid-transfer reports cancellation and removes the partial file")
    func cancelDownload() async throws {
        let target = directory.file("cancelled.bin")
        let progressed = Recorder<Void>()
        let token = Protected<Cancellable?>(nil)
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            let cancellable = provider.request(
                Remote(
                    base, "/bytes/50000000",
                    task: .downloadParameters(
                        parameters: ["chunk": 65_536, "interval_ms": 5], encoding: URLEncoding.queryString, destination: destination(target))),
                callbackQueue: .global(),
                progress: { _ in
                    progressed.append(())
                    if progressed.values.count == 3 { token.current?.cancel() }
                }
            ) { result in
                continuation.resume(returning: UncheckedResult(result))
            }
            token.withLock { $0 = cancellable }
        }.result
        #expect(result.error?.isCancelled == true)
        #expect(await eventually { staging.contents.isEmpty }, "partial file left: \(staging.contents)")
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("A download staged on another file system is copied beside the destination, then renamed")
    func crossFileSystemMove() async throws {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let onOtherDevice: Bool = {
            guard let shmDevice = try? FileManager.default.attributesOfItem(atPath: shm.path)[.systemNumber] as? NSNumber,
                let hereDevice = try? FileManager.default.attributesOfItem(atPath: directory.url.path)[.systemNumber] as? NSNumber
            else { return false }
            return shmDevice != hereDevice
        }()
        guard onOtherDevice else { return }
        let staging = try TemporaryDirectory(in: shm)
        let session = Session(configuration: .init(temporaryDirectory: staging.url))
        let provider = MoyaProvider<Remote>(session: session)
        let target = directory.file("moved.bin")
        let result = await send(provider, Remote(base, "/bytes/3000000", task: .downloadDestination(destination(target))))
        #expect(throws: Never.self) { try result.get() }
        #expect(try HexDigest.sha256(ofFileAt: target) == patternDigest(length: 3_000_000))
        #expect(staging.contents.isEmpty)
        #expect(directory.contents == ["moved.bin"], "no .part file left beside the destination")
        try await session.shutdown()
    }

    @Test("Stubbed downloads return the sample data and write no file, as in Moya")
    func stubbedDownload() async throws {
        let target = directory.file("stub.bin")
        let provider = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub)
        let result = await send(provider, Remote(base, "/bytes/10", task: .downloadDestination(destination(target)), sampleData: Data("sample".utf8)))
        #expect(try result.get().data == Data("sample".utf8))
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("suggestedDownloadDestination uses the response's suggested file name")
    func suggestedDestination() throws {
        let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory, options: .removePreviousFile)
        let response = try #require(
            HTTPURLResponse(
                url: URL(string: "https://example.com/files/report.pdf")!, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Disposition": "attachment; filename=\"annual.pdf\""]))
        let (url, options) = destination(URL(fileURLWithPath: "/tmp/x.tmp"), response)
        #expect(url.lastPathComponent == "annual.pdf")
        #expect(url.deletingLastPathComponent().path == FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first?.path)
        #expect(options == .removePreviousFile)
    }
}
