import Foundation
import Moya
import MoyaTestServer
import MoyaTesting
import Testing

@Suite("Cassettes: the file format")
struct CassetteFileTests {
    @Test("The file is pretty-printed JSON with sorted keys, a version, text bodies as text and binary bodies as base64")
    func format() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let provider = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        let text = try await provider.request(CassetteTarget.post(server.baseURL, "/echo", body: "line one\nline two", contentType: "text/plain"))
        let binary = try await provider.request(CassetteTarget(server.baseURL, "/bytes/300"))
        await server.shutdown()
        let expected = Data((0..<300).map { UInt8($0 % 251) })
        #expect(binary.data == expected)

        let file = try cassetteText(url)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        let interactions = try #require(object["interactions"] as? [[String: Any]])
        #expect(interactions.count == 2)
        let request = try #require(interactions[0]["request"] as? [String: Any])
        #expect(request["method"] as? String == "POST")
        #expect(request["body"] as? [String: String] == ["encoding": "utf8", "content": "line one\nline two"])
        let response = try #require(interactions[1]["response"] as? [String: Any])
        #expect(response["body"] as? [String: String] == ["encoding": "base64", "content": expected.base64EncodedString()])
        #expect(interactions[0]["recordedAt"] is String)
        // Sorted keys, one member per line, readable URLs.
        #expect(file.hasPrefix("{\n  \"interactions\" : [\n"))
        #expect(file.hasSuffix("  \"version\" : 1\n}\n"))
        #expect(file.contains("\"url\" : \"\(server.baseURL.absoluteString)/bytes/300\""))
        #expect(file.firstRange(of: "\"request\"")!.lowerBound < file.firstRange(of: "\"response\"")!.lowerBound)

        // Both bodies replay byte for byte.
        let replaying = try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay)
        #expect(try await replaying.request(CassetteTarget(server.baseURL, "/bytes/300")).data == expected)
        #expect(try await replaying.request(.post(server.baseURL, "/echo", body: "line one\nline two", contentType: "text/plain")).data == text.data)
    }

    @Test("Recording the same exchanges twice writes the same bytes (without dates)")
    func stable() async throws {
        let server = try await TestServer.start()
        var files: [Data] = []
        for _ in 0..<2 {
            let url = temporaryCassetteURL()
            defer { removeCassette(url) }
            let recorder = CassetteRecorder(fileURL: url, recordsDates: false)
            let provider = MoyaProvider<CassetteTarget>(plugins: [recorder])
            _ = try await provider.request(CassetteTarget(server.baseURL, "/json"))
            _ = try await provider.request(CassetteTarget.query(server.baseURL, "/response-headers", ["B": "2", "A": "1"]))
            _ = try await provider.request(CassetteTarget.post(server.baseURL, "/echo", body: #"{"b": 2, "a": 1}"#))
            _ = try await provider.request(CassetteTarget(server.baseURL, "/bytes/64"))
            files.append(try Data(contentsOf: url))
            #expect(!String(decoding: files.last!, as: UTF8.self).contains("recordedAt"))
        }
        await server.shutdown()
        #expect(files[0] == files[1])
        #expect(try Cassette(data: files[0]).interactions.count == 4)
    }

    @Test("The file is complete after every exchange, written without leftovers")
    func writtenAfterEachExchange() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await MockServer.start()
        server.enqueue(.text("one"), .text("two"))
        let recorder = CassetteRecorder(fileURL: url)
        let provider = MoyaProvider<CassetteTarget>(plugins: [recorder])
        #expect(!FileManager.default.fileExists(atPath: url.path))
        _ = try await provider.request(CassetteTarget(server.baseURL, "/one"))
        #expect(try Cassette(contentsOf: url).interactions.map(\.response.body?.content) == ["one"])
        _ = try await provider.request(CassetteTarget(server.baseURL, "/two"))
        #expect(try Cassette(contentsOf: url).interactions.map(\.response.body?.content) == ["one", "two"])
        await server.shutdown()
        let directory = url.deletingLastPathComponent()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cassette.json"])
        #expect(try Cassette(contentsOf: url) == recorder.cassette)
    }

    @Test("Concurrent exchanges are all recorded")
    func concurrent() async throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        let server = try await TestServer.start()
        let provider = try MoyaProvider<CassetteTarget>(cassette: url, mode: .record)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { _ = try await provider.request(CassetteTarget(server.baseURL, "/echo/\(index)")) }
            }
            try await group.waitForAll()
        }
        await server.shutdown()
        let paths = try Cassette(contentsOf: url).interactions.compactMap { URL(string: $0.request.url)?.path }
        #expect(Set(paths) == Set((0..<20).map { "/echo/\($0)" }))
    }

    @Test(
        "A file that is not a cassette fails to load with a clear error",
        arguments: [
            ("not json", "not a JSON object"),
            (#"{"interactions": []}"#, #"no "version" member"#),
            (#"{"version": 0, "interactions": []}"#, "version 0 does not exist"),
            (#"{"version": 1}"#, #"missing member "interactions""#),
            (
                #"{"version": 1, "interactions": [{"request": {"method": "GET", "url": "http://a/", "headers": {}}, "response": {"headers": {}}}]}"#,
                #"interactions[0].response: missing member "status""#
            ),
            (
                #"{"version": 1, "interactions": [{"request": {"method": "GET", "url": "http://a/", "headers": {}}, "response": {"status": "200", "headers": {}}}]}"#,
                "interactions[0].response.status"
            ),
            (
                #"{"version": 1, "interactions": [{"request": {"method": "GET", "url": "http://a/", "headers": {}}, "response": {"status": 200, "headers": {}, "body": {"encoding": "base64", "content": "%%%"}}}]}"#,
                "interactions[0].response.body: content is not valid base64"
            ),
        ]
    )
    func malformed(contents: String, reason: String) throws {
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: url)
        do {
            _ = try Cassette(contentsOf: url)
            Issue.record("\(contents) loaded")
        } catch let error as CassetteError {
            guard case .malformed(let file, let actual) = error else {
                Issue.record("expected malformed, got \(error)")
                return
            }
            #expect(file == url.path)
            #expect(actual.contains(reason), "\(actual)")
            #expect(error.description.hasPrefix("Cassette: \(url.path) is not a valid cassette: "))
        }
        #expect(throws: CassetteError.self) {
            try MoyaProvider<CassetteTarget>(cassette: url, mode: .replay)
        }
    }

    @Test("A file from a newer version fails to load, saying so")
    func newerVersion() throws {
        let data = Data(#"{"version": 2, "interactions": [], "somethingNew": true}"#.utf8)
        #expect(throws: CassetteError.unsupportedVersion(file: "future.json", found: 2, supported: 1)) {
            try Cassette(data: data, name: "future.json")
        }
        #expect(CassetteError.unsupportedVersion(file: "f", found: 2, supported: 1).description.contains("reads versions up to 1"))
    }

    @Test("A cassette made in code round-trips through its file")
    func roundTrip() throws {
        let cassette = Cassette(interactions: [
            CassetteInteraction(
                request: .init(
                    method: "PUT", url: "https://api.example.com/a?x=1", headers: ["Content-Type": "application/octet-stream"],
                    body: CassetteBody(Data([0, 1, 2, 255]))),
                response: .init(status: 204, headers: ["X-Id": "7"]),
                recordedAt: Date(timeIntervalSince1970: 1_750_000_000)
            )
        ])
        let url = temporaryCassetteURL()
        defer { removeCassette(url) }
        try cassette.write(to: url)
        #expect(try Cassette(contentsOf: url) == cassette)
        #expect(cassette.interactions[0].request.body?.encoding == .base64)
        #expect(try cassetteText(url).contains(#""recordedAt" : "2025-06-15T15:06:40Z""#))
    }

    @Test("The mode comes from MOYA_CASSETTE_MODE, in any case, and an unknown mode is an error")
    func modeFromEnvironment() throws {
        #expect(try CassetteMode.fromEnvironment(environment: [:]) == .replay)
        #expect(try CassetteMode.fromEnvironment(default: .recordIfMissing, environment: ["MOYA_CASSETTE_MODE": ""]) == .recordIfMissing)
        #expect(try CassetteMode.fromEnvironment(environment: ["MOYA_CASSETTE_MODE": "record"]) == .record)
        #expect(try CassetteMode.fromEnvironment(environment: ["MOYA_CASSETTE_MODE": "RecordIfMissing"]) == .recordIfMissing)
        #expect(throws: CassetteError.unknownMode(variable: "MOYA_CASSETTE_MODE", value: "recrod")) {
            try CassetteMode.fromEnvironment(environment: ["MOYA_CASSETTE_MODE": "recrod"])
        }
        let missing = temporaryCassetteURL()
        defer { removeCassette(missing) }
        #expect(CassetteMode.recordIfMissing.records(missing))
        #expect(!CassetteMode.replay.records(missing))
        #expect(CassetteMode.record.records(missing))
    }
}
