import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Dot segments in a target's URL are resolved as RFC 3986, section 5.2.4 says, whichever way
/// the URL is built.
@Suite("Dot segments in target paths")
struct DotSegmentTests {
    struct Target: TargetType {
        var baseURL: URL
        var path: String
        var method: Moya.Method { .get }
        var task: Task { .requestPlain }
        var headers: [String: String]? { nil }
    }

    /// `remove_dot_segments` as RFC 3986, section 5.2.4 writes it, step by step, on strings.
    static func reference(_ path: String) -> String {
        var input = path
        var output = ""
        func removeLastSegment() {
            if let slash = output.lastIndex(of: "/") {
                output.removeSubrange(slash...)
            } else {
                output = ""
            }
        }
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input.removeFirst(3)
            } else if input.hasPrefix("./") {
                input.removeFirst(2)
            } else if input.hasPrefix("/./") {
                input.removeFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input.removeFirst(3)
                removeLastSegment()
            } else if input == "/.." {
                input = "/"
                removeLastSegment()
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output += input[..<end]
                input.removeSubrange(..<end)
            }
        }
        return output
    }

    static let cases: [(base: String, path: String, expected: String)] = [
        ("https://api.example.com/v1", "/users/../admin", "https://api.example.com/v1/admin"),
        ("https://api.example.com/v1", "/../../admin", "https://api.example.com/admin"),
        ("https://api.example.com/v1/", "../admin", "https://api.example.com/admin"),
        ("https://api.example.com/v1", "./users/./42", "https://api.example.com/v1/users/42"),
        ("https://api.example.com/v1", "/users/..", "https://api.example.com/v1/"),
        ("https://api.example.com/v1", "/users/.", "https://api.example.com/v1/users/"),
        ("https://api.example.com/v1", "/..", "https://api.example.com/"),
        ("https://api.example.com", "/a/./b/../c", "https://api.example.com/a/c"),
        ("https://api.example.com/v1", "/a//../b", "https://api.example.com/v1/a/b"),
        ("https://api.example.com/v1", "/a b/../c d", "https://api.example.com/v1/c%20d"),
        ("https://api.example.com/a/../v1", "/users", "https://api.example.com/v1/users"),
        // Not dot segments: kept as they are.
        // (A `%` in a target's path is data, escaped as `%25`; in the base URL it is an escape.)
        ("https://api.example.com/v1", "/%2E%2E/admin", "https://api.example.com/v1/%252E%252E/admin"),
        ("https://api.example.com/%2E%2E/v1", "/x", "https://api.example.com/%2E%2E/v1/x"),
        ("https://api.example.com/v1/%2e", "/admin", "https://api.example.com/v1/%2e/admin"),
        ("https://api.example.com/v1", "/.well-known/x", "https://api.example.com/v1/.well-known/x"),
        ("https://api.example.com/v1", "/..x/.y/...", "https://api.example.com/v1/..x/.y/..."),
        ("https://api.example.com/v1", "/a.b/c..", "https://api.example.com/v1/a.b/c.."),
        // A base URL the fast path does not write (a query): resolved all the same.
        ("https://api.example.com/v1?key=1", "/users/../admin", "https://api.example.com/v1/admin?key=1"),
        ("https://u:p@api.example.com:8443/v1", "/../x", "https://u:p@api.example.com:8443/x"),
    ]

    @Test(
        "URL(target:) and the default endpoint resolve dot segments, never above the root, and keep encoded dots",
        arguments: cases.indices)
    func resolved(index: Int) throws {
        let (base, path, expected) = Self.cases[index]
        let target = Target(baseURL: try #require(URL(string: base)), path: path)
        #expect(URL(target: target).absoluteString == expected, "\(base) + \(path)")
        #expect(MoyaProvider<Target>.defaultEndpointMapping(for: target).url == expected, "\(base) + \(path)")
        #expect(try MoyaProvider<Target>.defaultEndpointMapping(for: target).urlRequest().url?.absoluteString == expected)
    }

    @Test("The in-place removal is RFC 3986's remove_dot_segments")
    func matchesReference() async {
        let segments = ["", ".", "..", "a", "b", "...", ".a", "%2E"]
        var paths: [String] = []
        // Every absolute path of up to four of these segments.
        func build(_ prefix: String, depth: Int) {
            paths.append(prefix.isEmpty ? "/" : prefix)
            guard depth < 4 else { return }
            for segment in segments {
                build(prefix + "/" + segment, depth: depth + 1)
            }
        }
        build("", depth: 0)
        for (index, path) in paths.enumerated() {
            await yieldNow(every: 256, index)
            #expect(DotSegments.removing(from: path) == Self.reference(path), "\(path)")
            let hasDotSegment = path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
            #expect(DotSegments.contains(in: path) == hasDotSegment, "\(path)")
        }
    }

    @Test("The server receives the resolved path")
    func sentResolved() async throws {
        let server = try await TestServer.start()
        let provider = MoyaProvider<Remote>()
        let base = server.baseURL.appendingPathComponent("v1")
        let result = await send(provider, Remote(base, "/users/../../echo/admin"))
        #expect(try echo(of: result).path == "/echo/admin")
        #expect(server.receivedRequests.map(\.uri) == ["/echo/admin"])
        await server.shutdown()
    }
}
