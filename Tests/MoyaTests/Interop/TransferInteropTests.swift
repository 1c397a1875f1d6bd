import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Uploads and downloads against httpbin", .enabled(HTTPBin.skipMessage, HTTPBin.condition))
struct TransferInteropTests {
    /// What httpbin's `/post` and `/put` answer for a form: fields and files by name.
    struct FormEcho: Decodable {
        let form: [String: String]
        let files: [String: String]
        let headers: [String: String]
    }

    @Test("A multipart form with data, file and stream parts is parsed by httpbin (Werkzeug)")
    func multipartForm() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("notes.txt")
        try Data("hello from a file\n".utf8).write(to: file)
        let form: MultipartForm = [
            MultipartFormData(provider: .data(Data("Moya".utf8)), name: "name"),
            MultipartFormData(provider: .file(file), name: "notes"),
            MultipartFormData(
                provider: .stream(InputStream(data: Data("streamed".utf8)), 8), name: "raw", fileName: "raw.bin", mimeType: "application/octet-stream"),
        ]
        let result = await send(MoyaProvider<HTTPBinTarget>(), HTTPBinTarget("/post", method: .post, task: .uploadMultipartFormData(form)))
        let echo = try JSONDecoder().decode(FormEcho.self, from: try result.get().data)
        #expect(echo.form["name"] == "Moya")
        #expect(echo.files["notes"] == "hello from a file\n")
        #expect(echo.files["raw"] == "streamed")
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=alamofire.boundary.") == true)
    }

    @Test("uploadFile sends the file as the raw body")
    func uploadFile() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("body.json")
        try Data(#"{"uploaded":"yes"}"#.utf8).write(to: file)
        let result = await send(
            MoyaProvider<HTTPBinTarget>(), HTTPBinTarget("/put", method: .put, task: .uploadFile(file), headers: ["Content-Type": "application/json"]))
        let echo = try httpbinEcho(of: result)
        #expect(echo.json == ["uploaded": "yes"])
        #expect(echo.headers["Content-Length"] == "18")
    }

    @Test("Downloads from /bytes and /stream-bytes land whole at the destination", arguments: ["/bytes/50000", "/stream-bytes/50000"])
    func download(path: String) async throws {
        let directory = try TemporaryDirectory()
        let destination = directory.file("download.bin")
        let result = await send(
            MoyaProvider<HTTPBinTarget>(),
            HTTPBinTarget(
                path,
                task: .downloadParameters(
                    parameters: ["seed": 7], encoding: URLEncoding.queryString, destination: { _, _ in (destination, []) })))
        #expect(try result.get().statusCode == 200)
        let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber
        #expect(size?.intValue == 50_000)
    }

    @Test("A download rejected by validation leaves no file and carries httpbin's answer")
    func rejectedDownload() async throws {
        let directory = try TemporaryDirectory()
        let destination = directory.file("teapot.txt")
        let result = await send(
            MoyaProvider<HTTPBinTarget>(), HTTPBinTarget("/status/418", task: .downloadDestination { _, _ in (destination, []) }, validationType: .successCodes)
        )
        guard case .statusCode(let response)? = result.error else {
            Issue.record("expected statusCode, got \(result)")
            return
        }
        #expect(response.statusCode == 418)
        #expect(String(decoding: response.data, as: UTF8.self).contains("teapot"))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}
