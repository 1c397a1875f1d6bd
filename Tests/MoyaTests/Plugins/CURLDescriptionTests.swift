import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cURL description a plugin gets in `willSend`.
private func cURL(of request: RequestType) -> String {
    var description = ""
    _ = request.cURLDescription { description = $0 }
    return description
}

@Suite("RequestType.cURLDescription")
struct CURLDescriptionTests {
    @Test("Stubbed requests: method, prepared headers, session headers, body and URL, one option per line")
    func stubbed() async throws {
        let plugin = RecordingPlugin(header: ("X-Prepared", "1"))
        let target = Remote(
            URL(string: "https://api.example.com")!, "/users", method: .post,
            task: .requestJSONEncodable(["name": "Ann"]))
        _ = await sendWithPlugins(target, plugins: [plugin], stub: true)
        let command = cURL(of: try #require(plugin.willSendRequests.first))
        let lines = command.components(separatedBy: " \\\n\t")
        #expect(lines.first == "$ curl -v")
        #expect(lines.dropFirst().first == "-X POST")
        #expect(lines.contains(#"-H "X-Prepared: 1""#))
        #expect(lines.contains(#"-H "Content-Type: application/json""#))
        #expect(lines.contains { $0.hasPrefix(#"-H "User-Agent: "#) })
        #expect(lines.contains(#"-d "{\"name\":\"Ann\"}""#))
        #expect(lines.last == #""https://api.example.com/users""#)
    }

    @Test("Real requests: the credential is written as -u, headers sorted by name, Cookie left out")
    func real() async throws {
        let server = try await TestServer.start()
        let plugin = RecordingPlugin(credential: URLCredential(user: "user", password: "passwd", persistence: .none))
        let target = Remote(server.baseURL, "/basic-auth/user/passwd", headers: ["Cookie": "a=b", "X-B": "2", "x-a": "1"])
        let result = await sendWithPlugins(target, plugins: [plugin])
        #expect(result.response?.statusCode == 200)
        let command = cURL(of: try #require(plugin.willSendRequests.first))
        let lines = command.components(separatedBy: " \\\n\t")
        #expect(lines[2] == #"-u "user:passwd""#)
        let headerLines = lines.filter { $0.hasPrefix("-H ") }
        #expect(headerLines == headerLines.sorted { $0.lowercased() < $1.lowercased() })
        #expect(headerLines.contains(#"-H "x-a: 1""#))
        #expect(!command.contains("Cookie"))
        #expect(lines.last == "\"\(server.baseURL.absoluteString)/basic-auth/user/passwd\"")
        await server.shutdown()
    }

    @Test("A request without a URL host or method cannot be described")
    func invalid() {
        let wrapper = RequestTypeWrapper(request: nil, sessionHeaders: [:], credentials: RequestCredentialStore())
        #expect(cURL(of: wrapper) == "$ curl command could not be created")
        let noHost = RequestTypeWrapper(request: URLRequest(url: URL(string: "file:///tmp/x")!), sessionHeaders: [:], credentials: RequestCredentialStore())
        #expect(cURL(of: noHost) == "$ curl command could not be created")
    }

    @Test("A POSIX shell reads back exactly the arguments: quotes, dollars, backticks, backslashes, newlines")
    func shellQuoting() async throws {
        let body = "{\"q\": \"$HOME `id` \\\\ it's\"}\nline 2 $(whoami) !"
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/a%20b?x=$y&z=1")))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("va\"lue $PATH `x`", forHTTPHeaderField: "X-Tricky")
        let credential = URLCredential(user: "ann", password: "p\"a$s`s\\", persistence: .none)
        let command = CURLCommand.describe(request: request, sessionHeaders: ["User-Agent": "Moya"], credential: credential)
        let arguments = try await shellArguments(ofCURL: command)
        #expect(
            arguments == [
                "-v",
                "-X", "POST",
                "-u", "ann:p\"a$s`s\\",
                "-H", "User-Agent: Moya",
                "-H", "X-Tricky: va\"lue $PATH `x`",
                "-d", body,
                try #require(request.url).absoluteString,
            ])
    }
}
