import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the test server's `/upload` route reports about a streamed body.
struct UploadReport: Decodable {
    let length: Int
    let sha256: String
    let contentType: String?
    let contentLength: String?
    let transferEncoding: String?
}

/// What the test server's `/multipart` route reports about a form.
struct MultipartReport: Decodable {
    struct Part: Decodable {
        let headers: [String: String]
        let name: String?
        let filename: String?
        let length: Int
        let sha256: String
        let body: String?
    }
    let boundary: String
    let parts: [Part]
}

@Suite("Streamed uploads against the in-process server")
struct UploadTests {
    let server: TestServer
    let provider = MoyaProvider<Remote>()
    let directory: TemporaryDirectory
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
        directory = try TemporaryDirectory()
    }

    @Test("uploadFile streams a 24 MiB file with its Content-Length; both sides agree on its SHA-256")
    func uploadFileRoundTrip() async throws {
        let file = try directory.makeFile("big.bin", length: 24 << 20)
        let result = await send(
            provider, Remote(base, "/upload", method: .post, task: .uploadFile(file), headers: ["Content-Type": "application/octet-stream"]))
        let report = try JSONDecoder().decode(UploadReport.self, from: try result.get().data)
        #expect(report.length == 24 << 20)
        #expect(report.sha256 == (try HexDigest.sha256(ofFileAt: file)))
        #expect(report.contentLength == String(24 << 20))
        #expect(report.transferEncoding == nil)
        #expect(report.contentType == "application/octet-stream")
    }

    @Test(
        "Data below, at and above the size from which it is streamed arrives whole, with its Content-Length",
        arguments: [BodyStreamer.smallestStreamedData - 1, BodyStreamer.smallestStreamedData, BodyStreamer.chunkSize * 3 + 17])
    func dataRoundTrip(length: Int) async throws {
        let data = PatternBytes.make(length) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) }
        let result = await send(provider, Remote(base, "/upload", method: .post, task: .requestData(data)))
        let report = try JSONDecoder().decode(UploadReport.self, from: try result.get().data)
        #expect(report.length == length)
        #expect(report.sha256 == HexDigest.sha256(data))
        #expect(report.contentLength == String(length))
        #expect(report.transferEncoding == nil)
    }

    @Test("An empty file uploads as an empty body")
    func uploadEmptyFile() async throws {
        let file = try directory.makeFile("empty.bin", length: 0)
        let result = await send(provider, Remote(base, "/upload", method: .put, task: .uploadFile(file)))
        let report = try JSONDecoder().decode(UploadReport.self, from: try result.get().data)
        #expect(report.length == 0)
        #expect(report.contentLength == "0")
    }

    @Test("Upload progress counts bytes sent up to the file size, then completes")
    func uploadProgress() async throws {
        let length = 4 << 20
        let file = try directory.makeFile("progress.bin", length: length)
        let events = Recorder<ProgressResponse>()
        let result = await send(provider, Remote(base, "/upload", method: .post, task: .uploadFile(file)), progress: { events.append($0) })
        #expect(throws: Never.self) { try result.get() }
        let values = events.values
        // At least one event while sending (events that come faster than the queue runs them
        // are coalesced), then the final one.
        #expect(values.count >= 2)
        #expect(values.dropLast().allSatisfy { !$0.completed && $0.response == nil })
        #expect(values.last?.completed == true)
        #expect(values.last?.progress == 1.0)
        let fractions = values.map(\.progress)
        #expect(fractions == fractions.sorted())
        // Every event before the end describes bytes sent of the file's size.
        #expect(values.dropLast().allSatisfy { $0.progressObject?.totalUnitCount == Int64(length) })
        #expect(values.dropLast().last?.progressObject?.completedUnitCount == Int64(length))
    }

    @Test("A missing file, a directory and a non-file URL fail before anything is sent")
    func badFiles() async throws {
        let cases: [(URL, (FileTransferError) -> Bool)] = [
            (directory.file("missing.bin"), { if case .fileNotFound = $0 { return true } else { return false } }),
            (directory.url, { if case .isDirectory = $0 { return true } else { return false } }),
            (URL(string: "https://example.com/file.bin")!, { if case .notAFileURL = $0 { return true } else { return false } }),
        ]
        let plugin = RecordingPlugin()
        let provider = MoyaProvider<Remote>(plugins: [plugin])
        for (url, matches) in cases {
            let result = await send(provider, Remote(base, "/upload", method: .post, task: .uploadFile(url)))
            let error = try #require(result.error?.underlyingError as? FileTransferError, "\(url): \(result)")
            #expect(matches(error), "\(url): \(error)")
            #expect(error.errorDescription?.isEmpty == false)
        }
        #expect(server.receivedRequests.isEmpty)
        // Plugins see the failed request like any other.
        #expect(plugin.events.filter { $0.hasSuffix("didReceive") }.count == cases.count)
    }

    @Test("Moya 15's uploadMultipart([MultipartFormData]) sends data, file and stream parts in order")
    func multipartParts() async throws {
        let file = try directory.makeFile("photo.png", length: 3 << 20)
        let streamBytes = PatternBytes.make(100_000) { UInt8($0 % 256) }
        let form: [MultipartFormData] = [
            MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
            MultipartFormData(provider: .data(Data("{}".utf8)), name: "meta", fileName: "meta.json", mimeType: "application/json"),
            MultipartFormData(provider: .file(file), name: "avatar"),
            MultipartFormData(provider: .file(file), name: "renamed", fileName: "other.bin", mimeType: "application/x-custom"),
            MultipartFormData(provider: .stream(InputStream(data: streamBytes), UInt64(streamBytes.count)), name: "stream"),
        ]
        let result = await send(
            provider, Remote(base, "/multipart", method: .post, task: .uploadMultipart(form), headers: ["content-type": "text/plain"]))
        let report = try JSONDecoder().decode(MultipartReport.self, from: try result.get().data)
        #expect(report.boundary.hasPrefix("alamofire.boundary."))
        #expect(!report.boundary.contains("-"))
        #expect(report.parts.map(\.name) == ["name", "meta", "avatar", "renamed", "stream"])
        #expect(report.parts[0].body == "Moya")
        #expect(report.parts[0].filename == nil)
        #expect(report.parts[0].headers["content-type"] == nil)
        #expect(report.parts[1].filename == "meta.json")
        #expect(report.parts[1].headers["content-type"] == "application/json")
        // A file part named by URL alone gets its name and MIME type from the URL.
        #expect(report.parts[2].filename == "photo.png")
        #expect(report.parts[2].headers["content-type"] == "image/png")
        #expect(report.parts[2].sha256 == (try HexDigest.sha256(ofFileAt: file)))
        #expect(report.parts[3].filename == "other.bin")
        #expect(report.parts[3].headers["content-type"] == "application/x-custom")
        #expect(report.parts[3].length == 3 << 20)
        // As in Moya, stream parts always carry a file name and a Content-Type, empty when not given.
        #expect(report.parts[4].filename == "")
        #expect(report.parts[4].sha256 == HexDigest.sha256(streamBytes))
        // The form's Content-Type replaced the target's, and the length was known up front.
        let recorded = try #require(server.receivedRequests.last)
        #expect(recorded.header("content-type") == "multipart/form-data; boundary=\(report.boundary)")
        #expect(recorded.header("content-length") != nil)
        #expect(recorded.header("transfer-encoding") == nil)
        // Plugins and the response see the multipart Content-Type too.
        #expect(try result.get().request?.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=\(report.boundary)")
    }

    @Test("A 20 MiB multipart upload streams byte for byte what the encoder produces")
    func largeMultipartMatchesEncoder() async throws {
        let file = try directory.makeFile("video.mp4", length: 20 << 20)
        let form = MultipartForm(
            boundary: "moya.test.boundary",
            parts: [
                MultipartFormData(provider: .data(Data("caption".utf8)), name: "caption"),
                MultipartFormData(provider: .file(file), name: "video"),
            ])
        let result = await send(
            provider, Remote(base, "/upload", method: .post, task: .uploadCompositeMultipartFormData(form, urlParameters: ["album": "summer"])))
        let report = try JSONDecoder().decode(UploadReport.self, from: try result.get().data)

        let expected = try RequestMultipartFormData(form).encode()
        #expect(report.length == expected.count)
        #expect(report.sha256 == HexDigest.sha256(expected))
        #expect(report.contentLength == String(expected.count))
        #expect(report.contentType == "multipart/form-data; boundary=moya.test.boundary")
        #expect(server.receivedRequests.last?.uri.contains("album=summer") == true)
    }

    @Test("Multipart uploads report upload progress")
    func multipartProgress() async throws {
        let file = try directory.makeFile("doc.pdf", length: 2 << 20)
        let events = Recorder<ProgressResponse>()
        let form: MultipartForm = [MultipartFormData(provider: .file(file), name: "doc")]
        let result = await send(provider, Remote(base, "/upload", method: .post, task: .uploadMultipartFormData(form)), progress: { events.append($0) })
        #expect(throws: Never.self) { try result.get() }
        let values = events.values
        #expect(values.count >= 2)
        #expect(values.last?.completed == true)
        #expect(values.dropLast().allSatisfy { !$0.completed && ($0.progressObject?.totalUnitCount ?? 0) > 2 << 20 })
    }

    @Test("Empty forms, methods without a body and bad file parts are errors, not crashes")
    func multipartErrors() async throws {
        let part = MultipartFormData(provider: .data(Data("x".utf8)), name: "x")
        let noExtension = try directory.makeFile("README", length: 10)
        let emptyForm = await send(provider, Remote(base, "/multipart", method: .post, task: .uploadMultipartFormData([])))
        #expect(emptyForm.error?.underlyingError as? MultipartEncodingError == .emptyForm)
        let get = await send(provider, Remote(base, "/multipart", method: .get, task: .uploadMultipartFormData([part])))
        #expect(get.error?.underlyingError as? MultipartEncodingError == .methodNotAllowed(.get))
        let filename = await send(
            provider,
            Remote(base, "/multipart", method: .post, task: .uploadMultipartFormData([MultipartFormData(provider: .file(noExtension), name: "f")])))
        #expect(filename.error?.underlyingError as? MultipartEncodingError == .bodyPartFilenameInvalid(in: noExtension))
        let missing = await send(
            provider,
            Remote(
                base, "/multipart", method: .post, task: .uploadMultipartFormData([MultipartFormData(provider: .file(directory.file("gone.png")), name: "f")])))
        guard case .fileNotFound? = missing.error?.underlyingError as? FileTransferError else {
            Issue.record("expected fileNotFound, got \(missing)")
            return
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("A stream that ends before its announced length fails the request")
    func shortStream() async throws {
        let form: MultipartForm = [MultipartFormData(provider: .stream(InputStream(data: Data(count: 10)), 1000), name: "s")]
        let result = await send(provider, Remote(base, "/upload", method: .post, task: .uploadMultipartFormData(form)))
        let error = try #require(result.error)
        guard case .lengthMismatch(expected: 1000, actual: 10)? = error.underlyingError as? FileTransferError else {
            Issue.record("expected lengthMismatch, got \(error)")
            return
        }
    }

    @Test("Cancelling an upload mid-transfer stops it and reports cancellation")
    func cancelUpload() async throws {
        // To a server that stops reading: the upload cannot finish before the cancel, however
        // late the first progress callback runs (on CI, under AddressSanitizer, a 64 MiB upload
        // to `/upload` once completed before it). Without a working cancel the request would end
        // with a timeout instead.
        let file = try directory.makeFile("cancel.bin", length: 64 << 20)
        let firstProgress = Recorder<Void>()
        let result: Result<Moya.Response, MoyaError> = await withCheckedContinuation { continuation in
            let token = Protected<Cancellable?>(nil)
            let cancellable = provider.request(
                Remote(base, "/stop-reading", method: .post, task: .uploadFile(file)), callbackQueue: .global(),
                progress: { _ in
                    firstProgress.append(())
                    if firstProgress.values.count == 1 { token.current?.cancel() }
                }
            ) { result in
                continuation.resume(returning: UncheckedResult(result))
            }
            token.withLock { $0 = cancellable }
            if firstProgress.values.count >= 1 { cancellable.cancel() }
        }.result
        #expect(result.error?.isCancelled == true)
        #expect(await eventually { openDescriptors(of: file) == 0 })
    }

    @Test("uploadCompositeMultipart sends the parts and the query; a file part with a file name alone is named by its URL, as in Moya 15")
    func compositeMultipart() async throws {
        let file = try directory.makeFile("notes.txt", length: 10)
        let parts = [
            MultipartFormData(provider: .data(Data("a".utf8)), name: "a", mimeType: "text/plain"),
            MultipartFormData(provider: .file(file), name: "f", fileName: "ignored.bin"),
            MultipartFormData(provider: .stream(InputStream(data: Data("s".utf8)), 1), name: "s", fileName: "s.bin", mimeType: "application/x-s"),
        ]
        let composite = await send(provider, Remote(base, "/multipart", method: .put, task: .uploadCompositeMultipart(parts, urlParameters: ["q": "1"])))
        let report = try JSONDecoder().decode(MultipartReport.self, from: composite.get().data)
        #expect(report.parts.map(\.name) == ["a", "f", "s"])
        #expect(report.parts[0].body == "a")
        #expect(report.parts[0].filename == nil)
        #expect(report.parts[0].headers["content-type"] == "text/plain")
        #expect(report.parts[1].filename == "notes.txt")
        #expect(report.parts[1].headers["content-type"] == "text/plain")
        #expect(report.parts[2].filename == "s.bin")
        #expect(report.parts[2].headers["content-type"] == "application/x-s")
        #expect(server.receivedRequests.last?.uri.hasSuffix("?q=1") == true)
    }

    @Test("A MultipartForm keeps its boundary, and code written with the old part name still builds")
    @available(*, deprecated, message: "exercises the deprecated MultipartFormBodyPart name")
    func formWithBoundary() async throws {
        let form = MultipartForm(boundary: "fixed.boundary", parts: [MultipartFormBodyPart(provider: .data(Data("x".utf8)), name: "x")])
        let result = await send(provider, Remote(base, "/multipart", method: .post, task: .uploadMultipartFormData(form)))
        let report = try JSONDecoder().decode(MultipartReport.self, from: result.get().data)
        #expect(report.boundary == "fixed.boundary")
        #expect(report.parts.map(\.body) == ["x"])
    }

    @Test("A Basic challenge replays a file upload in full; a one-shot stream is not replayed")
    func challengeReplay() async throws {
        let file = try directory.makeFile("auth.bin", length: 1 << 20)
        let provider = MoyaProvider<Remote>(plugins: [RecordingPlugin(credential: URLCredential(user: "user", password: "passwd", persistence: .none))])
        let fileResult = await send(provider, Remote(base, "/basic-auth/user/passwd", method: .post, task: .uploadFile(file)))
        #expect(try fileResult.get().statusCode == 200)
        #expect(server.receivedRequests.map(\.bodyLength) == [1 << 20, 1 << 20])

        server.resetRecordedRequests()
        let form: MultipartForm = [MultipartFormData(provider: .stream(InputStream(data: Data(count: 100)), 100), name: "s")]
        let streamResult = await send(provider, Remote(base, "/basic-auth/user/passwd", method: .post, task: .uploadMultipartFormData(form)))
        #expect(try streamResult.get().statusCode == 401)
        #expect(server.receivedRequests.count == 1)
    }

    @Test("A connection dropped during an upload fails with a network error")
    func droppedUpload() async throws {
        let file = try directory.makeFile("drop.bin", length: 8 << 20)
        let result = await send(provider, Remote(base, "/drop", method: .post, task: .uploadFile(file)))
        let error = try #require(result.error)
        #expect(error.underlyingError is URLError, "\(error)")
    }
}
