import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPURLResponse.suggestedFilename` of a session's responses is what Apple platforms give,
/// not Linux Foundation's `"Unknown"`, and is always one harmless path component.
@Suite("suggestedFilename, as on Apple platforms")
struct SuggestedFilenameTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test(
        "The Content-Disposition name, else the URL's last path component, else Unknown",
        arguments: [
            ("http://h/files/report.pdf?x=1", nil, "report.pdf"),
            ("http://h/files/a%20b.txt", nil, "a b.txt"),
            ("http://h/", nil, "Unknown"),
            ("http://h", nil, "Unknown"),
            ("http://h/x", "attachment; filename=\"q.zip\"", "q.zip"),
            ("http://h/x", "attachment; filename=plain.txt", "plain.txt"),
            ("http://h/x", "attachment; filename=\"a\\\"b.txt\"", "a\"b.txt"),
            ("http://h/x", "attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
            ("http://h/x", "attachment; filename=\"fallback.txt\"; filename*=UTF-8''pr%C3%A9f%C3%A9r%C3%A9.txt", "préféré.txt"),
            ("http://h/x", "attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
            ("http://h/x", "attachment; filename=\"../../etc/passwd\"", "passwd"),
            ("http://h/x", "attachment; filename=\"..\"", "x"),
            ("http://h/x", "attachment; filename=\"a\\\\b\"", "b"),
            ("http://h/x", "attachment; filename=\"\"", "x"),
            ("http://h/x", "inline", "x"),
            ("http://h/x", "attachment; filename*=UTF-8''%ZZ", "x"),
        ] as [(String, String?, String)])
    func names(url: String, disposition: String?, expected: String) throws {
        let head = disposition.map { ["Content-Disposition": $0] } ?? [:]
        let address = try #require(URL(string: url))
        let response = try #require(TransportHTTPURLResponse(url: address, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: head))
        #expect(response.suggestedFilename == expected)
    }

    @Test("A download destination that uses response.suggestedFilename gets the server's name or the URL's")
    func downloadDestination() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moya-suggested-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination: DownloadDestination = { _, response in
            (directory.appendingPathComponent(response.suggestedFilename ?? "none"), [.createIntermediateDirectories])
        }
        let provider = MoyaProvider<Remote>()
        let named = Remote(
            base, "/response-headers",
            task: .downloadParameters(
                parameters: ["Content-Disposition": "attachment; filename=\"report.csv\""], encoding: URLEncoding.queryString, destination: destination))
        _ = try await provider.request(named)
        _ = try await provider.request(Remote(base, "/bytes/10", task: .downloadDestination(destination)))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["10", "report.csv"])
    }
}
