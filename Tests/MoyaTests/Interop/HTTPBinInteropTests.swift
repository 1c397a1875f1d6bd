import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Interoperability with a server nobody on this project wrote: httpbin (the PyPI package,
/// served by gunicorn on 127.0.0.1). Skipped when it is not running, unless
/// `MOYA_REQUIRE_HTTPBIN=1`, as in CI. See `HTTPBin`.
@Suite("httpbin interoperability", .enabled(HTTPBin.skipMessage, HTTPBin.condition))
struct HTTPBinInteropTests {
    let provider = MoyaProvider<HTTPBinTarget>()
    var base: String { HTTPBin.baseURL.absoluteString }

    @Test("httpbin answers at MOYA_HTTPBIN_URL")
    func reachable() async {
        #expect(await HTTPBin.isReachable(), "httpbin does not answer at \(base); .ci/run starts it, or set MOYA_HTTPBIN_URL")
    }

    // MARK: - The seeds' targets against /anything

    @Test(
        "MyService (seed) against /anything: method, path, query and JSON body as the docs promise",
        arguments: [
            (
                MyService.createUser(firstName: "James", lastName: "Potter"), "POST", "/users", [:] as [String: String],
                ["first_name": "James", "last_name": "Potter"] as [String: String]?
            ),
            (.updateUser(id: 123, firstName: "Harry", lastName: "Potter"), "POST", "/users/123", ["first_name": "Harry", "last_name": "Potter"], nil),
            (.showUser(id: 7), "GET", "/users/7", [:], nil),
            (.zen, "GET", "/zen", [:], nil),
            (.showAccounts, "GET", "/accounts", [:], nil),
        ])
    func myService(target: MyService, method: String, path: String, args: [String: String], json: [String: String]?) async throws {
        let provider = MoyaProvider<MyService>(endpointClosure: rewritingEndpoints([("https://api.myservice.com", base + "/anything")]))
        let echo = try httpbinEcho(of: await send(provider, target))
        #expect(echo.method == method)
        #expect(URL(string: echo.url)?.path == "/anything" + path)
        #expect(echo.args == args)
        #expect(echo.json == json)
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test("GitHub (seed) against /anything: escaped path segments and URL parameters")
    func gitHub() async throws {
        let provider = MoyaProvider<GitHub>(endpointClosure: rewritingEndpoints([("https://api.github.com", base + "/anything")]))
        let profile = try httpbinEcho(of: await send(provider, .userProfile("ash furrow")))
        #expect(profile.url.hasSuffix("/anything/users/ash%20furrow"))
        let repositories = try httpbinEcho(of: await send(provider, .userRepositories("moya")))
        #expect(repositories.args == ["sort": "pushed"])
        let branches = try httpbinEcho(of: await send(provider, .branches("Moya/Moya", true)))
        #expect(branches.args == ["protected": "true"])
        #expect(branches.url.contains("/anything/repos/Moya%2FMoya/branches"))
        let zen = try httpbinEcho(of: await send(provider, .zen))
        #expect(zen.method == "GET")
        #expect(zen.headers["User-Agent"]?.hasSuffix("Moya/\(MoyaInfo.version)") == true)
        #expect(zen.headers["Accept-Language"] != nil)
    }

    // MARK: - Authentication

    @Test("/basic-auth: CredentialsPlugin answers the challenge; wrong or missing credentials get 401")
    func basicAuth() async throws {
        func provider(_ password: String?) -> MoyaProvider<HTTPBinTarget> {
            MoyaProvider(plugins: [CredentialsPlugin { _ in password.map { URLCredential(user: "user", password: $0, persistence: .none) } }])
        }
        let target = HTTPBinTarget("/basic-auth/user/passwd")
        let response = try await send(provider("passwd"), target).get()
        #expect(response.statusCode == 200)
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["authenticated"] as? Bool == true)
        #expect(json["user"] as? String == "user")
        #expect(try await send(provider("wrong"), target).get().statusCode == 401)
        #expect(try await send(provider(nil), target).get().statusCode == 401)
    }

    @Test("/bearer: AccessTokenPlugin, directly and through MultiTarget")
    func bearer() async throws {
        let plugin = AccessTokenPlugin { _ in "eyeAm.AJsoN.weBTOKen" }
        let target = HTTPBinTarget("/bearer", authorizationType: .bearer)
        let direct = try await send(MoyaProvider<HTTPBinTarget>(plugins: [plugin]), target).get()
        #expect(direct.statusCode == 200)
        #expect((try direct.mapJSON() as? [String: Any])?["token"] as? String == "eyeAm.AJsoN.weBTOKen")
        let multi = try await send(MoyaProvider<MultiTarget>(plugins: [plugin]), MultiTarget(target)).get()
        #expect(multi.statusCode == 200)
        let without = try await send(MoyaProvider<HTTPBinTarget>(plugins: [plugin]), HTTPBinTarget("/bearer")).get()
        #expect(without.statusCode == 401)
    }

    @Test("The seeds' YourAPI: per-target credentials, access tokens and an async signing requestClosure")
    func seedAuthentication() async throws {
        let endpoints: (YourAPI) -> Endpoint = rewritingEndpoints([("https://api.yourapi.com", base)])
        let credentials = MoyaProvider<YourAPI>(
            endpointClosure: endpoints,
            plugins: [
                CredentialsPlugin { target -> URLCredential? in
                    switch target {
                    case YourAPI.targetThatNeedsAuthentication:
                        return URLCredential(user: "user", password: "passwd", persistence: .none)
                    default:
                        return nil
                    }
                }
            ])
        #expect(try await send(credentials, .targetThatNeedsAuthentication).get().statusCode == 200)

        let token = "eyeAm.AJsoN.weBTOKen"
        let tokens = MoyaProvider<YourAPI>(endpointClosure: endpoints, plugins: [AccessTokenPlugin { token }])
        #expect(try await send(tokens, .targetThatNeedsBearerAuth).get().statusCode == 200)
        #expect(try httpbinEcho(of: await send(tokens, .targetThatNeedsBasicAuth)).headers["Authorization"] == "Basic eyeAm.AJsoN.weBTOKen")

        let requestClosure = { (endpoint: Endpoint, done: @escaping MoyaProvider.RequestResultClosure) in
            let request = try! endpoint.urlRequest()
            YourAwesomeOAuthProvider.signRequest(
                request,
                completion: { signedRequest in
                    done(.success(signedRequest))
                })
        }
        let signing = MoyaProvider<YourAPI>(endpointClosure: endpoints, requestClosure: requestClosure)
        #expect(try httpbinEcho(of: await send(signing, .targetDoesNotNeedAuth)).headers["Authorization"] == #"OAuth oauth_signature="signed""#)
    }

    // MARK: - Other endpoints

    @Test("/status: codes come back as they are, validation turns them into .statusCode", arguments: [200, 204, 304, 418, 500])
    func status(code: Int) async throws {
        let plain = try await send(provider, HTTPBinTarget("/status/\(code)")).get()
        #expect(plain.statusCode == code)
        let validated = await send(provider, HTTPBinTarget("/status/\(code)", validationType: .successCodes))
        if (200..<300).contains(code) {
            #expect(validated.response?.statusCode == code)
        } else {
            guard case .statusCode(let response)? = validated.error else {
                Issue.record("expected .statusCode for \(code), got \(validated)")
                return
            }
            #expect(response.statusCode == code)
        }
    }

    @Test("/gzip: the body is decompressed")
    func gzip() async throws {
        let response = try await send(provider, HTTPBinTarget("/gzip")).get()
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        let json = try #require(try response.mapJSON() as? [String: Any])
        #expect(json["gzipped"] as? Bool == true)
    }

    @Test("/redirect: relative redirects are followed to the final URL")
    func redirect() async throws {
        let response = try await send(provider, HTTPBinTarget("/redirect/3")).get()
        #expect(response.statusCode == 200)
        #expect(response.response?.url?.path == "/get")
        let absolute = try await send(provider, HTTPBinTarget("/absolute-redirect/2")).get()
        #expect(absolute.response?.url?.path == "/get")
    }

    @Test("/json: mapped with Decodable and key paths")
    func json() async throws {
        struct Slide: Decodable {
            let title: String
            let type: String
        }
        let response = try await send(provider, HTTPBinTarget("/json")).get()
        #expect(try response.mapString(atKeyPath: "slideshow.author") == "Yours Truly")
        let slides = try response.map([Slide].self, atKeyPath: "slideshow.slides")
        #expect(slides.first?.title == "Wake up to WonderWidgets!")
        #expect(slides.count == 2)
    }

    @Test(
        "/post: JSON, form and raw bodies arrive as sent",
        arguments: [
            (Task.requestParameters(parameters: ["name": "Ann", "n": "1"], encoding: JSONEncoding.default), "json"),
            (.requestParameters(parameters: ["name": "Ann", "n": "1"], encoding: URLEncoding.httpBody), "form"),
            (.requestJSONEncodable(["name": "Ann", "n": "1"]), "json"),
            (.requestCompositeParameters(bodyParameters: ["name": "Ann", "n": "1"], bodyEncoding: JSONEncoding.default, urlParameters: ["q": "x y"]), "json"),
        ])
    func post(task: Task, kind: String) async throws {
        let echo = try httpbinEcho(of: await send(provider, HTTPBinTarget("/post", method: .post, task: task)))
        if kind == "json" {
            #expect(echo.json == ["name": "Ann", "n": "1"])
            #expect(echo.headers["Content-Type"] == "application/json")
        } else {
            #expect(echo.form == ["name": "Ann", "n": "1"])
            #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        }
        if case .requestCompositeParameters = task {
            #expect(echo.args == ["q": "x y"])
        }
    }

    // MARK: - Logging and cURL

    @Test("NetworkLoggerPlugin logs a real exchange with httpbin, credentials hidden")
    func logger() async throws {
        let capture = LogCapture()
        let plugins: [PluginType] = [
            AccessTokenPlugin { _ in "s3cret" },
            NetworkLoggerPlugin(configuration: capturing(capture, .verbose)),
        ]
        let provider = MoyaProvider<HTTPBinTarget>(plugins: plugins)
        let target = HTTPBinTarget("/anything/log", method: .post, task: .requestJSONEncodable(["a": "b"]), authorizationType: .bearer)
        #expect(try await send(provider, target).get().statusCode == 200)
        let entries = capture.entries
        #expect(entries.first == "Request|\(base)/anything/log")
        #expect(entries.contains { $0.hasPrefix("Request Headers|") && $0.contains(#""Authorization": "Bearer ***""#) })
        #expect(entries.contains(#"Request Body|{"a":"b"}"#))
        #expect(entries.contains("HTTP Request Method|POST"))
        #expect(entries.contains { $0.hasPrefix("Response|") && $0.contains("{ URL: \(base)/anything/log }") })
        // httpbin echoes the request headers in the body, which the logger does not parse: a
        // body is logged as it is.
        #expect(entries.contains { $0.hasPrefix("Response Body|") && $0.contains(#""url": "\#(base)/anything/log""#) })
        #expect(!entries.contains { $0.hasPrefix("Request") && $0.contains("s3cret") })
    }

    @Test("The cURL description, run by a real shell and curl, sends the same request", .enabled(if: isOnPath("curl"), "curl is not installed"))
    func cURLRoundTrip() async throws {
        let plugin = RecordingPlugin(credential: URLCredential(user: "user", password: "pa$s\"wd", persistence: .none))
        let body = #"{"quote":"\"","dollar":"$HOME","tick":"`id`","slash":"\\"}"#
        let target = HTTPBinTarget(
            "/anything/curl", method: .post, task: .requestData(Data(body.utf8)), headers: ["Content-Type": "application/json", "X-Tricky": "a \"b\" $c"])
        _ = try await send(MoyaProvider<HTTPBinTarget>(plugins: [plugin]), target).get()
        var command = ""
        _ = try #require(plugin.willSendRequests.first).cURLDescription { command = $0 }
        let output = try await runShell("curl -s" + command.dropFirst("$ curl -v".count))
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: output)
        #expect(echo.method == "POST")
        #expect(echo.data == body)
        #expect(echo.headers["X-Tricky"] == "a \"b\" $c")
        #expect(echo.headers["Authorization"] == "Basic " + Data("user:pa$s\"wd".utf8).base64EncodedString())
        #expect(echo.headers["User-Agent"]?.hasSuffix("Moya/\(MoyaInfo.version)") == true)
    }
}
