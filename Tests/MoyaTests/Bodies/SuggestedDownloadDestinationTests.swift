import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Content-Disposition` the server sends, the path it is served at, and the name the file
/// should get.
struct ServedName: Sendable, CustomTestStringConvertible {
    let disposition: String?
    let path: String
    let expected: String

    var testDescription: String { "\(disposition ?? "no header") at \(path)" }
}

private let servedNames: [ServedName] = [
    ServedName(disposition: "attachment; filename=\"annual report.pdf\"", path: "/response-headers/x.bin", expected: "annual report.pdf"),
    ServedName(
        disposition: "attachment; filename*=UTF-8''%E2%82%AC%20rates.pdf; filename=\"rates.pdf\"", path: "/response-headers/x.bin",
        expected: "€ rates.pdf"),
    ServedName(disposition: "Inline; FileName=inline.txt", path: "/response-headers/x.bin", expected: "inline.txt"),
    ServedName(disposition: "attachment; filename*=iso-8859-1''caf%E9.txt", path: "/response-headers/x.bin", expected: "café.txt"),
    ServedName(disposition: nil, path: "/response-headers/files/report v2.pdf", expected: "report v2.pdf"),
    ServedName(disposition: "inline", path: "/response-headers/files/data.csv", expected: "data.csv"),
    ServedName(disposition: "attachment; filename=\"../../etc/passwd\"", path: "/response-headers/x.bin", expected: "passwd"),
    ServedName(disposition: "attachment; filename*=UTF-8''%2Fetc%2Fpasswd", path: "/response-headers/x.bin", expected: "passwd"),
    ServedName(disposition: "attachment; filename=\"C:\\\\x\\\\y\"", path: "/response-headers/x.bin", expected: "y"),
    ServedName(disposition: "attachment; filename*=UTF-8''a%00b%0A.txt", path: "/response-headers/x.bin", expected: "ab.txt"),
    ServedName(disposition: "attachment; filename=\"..\"", path: "/response-headers/fallback.bin", expected: "fallback.bin"),
    // Nothing usable from either source: the path's last segment is only a control character.
    ServedName(disposition: "attachment; filename=\".\"", path: "/response-headers/files/\u{7F}", expected: "download-"),
    // Dot segments in a target's path are resolved before the request is sent: the URL is
    // `/response-headers/`, whose last segment names the file.
    ServedName(disposition: "attachment; filename=\".\"", path: "/response-headers/files/..", expected: "response-headers"),
]

@Suite("Suggested download destinations against the in-process server")
struct SuggestedDownloadDestinationTests: DownloadSuite {
    let fixture: DownloadFixture

    init() async throws {
        fixture = try await DownloadFixture()
    }

    /// Downloads from `/response-headers...` with `disposition` in the response.
    private func download(_ path: String, disposition: String?, destination: @escaping DownloadDestination) async -> Result<Moya.Response, MoyaError> {
        let parameters: [String: Any] = disposition.map { ["Content-Disposition": $0] } ?? [:]
        return await send(
            provider,
            Remote(
                base, path,
                task: .downloadParameters(
                    parameters: parameters, encoding: URLEncoding.queryString, destination: destination)))
    }

    /// The names directly in `url`, sorted.
    private func names(in url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    private func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    @Test("The file lands in the directory, named from Content-Disposition or the URL", arguments: servedNames)
    func suggestedName(_ served: ServedName) async throws {
        let downloads = directory.file("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let result = await download(
            served.path, disposition: served.disposition,
            destination: DownloadRequest.suggestedDownloadDestination(in: downloads))
        #expect(throws: Never.self) { try result.get() }
        let stored = names(in: downloads)
        #expect(stored.count == 1, "\(stored)")
        let name = try #require(stored.first)
        if served.expected == "download-" {
            #expect(name.hasPrefix("download-") && UUID(uuidString: String(name.dropFirst(9))) != nil, "\(name)")
        } else {
            #expect(name == served.expected)
        }
        #expect(try Data(contentsOf: downloads.appendingPathComponent(name)) == Data("response-headers".utf8))
        #expect(names(in: directory.url) == ["downloads"], "nothing is written outside the destination directory")
        #expect(staging.contents.isEmpty)
    }

    @Test("filename=\"..\" with .removePreviousFile replaces nothing but the one file it names")
    func dotDotWithRemovePreviousFile() async throws {
        let downloads = directory.file("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let sibling = downloads.appendingPathComponent("sibling.txt")
        let outside = directory.file("outside.txt")
        try Data("sibling".utf8).write(to: sibling)
        try Data("outside".utf8).write(to: outside)
        let previous = downloads.appendingPathComponent("report.bin")
        try Data("previous".utf8).write(to: previous)

        let destination = DownloadRequest.suggestedDownloadDestination(in: downloads, options: [.removePreviousFile])
        let result = await download("/response-headers/report.bin", disposition: "attachment; filename=\"..\"", destination: destination)

        #expect(throws: Never.self) { try result.get() }
        #expect(isDirectory(downloads))
        #expect(isDirectory(directory.url))
        #expect(try Data(contentsOf: sibling) == Data("sibling".utf8))
        #expect(try Data(contentsOf: outside) == Data("outside".utf8))
        // The name fell back to the URL's, and that one file was replaced.
        #expect(try Data(contentsOf: previous) == Data("response-headers".utf8))
        #expect(names(in: downloads) == ["report.bin", "sibling.txt"])
    }

    @Test("The public suggested destination keeps a '..' name inside the search-path directory")
    func publicDestinationStaysInDirectory() throws {
        let destination = DownloadRequest.suggestedDownloadDestination(for: .documentDirectory, in: .userDomainMask, options: [.removePreviousFile])
        let documents = try #require(FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first)
        for disposition in ["attachment; filename=\"..\"", "attachment; filename=\"../../etc/passwd\"", "attachment; filename*=UTF-8''%2E%2E"] {
            let response = try #require(
                HTTPURLResponse(
                    url: URL(string: "https://example.com/")!, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Content-Disposition": disposition]))
            let (url, options) = destination(URL(fileURLWithPath: "/tmp/x.tmp"), response)
            #expect(url.deletingLastPathComponent().standardizedFileURL.path == documents.standardizedFileURL.path, "\(disposition): \(url.path)")
            #expect(url.lastPathComponent != "..")
            #expect(url.lastPathComponent != "Unknown")
            #expect(options == .removePreviousFile)
        }
    }
}
